import Foundation

/// A document file open for reading or writing: the snapshot plus the journal
/// of saves, and the blob folder beside it.
///
/// Writers share a document (`Document+Sharing.swift`): each holds the file's
/// advisory lock only for a turn (a save, the last step of a compaction) and reads
/// what the others appended before it writes; a read-only document follows them
/// too. The documents of a group (`DocumentGroup`) are locked for their life
/// instead, so a second writer of one gets `DocumentError.locked`. Every method is
/// serialized by the document's own lock; the store calls `append` from its
/// commit path, inside a turn.
public final class Document: @unchecked Sendable {
    public let path: String
    public let isReadOnly: Bool
    /// The document's store identifier, which every snapshot keeps (format 3), so
    /// `PersistentIdentifier`s outlive the process. A document written by an older
    /// build gets one when a writable open rewrites it; opened read-only it gets a
    /// new one each time (nothing is written).
    public let storeIdentifier: UUID
    /// The version of the application's schema the document records (format 3.1):
    /// the version a migration plan brought it to. Every compaction writes it again.
    public let schemaVersion: SchemaVersionStamp?
    public var durability: Durability {
        get { lock.withLock { _durability } }
        set { lock.withLock { _durability = newValue } }
    }
    /// When a save compacts: once the journal is longer than `ratio` × the
    /// snapshot and longer than `minimumJournalBytes`.
    public struct CompactionPolicy: Hashable, Sendable {
        public var ratio: Double
        public var minimumJournalBytes: Int
        public init(ratio: Double = 1.0, minimumJournalBytes: Int = 4 << 20) {
            self.ratio = ratio
            self.minimumJournalBytes = minimumJournalBytes
        }
    }

    public var compactionPolicy: CompactionPolicy {
        get { lock.withLock { _compactionPolicy } }
        set { lock.withLock { _compactionPolicy = newValue } }
    }
    private var _compactionPolicy = CompactionPolicy()
    /// The generation of the last frame or snapshot written: the next append must
    /// be one more, so a store out of step with its file is an error, not damage.
    var generation: UInt64
    /// A compaction renamed its file over the document but could not sync the
    /// folder: the next append syncs it before it acknowledges.
    var directoryNeedsSync = false
    /// A failed append could not be cut back off the file: appending again could
    /// leave its remains after a shorter frame, so saves stop until a reopen.
    var broken: DocumentError?
    /// The file length when a compaction last failed: saves retry only once the
    /// journal has grown by half again, not on every save.
    var compactionFailedAt: Int?
    /// Where the last append began and the generation before it (`retractAppend`).
    var lastAppend: (start: Int, generation: UInt64)?
    /// The compaction running beside the saves (`compactInBackground`), if any.
    var running: BackgroundCompaction?
    /// How many background compactions began: each one's `number`.
    var compactionsBegun: UInt64 = 0
    /// Entered while a background compaction runs: what `close`, `erase` and a
    /// compaction on demand wait for.
    let compactions = DispatchGroup()
    /// Whether writers share the file (`Document+Sharing.swift`): the lock is taken
    /// for a turn (a save, a compaction's last step), not for the document's life.
    /// Every writable single document shares; the documents of a group do not.
    public internal(set) var isShared = false
    /// The schema and format other writers' frames are read with while this document
    /// follows them; nil when it does not (a group's document, or a read-only one
    /// whose file orders its entities otherwise).
    var following: (schema: StoreSchema, formatMajor: Int)?
    /// What other writers recorded that the store has not taken yet.
    var pending: OtherSaves?
    /// Why following stopped (the file was deleted, or replaced by another
    /// document): fetches keep the last state, saves throw it.
    var followFailure: DocumentError?
    /// Serializes this process's turns (saves, a compaction's last step), which share
    /// one open file description and so one `flock`. Taken before `lock`.
    let turnLock = NSLock()
    /// Whether this process holds its turn (`beginTurn` to `endTurn`).
    var turnHeld = false
    /// Guards `look`, what a fetch's check reads without `lock`.
    let lookLock = NSLock()
    var look = Look()
    /// Whether `refreshLook` must read the file's status anew (the file or its
    /// length changed in a way no look examined).
    var lookNeedsStatus = false
    /// The last `tailCheckBytes` bytes before `length`, as this document wrote or
    /// read them: a look trusts the frames it read only while they are still there.
    var tailCheck: [UInt8] = []
    /// Files a look without the turn moved away from, closed by the next turn.
    var retired: [DocumentFile] = []
    /// This process's frames `append` wrote with durability `.full` that no fsync
    /// is known to cover yet (group commit, `Document+GroupCommit.swift`).
    var unsynced: UnsyncedFrames?
    /// Guards who leads the next group commit fsync (`syncing`), the count, and the
    /// files' `syncedEnd` and `syncFailure`. Taken after `lock`, never before it.
    let syncCondition = NSCondition()
    var syncing = false
    var journalSyncCount = 0
    /// The tests' seam before a group commit's fsync (`_syncWillBegin`).
    var syncWillBegin: (@Sendable () -> Void)?
    /// The tests' seam after a follower read its file whole (`_rereadDidRead`).
    var rereadDidRead: (@Sendable () -> Void)?
    /// Whether appends may skip generations: set for the documents of a group,
    /// whose frames then name their predecessor (`CommitRecord.previous`).
    public internal(set) var generationsMaySkip = false

    /// Notes a failed compaction (the journal stays as it was, still complete).
    public func compactionFailed() {
        lock.withLock { compactionFailedAt = length }
    }

    private var _durability: Durability
    var file: DocumentFile?
    /// Where intact content ends: the next frame goes here.
    var length: Int
    var _snapshotLength: Int
    var _journalFrames: Int
    let blobs: BlobStore
    /// The blobs the file (snapshot and journal) refers to: compaction may delete any
    /// other blob before it writes, which frees the space a full disk needs.
    var fileBlobs: Set<String>
    let lock = NSLock()
    /// Where compactions are counted, once the container attached them (`attach`).
    var metrics: StoreMetrics?
    /// Whether the open dropped a torn last save: a recovery, counted at `attach`.
    var recoveredTornTail = false

    private init(path: String, file: DocumentFile?, readOnly: Bool, contents: DocumentReader.Contents, durability: Durability) {
        self.path = path
        self.file = file
        self.isReadOnly = readOnly
        self._durability = durability
        self.length = contents.validLength
        self.generation = contents.version.generation
        self._snapshotLength = contents.snapshotLength
        self._journalFrames = contents.journalFrames
        self.blobs = BlobStore(documentPath: path)
        self.fileBlobs = contents.blobNames
        self.storeIdentifier = contents.storeIdentifier ?? UUID()
        self.schemaVersion = contents.schemaVersion
    }

    deinit { file?.close() }

    /// Bytes of the header and snapshot.
    public var snapshotLength: Int { lock.withLock { _snapshotLength } }
    /// Bytes of journal frames after the snapshot.
    public var journalLength: Int { lock.withLock { length - _snapshotLength } }
    public var journalFrames: Int { lock.withLock { _journalFrames } }

    /// Opens the document at `path`, creating an empty one with `schema` if there
    /// is none (unless read-only), and returns it with the store it holds: both
    /// phases of `Opening` at once.
    ///
    /// A torn last frame is dropped (and, when writable, cut from the file). Any
    /// other damage throws, and the file is left as it was.
    ///
    /// With `migrating` hints, a document of another schema is migrated to
    /// `schema` (`SchemaMigration`): in memory when read-only, else rewritten by a
    /// compaction before anything else, so a crash leaves the old document or the
    /// migrated one.
    ///
    /// `generationsMaySkip` opens it as one of a group's documents
    /// (`generationsMaySkip`): an older one is rewritten as format 4.1 first.
    /// `keptElsewhere` names the entities other documents of the group keep, with
    /// where: a file that stores one of them is refused, untouched. A writable
    /// document is shared with other writers (`isShared`) unless it is a group's or
    /// `exclusive` (a `ModelDocument`, which rewrites the file from its working
    /// copy): then any other writer gets `.locked`, and it gets `.locked` while
    /// another writer has the file. `progress` hears the bytes read.
    public static func open(
        path: String, schema: StoreSchema, readOnly: Bool = false, durability: Durability = .full,
        migrating hints: MigrationHints? = nil, generationsMaySkip: Bool = false, keptElsewhere: [String: String] = [:],
        exclusive: Bool = false, progress: DocumentProgress = { _, _ in }
    ) throws(DocumentError) -> (Document, StoreVersion) {
        try Opening.read(
            path: path, schema: schema, readOnly: readOnly, durability: durability, migrating: hints,
            generationsMaySkip: generationsMaySkip, keptElsewhere: keptElsewhere, exclusive: exclusive, progress: progress
        ).finish()
    }

    /// A document being opened, in two phases, so that whoever migrates its data
    /// (a migration plan, in the API) does it between them, with no call from the
    /// engine back into its caller:
    ///
    /// 1. `read` reads the file and, when writable, claims it and takes its lock (a
    ///    sharing writer whose open rewrites nothing reads without the lock, and
    ///    `finish` takes a turn to read what others appended meanwhile); it writes
    ///    nothing but a new empty document where there was none. `contents` is what
    ///    the file holds.
    /// 2. `finish` makes the document: it cuts a torn tail (keeping the bytes
    ///    beside it) or rewrites the file by a compaction when it needs one, which
    ///    `finish(migratedTo:recording:)` asks for when the caller migrated. A crash
    ///    leaves the old document or the new one.
    ///
    /// An opening dropped before `finish` releases the lock and leaves the file as
    /// it was.
    public final class Opening {
        /// What the file holds, as `read` was asked to read it.
        public private(set) var contents: DocumentReader.Contents
        let path: String
        let readOnly: Bool
        let durability: Durability
        let generationsMaySkip: Bool
        /// Whether the writer shares the document (`Document.isShared`).
        let sharing: Bool
        /// Whether `read` read the file without its lock (a sharing writer's open
        /// that rewrites nothing): `finish` takes a turn to catch up.
        let unlocked: Bool
        /// The open file: claimed when writable, and locked unless `unlocked`.
        let file: DocumentFile?
        /// The file's length when read: bytes past `contents.validLength` are a torn tail.
        let tail: [UInt8]

        private init(
            contents: DocumentReader.Contents, path: String, readOnly: Bool, durability: Durability,
            generationsMaySkip: Bool, sharing: Bool, file: DocumentFile?, tail: [UInt8], unlocked: Bool = false
        ) {
            self.sharing = sharing
            self.unlocked = unlocked
            self.contents = contents
            self.path = path
            self.readOnly = readOnly
            self.durability = durability
            self.generationsMaySkip = generationsMaySkip
            self.file = file
            self.tail = tail
        }

        /// Phase one: reads the document at `path`, locking it unless `readOnly`, and
        /// creating an empty one of `schema` (recording `creatingAt`) when there is
        /// none and it may write.
        ///
        /// With `asStored`, `contents` holds the document's data in its own schema and
        /// the schema version it records, for a caller that migrates it itself;
        /// otherwise in `schema` (with `migrating` hints, migrated to it;
        /// `DocumentReader.read` says how), and a document of another schema throws
        /// `schemaMismatch`.
        public static func read(
            path: String, schema: StoreSchema, readOnly: Bool = false, durability: Durability = .full,
            migrating hints: MigrationHints? = nil, asStored: Bool = false, creatingAt stamp: SchemaVersionStamp? = nil,
            generationsMaySkip: Bool = false, keptElsewhere: [String: String] = [:], exclusive: Bool = false,
            progress: DocumentProgress = { _, _ in }
        ) throws(DocumentError) -> Opening {
            func refuseEntitiesKeptElsewhere(_ contents: DocumentReader.Contents) throws(DocumentError) {
                for entity in contents.schema.entities where schema.entityIndex(named: entity.name) == nil {
                    guard let place = keptElsewhere[entity.name] else { continue }
                    throw .schemaMismatch(
                        path: path, reason: "it stores entity \(entity.name), which this container keeps \(place)")
                }
            }
            let expected = asStored ? nil : schema
            let hints = asStored ? nil : hints
            if readOnly {
                // The descriptor stays open: a reader follows later saves through it.
                let file = try DocumentFile.open(path, writable: false)
                let contents = try DocumentReader.read(
                    bytes: try FileBytes(file), path: path, expected: expected, blobs: .load, migrating: hints, progress: progress)
                try refuseEntitiesKeptElsewhere(contents)
                return Opening(
                    contents: contents, path: path, readOnly: true, durability: durability,
                    generationsMaySkip: generationsMaySkip, sharing: false, file: file, tail: [])
            }
            let sharing = !generationsMaySkip && !exclusive
            for _ in 0..<8 {
                let file: DocumentFile
                do {
                    file = try DocumentFile.open(path, writable: true)
                } catch .notFound {
                    try create(path: path, schema: schema, schemaVersion: stamp, formatMinor: generationsMaySkip ? 1 : 0)
                    continue
                }
                // The claim answers within a quarter of a second when a writer that holds
                // the document alone (or, for one that wants it alone, any writer) has it;
                // the lock then waits for a sharing writer's turn.
                try file.claim(sharing ? .shared : .exclusive)
                // A sharing writer reads without the lock, so the others go on saving while
                // it reads (seconds, for a large document); `finish` takes a turn and reads
                // what they appended meanwhile. An open that rewrites the file (a
                // migration, a drifted schema, an older format) reads under the lock, so
                // no frame of the old schema can follow what it read.
                // (A read that fails here, say a blob another writer's compaction just
                // collected, is tried again under the lock.) Every read takes the file a
                // frame at a time (`FileBytes`), never whole beside the store it builds.
                if sharing, !asStored, let bytes = try? FileBytes(file),
                   let contents = try? DocumentReader.read(
                       bytes: bytes, path: path, expected: expected, blobs: .load, migrating: hints, progress: progress),
                   !contents.needsRewrite, contents.formatMajor == DocumentFormat.major,
                   !DocumentFormat.isNewer(major: contents.formatMajor, minor: contents.formatMinor) {
                    try refuseEntitiesKeptElsewhere(contents)
                    return Opening(
                        contents: contents, path: path, readOnly: false, durability: durability,
                        generationsMaySkip: generationsMaySkip, sharing: true, file: file, tail: [], unlocked: true)
                }
                if sharing {
                    try file.lockForTurn(patience: DocumentFile.turnPatience)
                } else {
                    try file.lockExclusively()
                }
                // A compaction elsewhere may have renamed a new file over the path meanwhile.
                guard file.isStillAtPath else {
                    file.close()
                    continue
                }
                let bytes = try FileBytes(file)
                let contents = try DocumentReader.read(
                    bytes: bytes, path: path, expected: expected, blobs: .load, migrating: hints, progress: progress)
                guard !DocumentFormat.isNewer(major: contents.formatMajor, minor: contents.formatMinor) else {
                    throw .unsupportedFormat(path: path, major: contents.formatMajor, minor: contents.formatMinor)
                }
                try refuseEntitiesKeptElsewhere(contents)
                return Opening(
                    contents: contents, path: path, readOnly: false, durability: durability,
                    generationsMaySkip: generationsMaySkip, sharing: sharing, file: file,
                    tail: contents.validLength < bytes.count
                        ? try bytes.bytes(contents.validLength..<bytes.count) : [])
            }
            throw .locked(path: path)
        }

        /// Phase two, for a caller that migrated the data: the document holds
        /// `migrated` (when not nil; else what it read) and records `stamp`, and is
        /// rewritten when either changed anything.
        public func finish(migratedTo migrated: StoreVersion?, recording stamp: SchemaVersionStamp?) throws(DocumentError) -> (Document, StoreVersion) {
            if let migrated {
                contents.version = migrated
                contents.needsRewrite = true
            }
            if contents.schemaVersion != stamp {
                contents.schemaVersion = stamp
                contents.needsRewrite = true
            }
            return try finish()
        }

        /// Phase two: the document, open, with the version it holds.
        public func finish() throws(DocumentError) -> (Document, StoreVersion) {
            let document = Document(path: path, file: file, readOnly: readOnly, contents: contents, durability: durability)
            document.generationsMaySkip = generationsMaySkip
            if sharing || readOnly && !generationsMaySkip && !contents.needsRewrite {
                // (A writer rewrites a file of another entity order below; a reader of
                // one would have to map every frame, and stays with what it read.)
                document.following = (contents.schema, readOnly ? contents.formatMajor : DocumentFormat.major)
                if let file {
                    // What the first look checks is still there; it examines the file
                    // (no modification time matches the one given), as every later one.
                    document.lock.withLock {
                        document.tailCheck = (try? file.read(
                            at: contents.validLength - Document.tailCheckBytes, count: Document.tailCheckBytes)) ?? []
                        document.refreshLook(examined: .init(size: contents.validLength, links: 1, modified: timespec()))
                    }
                }
            }
            guard let file, !readOnly else { return (document, contents.version) }
            document.isShared = sharing
            if unlocked { return try document.finishUnlockedOpening(contents.version, needsRewrite: contents.needsRewrite) }
            defer {
                // Others take turns from now on.
                if document.isShared { document.releaseOpeningLock() }
            }
            if !tail.isEmpty {
                document.recoveredTornTail = true
                // Keep what is cut off beside the document, synced, before cutting it:
                // a checksum failure in a whole last frame may be damage, not a torn write.
                try keepTornTail(tail, of: path, at: contents.validLength)
                // (Cut before a rewrite too: a shared document's compaction reads the
                // file's end in its turn, and would keep the tail a second time.)
                try file.truncate(to: contents.validLength)
                try file.sync()
            }
            if contents.needsRewrite || contents.formatMajor < DocumentFormat.major
                || (generationsMaySkip && contents.formatMinor < DocumentFormat.minor) {
                // Journal frames name entities and slots by position: put the file in the
                // application's order, or its migrated schema, first.
                // An older format is converted the same way, once (so a document without a
                // store identifier gets one, and one without history a place for it): compaction writes a new file beside it and
                // renames it over, so a crash keeps one of the two.
                try document.compact(contents.version)
            }
            removeLeftovers(of: path)
            return (document, contents.version)
        }
    }

    /// Writes the bytes a writable open drops to `<document>.torn-<offset>-<time>`
    /// (`sideName` shortens a long document name) and syncs them; all-zero tails
    /// (space a crash left unwritten) are not kept.
    static func keepTornTail(_ tail: [UInt8], of path: String, at offset: Int) throws(DocumentError) {
        guard tail.contains(where: { $0 != 0 }) else { return }
        let url = URL(fileURLWithPath: path)
        let keep = url.deletingLastPathComponent().appendingPathComponent(
            "\(sideName(of: url.lastPathComponent)).torn-\(offset)-\(Int(Date().timeIntervalSince1970))").path
        DocumentFile.remove(keep)
        let file = try DocumentFile.open(keep, writable: true, create: true)
        defer { file.close() }
        try file.write(tail, at: 0)
        try file.sync()
        try DocumentFile.syncDirectory(directory(of: path))
    }

    /// Writes an empty document; fails quietly if another process created one first.
    private static func create(
        path: String, schema: StoreSchema, schemaVersion: SchemaVersionStamp?, formatMinor: Int
    ) throws(DocumentError) {
        let temporary = temporaryPath(for: path, purpose: "create")
        let (file, _, _) = try writeSnapshot(
            StoreVersion(schema: schema), identifier: UUID(), schemaVersion: schemaVersion, to: temporary,
            blobs: BlobStore(documentPath: path), formatMinor: formatMinor)
        file.close()
        defer { DocumentFile.remove(temporary) }
        // link, unlike rename, never replaces a document that appeared meanwhile.
        if DocumentFile.link(temporary, path) != 0, errno != EEXIST {
            throw .io(operation: "link", path: path, errno: errno)
        }
        try DocumentFile.syncDirectory(directory(of: path))
    }

    // MARK: Saving

    /// Appends one journal frame for `record`, after writing and syncing the
    /// blobs it refers to. On failure the file is cut back to where it was.
    /// - Complexity: O(size of the record)
    /// With durability `.full` the frame is not synced yet: the caller waits for the
    /// `PendingSync` it returns (`waitUntilDurable`) before acknowledging the save.
    public func append(_ record: CommitRecord, schema: StoreSchema) throws(DocumentError) -> PendingSync? {
        try locked { () throws(DocumentError) -> PendingSync? in
            let file = try writableFile()
            var record = record
            if record.generation != generation + 1 {
                // A group's document journals only the saves that touch it: its frame
                // names the one before instead (format 4.1).
                guard generationsMaySkip, record.generation > generation else {
                    throw .io(operation: "appending generation \(record.generation) after \(generation)", path: path, errno: EINVAL)
                }
                record.previous = generation
            }
            if directoryNeedsSync {
                try DocumentFile.syncDirectory(Self.directory(of: path))
                directoryNeedsSync = false
            }
            // Blobs this append created that no earlier frame names: a failed append
            // removes them again, so a full disk stays no fuller than it was.
            var created: [String] = []
            // Whether any blob file was written (new, or a damaged one replaced): the
            // folder is synced before the frame then.
            var wroteBlobs = false
            var writer = ByteWriter()
            let frame: [UInt8]
            do throws(DocumentError) {
                try writer.commit(record, schema: schema) { (data: Data) throws(DocumentError) in
                    let reference = BlobStore.reference(for: data)
                    let new = !fileBlobs.contains(reference.name)
                    // (Counted before the file is written: a blob of a failed append that
                    // cannot be removed is kept until the next compaction, never deleted
                    // under a frame.)
                    fileBlobs.insert(reference.name)
                    // The file a running compaction writes keeps this frame too.
                    running?.appendedBlobs.insert(reference.name)
                    if try blobs.store(data, as: reference) {
                        wroteBlobs = true
                        if new { created.append(reference.name) }
                    }
                    return reference
                }
                if wroteBlobs { try blobs.syncDirectory() }
                frame = try Frame.encode(kind: .commit, payload: writer.bytes, level: Zstd.journalLevel)
            } catch {
                forget(created)
                throw error
            }
            do throws(DocumentError) {
                try file.write(frame, at: length)
            } catch {
                cutBack(file, to: length, forgetting: created)
                throw error
            }
            var pendingSync: PendingSync?
            if _durability == .full, !generationsMaySkip {
                // Synced after the turn by the first fsync that begins after this write
                // (group commit): the next save appends while that fsync runs.
                if unsynced == nil { unsynced = UnsyncedFrames(start: length, generation: generation) }
                unsynced?.ends.append((length + frame.count, record.generation))
                pendingSync = PendingSync(file: file, end: length + frame.count)
            } else if _durability == .full {
                // (A group's document: the group retracts what its other documents
                // could not record, so each frame is durable before the next document's.)
                do throws(DocumentError) {
                    try file.sync()
                } catch {
                    // PostgreSQL's fsync lesson: after a failed fsync the kernel may have
                    // dropped the pages it could not write and a later fsync may succeed
                    // without them, so nothing written through this file is trusted to be
                    // durable again. Saves stop until the document is opened anew (which
                    // reads what the disk really holds). The cut may not be durable either,
                    // so the frame may come back: its blobs stay (compaction collects them).
                    cutBack(file, to: length, forgetting: [])
                    broken = error
                    throw error
                }
            }
            lastAppend = (start: length, generation: generation)
            length += frame.count
            generation = record.generation
            _journalFrames += 1
            if following != nil {
                tailCheck = Array(frame.suffix(Self.tailCheckBytes))
                refreshLook(examined: file.status)
            }
            return pendingSync
        }
    }

    /// Stops saves with `error` until the document is opened again: what the
    /// file holds is not what the store believes.
    func poison(_ error: DocumentError) {
        lock.withLock { broken = error }
    }

    /// Removes the blobs a failed append created, which nothing names.
    private func forget(_ created: [String]) {
        guard !created.isEmpty else { return }
        blobs.remove(created)
        fileBlobs.subtract(created)
    }

    /// Cuts a frame that failed back off the file; when that fails too, the file may
    /// hold part of it, so saves stop (`broken`) and its blobs stay.
    private func cutBack(_ file: DocumentFile, to length: Int, forgetting created: [String]) {
        do throws(DocumentError) {
            try file.truncate(to: length)
            forget(created)
        } catch {
            broken = error
        }
    }

    /// Cuts the last frame `append` wrote back off the file (and syncs), when it
    /// published generation `generation`: how a group undoes its part of a save
    /// another of its documents could not record. Blobs it wrote stay until the
    /// next compaction collects them. Does nothing when the file has moved on.
    func retractAppend(of generation: UInt64) throws(DocumentError) {
        try locked { () throws(DocumentError) in
            guard let last = lastAppend, self.generation == generation, let file else { return }
            // A compaction that began after this frame wrote a snapshot that holds it.
            if let run = running, run.start > last.start { running = nil }
            do throws(DocumentError) {
                try file.truncate(to: last.start)
                try file.sync()
            } catch {
                broken = error
                throw error
            }
            length = last.start
            self.generation = last.generation
            _journalFrames -= 1
            lastAppend = nil
            if following != nil {
                try rememberTail(of: file)
                refreshLook(examined: file.status)
            }
        }
    }

    /// Whether the journal has grown enough that a save should compact.
    public var wantsCompaction: Bool {
        lock.withLock { journalOutgrewPolicy }
    }

    /// `wantsCompaction`, with the lock held.
    private var journalOutgrewPolicy: Bool {
        let journal = length - _snapshotLength
        if let failed = compactionFailedAt, length < failed + (failed - _snapshotLength) / 2 { return false }
        return journal > _compactionPolicy.minimumJournalBytes
            && Double(journal) > _compactionPolicy.ratio * Double(_snapshotLength)
    }

    // MARK: Compaction

    /// Replaces the document with a fresh snapshot of `version` (which must be the
    /// store's current version), then removes blobs nothing refers to any more.
    /// A compaction running in the background is waited for first.
    ///
    /// The snapshot goes to a temporary file in the same folder, is synced, renamed
    /// over the document, and the folder is synced: a crash at any point leaves
    /// either the old document or the new one.
    /// - Complexity: O(rows)
    public func compact(_ version: StoreVersion) throws(DocumentError) {
        try compact(version) { _, _ in }
    }

    /// `compact(_:)`, telling `progress` the rows written into the snapshot (`osd compact`).
    /// - Complexity: O(rows)
    public func compact(_ version: StoreVersion, progress: DocumentProgress) throws(DocumentError) {
        compactions.wait()
        let started = DispatchTime.now().uptimeNanoseconds
        let metrics = lock.withLock { self.metrics }
        do {
            try compactNow(version, progress: progress)
            metrics?.compacted(background: false, nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
        } catch {
            metrics?.compactionFailed()
            throw error
        }
    }

    private func compactNow(_ version: StoreVersion, progress: DocumentProgress) throws(DocumentError) {
        // A shared document compacts in a turn, from the version the file holds: its
        // store's (which holds the turn), or a caller's that nothing has passed since.
        let ownTurn = isShared && !lock.withLock { turnHeld }
        if ownTurn { try beginTurn() }
        defer { if ownTurn { endTurn() } }
        if isShared, lock.withLock({ pending != nil || version.generation < generation }) {
            throw .io(operation: "compacting (another writer saved after the version given)", path: path, errno: EAGAIN)
        }
        let replaced = try locked { () throws(DocumentError) -> DocumentFile in
            _ = try writableFile()
            let temporary = Self.temporaryPath(for: path, purpose: "compact")
            // Blobs the file does not refer to (what a failed import or save left, say)
            // go first: on a full disk, that may be the room the new snapshot needs.
            // (Every blob of the version was written by the snapshot or an append, so
            // the file refers to it.) Those the old file refers to stay until it is
            // replaced.
            blobs.collect(keeping: fileBlobs)
            var referenced = Set<String>()
            let snapshot = try Self.writeSnapshot(
                version, identifier: storeIdentifier, schemaVersion: schemaVersion, to: temporary, blobs: blobs,
                formatMinor: generationsMaySkip ? 1 : 0, progress: progress, referenced: { referenced.insert($0) })
            let replaced = try replaceFile(
                with: snapshot, at: temporary, referencing: referenced, since: BackgroundCompaction(start: length, frames: _journalFrames))
            // (A group's document, or an emptied store, moves to the version's generation.)
            generation = version.generation
            return replaced
        }
        replaced.close()
    }

    /// A compaction that writes its snapshot while saves go on appending to the
    /// current file: only its last step, copying the frames appended meanwhile and
    /// renaming, holds the document's lock.
    struct BackgroundCompaction {
        /// Which compaction this is: one called off (the file replaced meanwhile) may
        /// still be writing its snapshot while the next one runs.
        var number: UInt64 = 0
        /// Where the frames after the snapshot's version begin in the current file.
        var start: Int
        /// The journal frames before `start`.
        var frames: Int
        /// The blobs the frames appended since it began name.
        var appendedBlobs: Set<String> = []
    }

    /// Starts compacting to `version`, the version whose frame the store just
    /// appended, on a background thread when the journal has outgrown the policy;
    /// returns at once. Saves go on meanwhile and wait only for the last step (the
    /// frames appended since `version`, copied after the new snapshot, and the
    /// rename). A failure is noted as `compactionFailed` notes it: the journal
    /// stays as it was, complete.
    ///
    /// Does nothing while another compaction runs, or when `version` is not the
    /// document's last generation.
    public func compactInBackground(_ version: StoreVersion) {
        let begun = lock.withLock { () -> UInt64? in
            guard running == nil, broken == nil, file != nil, !isReadOnly, !generationsMaySkip,
                  generation == version.generation, journalOutgrewPolicy else { return nil }
            // (As `compact` does, and while no snapshot is being written.)
            blobs.collect(keeping: fileBlobs)
            compactionsBegun += 1
            running = BackgroundCompaction(number: compactionsBegun, start: length, frames: _journalFrames)
            compactions.enter()
            return compactionsBegun
        }
        guard let mine = begun else { return }
        BackgroundThread.start(name: "OpenSwiftData.compaction") { [self] in
            defer { compactions.leave() }
            let started = DispatchTime.now().uptimeNanoseconds
            let temporary = Self.temporaryPath(for: path, purpose: "compact")
            var referenced = Set<String>()
            let snapshot: WrittenSnapshot
            do {
                snapshot = try Self.writeSnapshot(
                    version, identifier: storeIdentifier, schemaVersion: schemaVersion, to: temporary, blobs: blobs,
                    compressionWorkers: BackgroundThread.compressionWorkers, inBackground: true, removingCreatedBlobs: !isShared,
                    referenced: { referenced.insert($0) })
            } catch {
                lock.withLock {
                    if running?.number == mine { running = nil }
                    compactionFailedAt = length
                    metrics?.compactionFailed()
                }
                return
            }
            lock.withLock { compactionWillFinish }?()
            // A shared document's last step is a turn: it reads what other writers
            // appended meanwhile, which the new file must keep too.
            if isShared { turnLock.lock() }
            defer { if isShared { turnLock.unlock() } }
            var inTurn = false
            if isShared, lock.withLock({ running?.number == mine && broken == nil && file != nil }) {
                do throws(DocumentError) {
                    try takeTurn()
                    inTurn = true
                } catch {
                    lock.withLock {
                        if running?.number == mine { running = nil }
                        compactionFailedAt = length
                        metrics?.compactionFailed()
                    }
                }
            }
            let replaced = lock.withLock { () -> DocumentFile? in
                // (Whichever file is the document's then, the new one or the old, is
                // unlocked as the turn ends.)
                defer {
                    if inTurn {
                        turnHeld = false
                        file?.unlock()
                    }
                }
                guard let run = running, run.number == mine, broken == nil, file != nil else {
                    // Called off (a retracted frame, the file replaced by another
                    // writer), or saves stopped or the document closed meanwhile: the
                    // snapshot is not the file's.
                    if running?.number == mine { running = nil }
                    // (Blobs of a shared document go only in a turn: another writer may
                    // have named one this snapshot stored meanwhile.)
                    Self.discard(snapshot, at: temporary, keepingBlobs: fileBlobs, of: blobs, removingBlobs: !isShared)
                    return nil
                }
                running = nil
                do throws(DocumentError) {
                    let replaced = try replaceFile(with: snapshot, at: temporary, referencing: referenced, since: run)
                    metrics?.compacted(background: true, nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
                    return replaced
                } catch {
                    compactionFailedAt = length
                    metrics?.compactionFailed()
                    return nil
                }
            }
            replaced?.close()
        }
    }

    /// Called on the compaction's thread between writing a background compaction's
    /// snapshot and its last step: the tests' seam for saving meanwhile. Not for
    /// applications.
    public var _compactionWillFinish: (@Sendable () -> Void)? {
        get { lock.withLock { compactionWillFinish } }
        set { lock.withLock { compactionWillFinish = newValue } }
    }
    private var compactionWillFinish: (@Sendable () -> Void)?

    /// Blocks the caller until no compaction runs in the background.
    public func waitForCompaction() {
        compactions.wait()
    }

    /// Counts this document's compactions in `metrics`, and the recovery its open
    /// made (a torn last save dropped), if it made one.
    public func attach(_ metrics: StoreMetrics) {
        let recovered = lock.withLock { () -> Bool in
            self.metrics = metrics
            defer { recoveredTornTail = false }
            return recoveredTornTail
        }
        if recovered { metrics.recovered() }
    }

    /// A snapshot written to a temporary file: the file, open; its length; the blob
    /// files it made (none that were there already).
    typealias WrittenSnapshot = (file: DocumentFile, length: Int, createdBlobs: [String])

    /// Closes and removes `snapshot`, and the blob files only it made.
    static func discard(
        _ snapshot: WrittenSnapshot, at temporary: String, keepingBlobs named: Set<String>, of blobs: BlobStore,
        removingBlobs: Bool = true
    ) {
        snapshot.file.close()
        DocumentFile.remove(temporary)
        if removingBlobs { blobs.remove(snapshot.createdBlobs.filter { !named.contains($0) }) }
    }

    /// Makes `snapshot` (written at `temporary`, naming the blobs `referenced`) the
    /// document: copies the frames appended after `run.start` behind it, syncs it,
    /// renames it over the document, syncs the folder and removes blobs neither
    /// names. On a failure before the rename the document stays as it was (and the
    /// snapshot is removed); after it, the document goes on with the new file. The
    /// caller holds the lock.
    ///
    /// Returns the replaced file, still open, for the caller to close once it has
    /// released the lock: closing the last descriptor of a renamed-over file frees
    /// its blocks, 10 to 20 ms for a 45 MB document, which no save should wait for.
    func replaceFile(
        with snapshot: WrittenSnapshot, at temporary: String, referencing referenced: Set<String>, since run: BackgroundCompaction
    ) throws(DocumentError) -> DocumentFile {
        guard let old = file else {
            Self.discard(snapshot, at: temporary, keepingBlobs: fileBlobs, of: blobs)
            throw .closed(path: path)
        }
        let fresh = snapshot.file
        do throws(DocumentError) {
            if length > run.start {
                // Acknowledged saves: synced with the new file, before it takes the name.
                let frames = try old.read(at: run.start, count: length - run.start)
                guard frames.count == length - run.start else {
                    throw .io(operation: "reading the journal to compact", path: path, errno: EIO)
                }
                try fresh.write(frames, at: snapshot.length)
                try fresh.sync()
            }
            try fresh.lockExclusively()
            try fresh.claim(isShared ? .shared : .exclusive)
            try DocumentFile.rename(temporary, to: path)
        } catch {
            // The blobs only the new file would have named go with it (not one it
            // repaired that the current file names).
            Self.discard(snapshot, at: temporary, keepingBlobs: fileBlobs, of: blobs)
            throw error
        }
        // The path names the new file now: from here on, work with it, whatever fails.
        fresh.path = path
        file = fresh
        let moved = snapshot.length - run.start
        length += moved
        if following != nil {
            // (The new file ends with the same frames, or the snapshot's end.)
            tailCheck = (try? fresh.read(at: length - Self.tailCheckBytes, count: Self.tailCheckBytes)) ?? []
            refreshLook(examined: fresh.status)
        }
        _snapshotLength = snapshot.length
        _journalFrames -= run.frames
        compactionFailedAt = nil
        lastAppend = lastAppend.flatMap { $0.start >= run.start ? ($0.start + moved, $0.generation) : nil }
        let named = referenced.union(run.appendedBlobs)
        // The frames no fsync of the old file covered yet were synced in the new one
        // (group commit: their saves are acknowledged once the rename is durable).
        unsynced = nil
        do throws(DocumentError) {
            try DocumentFile.syncDirectory(Self.directory(of: path))
        } catch {
            // The rename happened and the store goes on with the new file; the next
            // append makes the name durable before it acknowledges anything. Until
            // then a crash may bring the old file back, so its blobs stay, and both
            // files' blobs are the ones a later compaction keeps.
            directoryNeedsSync = true
            fileBlobs.formUnion(named)
            return old
        }
        directoryNeedsSync = false
        syncCondition.withLock {
            old.syncedEnd = .max
            syncCondition.broadcast()
        }
        fileBlobs = named
        blobs.collect(keeping: named)
        return old
    }

    /// Writes a snapshot of `version` as a new document at `path` (replacing any
    /// file there when `replacing`), with its blobs in the folder beside it: "save as".
    /// A document open for writing elsewhere is not replaced: that throws `.locked`.
    ///
    /// Writes into one folder take turns (an advisory lock on the folder), so two
    /// imports to the same new path cannot collect each other's blobs; a new path
    /// is taken with `link`, which never replaces a document created meanwhile (a
    /// `create` error with EEXIST), or on file systems without hard links by a
    /// rename while the name is still free.
    ///
    /// The new document keeps `identifier` (a copy of a document keeps its
    /// identifier, so identifiers from one resolve in the other), or gets a new one,
    /// and records `schemaVersion` (a copy keeps its original's).
    public static func write(
        _ version: StoreVersion, to path: String, identifier: UUID? = nil, schemaVersion: SchemaVersionStamp? = nil,
        replacing: Bool = true
    ) throws(DocumentError) {
        let folder = try DocumentFile.lockFolder(directory(of: path))
        defer { folder.close() }
        // Hold the existing document's lock (if there is one) until it is replaced,
        // re-checking after locking that the path still names the file locked.
        var existing: DocumentFile?
        do {
            existing = try DocumentFile.openLocked(path)
        } catch .notFound {
            existing = nil
        }
        defer { existing?.close() }
        if existing != nil, !replacing { throw .io(operation: "create", path: path, errno: EEXIST) }
        // Writers sharing the document hold its lock only for their turns.
        try existing?.claim(.exclusive)
        let temporary = temporaryPath(for: path, purpose: "save")
        let blobs = BlobStore(documentPath: path)
        var referenced = Set<String>()
        let (file, _, created) = try writeSnapshot(
            version, identifier: identifier ?? UUID(), schemaVersion: schemaVersion, to: temporary, blobs: blobs,
            referenced: { referenced.insert($0) })
        defer { file.close() }
        // Whether the new file has taken the name: from then on its blobs are its own.
        var placed = false
        do throws(DocumentError) {
            // Locked before it takes the name, so no writer can open it unlocked.
            try file.lockExclusively()
            if existing != nil {
                try DocumentFile.rename(temporary, to: path)
                placed = true
            } else if DocumentFile.link(temporary, path) == 0 {
                placed = true
                DocumentFile.remove(temporary)
            } else {
                let code = errno
                // EEXIST: a writer created the document after we looked.
                if code == EEXIST { throw .io(operation: "create", path: path, errno: EEXIST) }
                // A file system without hard links (FAT, some network and FUSE mounts):
                // under the folder lock, rename into the name while it is still free.
                guard [EPERM, ENOTSUP, EOPNOTSUPP, EMLINK, ENOSYS].contains(code) else {
                    throw .io(operation: "link", path: path, errno: code)
                }
                guard DocumentFile.identity(of: path) == nil else { throw .io(operation: "create", path: path, errno: EEXIST) }
                try DocumentFile.rename(temporary, to: path)
                placed = true
            }
            try DocumentFile.syncDirectory(directory(of: path))
        } catch {
            DocumentFile.remove(temporary)
            // Before the new file took the name nothing was modified, and the blob
            // files this write made go too; after, they are the new document's.
            if !placed { blobs.remove(created) }
            throw error
        }
        blobs.collect(keeping: referenced)
    }

    /// The snapshot of `version` with every frame stored uncompressed, blobs left
    /// inline: the bytes compaction hands to zstd, for measuring it against zstd alone.
    public static func uncompressedSnapshot(of version: StoreVersion) throws(DocumentError) -> [UInt8] {
        try Snapshot.encode(version, identifier: UUID(), compressed: false) { (data: Data) throws(DocumentError) in
            BlobStore.reference(for: data)
        }
    }

    /// How much of a snapshot is written before it is synced (`fdatasync`) and the
    /// next part written.
    static let snapshotWriteBack = 4 << 20

    /// Writes and syncs a complete snapshot file at `path` (which must not exist)
    /// and returns it open. `compressionWorkers` bounds the threads that encode and
    /// compress its frames while this one writes them (nil: one per core).
    ///
    /// `inBackground` (a compaction beside the saves) writes the file only once the
    /// snapshot is encoded, each 4 MiB part synced before the next, as compaction
    /// always did: the I/O W9 saves' tail was measured with. (Streaming it ran once
    /// with a p99 of 66 ms against 12 ms without compaction, but the next run's
    /// saves without compaction had 68 ms: the disk's noise hid any difference.)
    private static func writeSnapshot(
        _ version: StoreVersion, identifier: UUID, schemaVersion: SchemaVersionStamp?, to path: String, blobs: BlobStore,
        formatMinor: Int = 0, compressionWorkers: Int? = nil, inBackground: Bool = false, removingCreatedBlobs: Bool = true,
        progress: DocumentProgress = { _, _ in }, referenced: (String) -> Void = { _ in }
    ) throws(DocumentError) -> WrittenSnapshot {
        DocumentFile.remove(path)
        // The blob files this snapshot made (none that were there already).
        var created: [String] = []
        let file = try DocumentFile.open(path, writable: true, create: true)
        // Frames go to the file as they are compressed, synced every few MiB beside
        // the writing; in the background, to memory first and then to the file in
        // one burst, each part synced before the next.
        let sink = SnapshotSink(file: file, writeBack: Self.snapshotWriteBack, syncsAside: !inBackground)
        do throws(DocumentError) {
            let encoded = inBackground ? SnapshotSink(file: nil) : sink
            try Snapshot.write(
                version, identifier: identifier, schemaVersion: schemaVersion, formatMinor: formatMinor,
                compressionWorkers: compressionWorkers, to: encoded, progress: progress
            ) { (data: Data) throws(DocumentError) in
                let reference = BlobStore.reference(for: data)
                referenced(reference.name)
                if try blobs.store(data, as: reference) { created.append(reference.name) }
                return reference
            }
            if inBackground {
                let bytes = encoded.bytes
                var offset = 0
                while offset < bytes.count {
                    let end = min(offset + Self.snapshotWriteBack, bytes.count)
                    try sink.append(Array(bytes[offset..<end]))
                    offset = end
                }
            }
            try sink.finish()
            if !created.isEmpty { try blobs.syncDirectory() }
            try file.sync()
            return (file, sink.length, created)
        } catch {
            // (No sync aside may outlive the descriptor.)
            try? sink.finish()
            file.close()
            DocumentFile.remove(path)
            // A failed snapshot leaves no blob of its own behind (a full disk stays
            // as full as it was), unless it is written outside a shared document's turn.
            if removingCreatedBlobs { blobs.remove(created) }
            throw error
        }
    }

    /// `Opening.finish` for an opening read without the lock: in a turn, reads what
    /// other writers appended since (and cuts a crashed writer's torn frame), applies
    /// it to `version`, and rewrites the file when the caller asked for it (a schema
    /// version to record).
    fileprivate func finishUnlockedOpening(_ version: StoreVersion, needsRewrite: Bool) throws(DocumentError) -> (Document, StoreVersion) {
        try beginTurn()
        defer { endTurn() }
        var version = version
        switch takeOtherSaves() {
        case let .saves(records)?: for record in records { version.replay(record) }
        case let .replaced(replacement)?: version = replacement
        case nil: break
        }
        if needsRewrite { try compact(version) }
        Self.removeLeftovers(of: path)
        return (self, version)
    }

    // MARK: Closing

    /// Releases the lock a writable open took: other writers take turns from now on.
    func releaseOpeningLock() {
        lock.withLock { file?.unlock() }
    }

    /// Releases the file (and, for a group's document, its lock). Later saves throw
    /// `DocumentError.closed`.
    /// A compaction running in the background finishes first.
    public func close() {
        compactions.wait()
        syncPending()
        lock.withLock {
            following = nil
            refreshLook(examined: nil)
            file?.close()
            file = nil
            for old in retired { old.close() }
            retired = []
        }
    }

    /// Deletes the document file and its blob folder, and closes it.
    public func erase() throws(DocumentError) {
        compactions.wait()
        syncPending()
        try locked { () throws(DocumentError) in
            let open = try writableFile()
            // Unlink while still holding the lock, so no other writer opens it in between.
            DocumentFile.remove(path)
            blobs.removeAll()
            open.close()
            file = nil
            refreshLook(examined: nil)
            try DocumentFile.syncDirectory(Self.directory(of: path))
        }
    }

    private func locked<R>(_ body: () throws(DocumentError) -> R) throws(DocumentError) -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    private func writableFile() throws(DocumentError) -> DocumentFile {
        guard !isReadOnly else { throw .readOnly(path: path) }
        if let broken { throw broken }
        guard let file else { throw .closed(path: path) }
        return file
    }

    // MARK: Paths

    static func directory(of path: String) -> String {
        let url = URL(fileURLWithPath: path)
        return url.deletingLastPathComponent().path
    }

    /// A temporary file beside the document (same folder, so rename is atomic).
    static func temporaryPath(for path: String, purpose: String) -> String {
        let url = URL(fileURLWithPath: path)
        return url.deletingLastPathComponent().appendingPathComponent(
            ".\(sideName(of: url.lastPathComponent)).\(purpose)-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).tmp").path
    }

    /// The longest file name most file systems take (`NAME_MAX`).
    static let maximumNameBytes = 255
    /// Bytes the names of files kept beside a document add to its name, at most: a
    /// temporary file's `.` + `.compact-<pid>-<random>.tmp`, a torn tail's
    /// `.torn-<offset>-<time>`.
    static let sideNameRoom = 48

    /// The document's file name as the files beside it start: the name itself when
    /// those names fit in `maximumNameBytes`, else a prefix of it and a stable hash of
    /// the whole (so that a document whose name fits can always compact, save and keep
    /// a torn tail, and finds its own leftovers).
    static func sideName(of name: String) -> String {
        StableName.fitting(name, in: maximumNameBytes - sideNameRoom, separator: "~")
    }

    /// Removes temporary files a crash left beside the document: compaction,
    /// creation or save-as files whose process no longer runs.
    static func removeLeftovers(of path: String) {
        let url = URL(fileURLWithPath: path)
        let prefix = ".\(sideName(of: url.lastPathComponent))."
        let folder = url.deletingLastPathComponent().path
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        where name.hasPrefix(prefix) && name.hasSuffix(".tmp") {
            let parts = name.dropFirst(prefix.count).split(separator: "-")
            guard parts.count == 3, let pid = Int32(parts[1]) else { continue }
            // (Writers share a document: another may be compacting it right now.)
            let stale = switch parts[0] {
            case "compact", "create", "save": kill(pid, 0) != 0 && errno == ESRCH
            default: false
            }
            if stale { DocumentFile.remove(folder + "/" + name) }
        }
    }
}
