import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What other writers of a shared document recorded since this one last looked.
public enum OtherSaves: Sendable {
    /// Their journal frames, in order, for the store to replay (`StoreVersion.replay`).
    case saves([CommitRecord])
    /// The whole version the file holds now: it was replaced (another writer
    /// compacted it, or emptied the store) or no longer followed from where this
    /// document stood.
    case replaced(StoreVersion)

    /// These saves, then `later`.
    mutating func merge(_ later: OtherSaves) {
        switch (self, later) {
        case let (.saves(earlier), .saves(records)):
            self = .saves(earlier + records)
        case (.replaced(var version), let .saves(records)):
            for record in records { version.replay(record) }
            self = .replaced(version)
        case (_, .replaced):
            self = later
        }
    }
}

/// Several writers on one document: the journal is the log they share.
///
/// A shared document holds the file's `flock` only for a turn: a save (read what
/// the others appended since, apply it, append, sync) or a compaction's last step.
/// Between turns anyone may append, so before every turn, and before every fetch
/// (`takeOtherSaves`, one `fstat` when nothing changed), the document reads the
/// frames past where it stood and hands them to its store. A compaction elsewhere
/// renames a new file over the path: the old file then has no link left (or the
/// path names another file, which a turn checks), and the document reads the new
/// one whole. Readers never lock; a frame still being written reads as torn and
/// waits for the next look, and only a turn cuts a torn tail (a crashed writer's).
/// A frame is trusted only while the bytes that end it are still there: a writer
/// whose sync failed cuts its frame off again, and another writer's frame may then
/// take its place (`tailCheck`).
///
/// Locks: `turnLock` (this process's turns share one open file description, so
/// one `flock`), then `flock`, then `lock` (the document's state), held only for
/// moments, never while waiting for `flock`; `lookLock` guards what a fetch's
/// check (`hasOtherSaves`) reads, and nothing is done while holding it but that
/// check's `fstat`.
extension Document {
    /// What a fetch compares with the file's `fstat` (`hasOtherSaves`), kept apart
    /// from the document's state so the check never waits for a save's fsync.
    struct Look {
        var descriptor: Int32 = -1
        /// Whether the document follows other writers now.
        var active = false
        /// Whether other writers' saves wait to be taken.
        var waiting = false
        /// The size and modification time the last look examined.
        var size = 0
        var modified = timespec()
    }

    /// Whether this document follows other writers (a shared writer, or a read-only
    /// document of the store's own schema).
    public var followsOtherWriters: Bool { lock.withLock { following != nil } }

    /// Takes this process's turn to write the file: waits for this process's other
    /// turns and for other writers' (`DocumentFile.turnPatience`, then `.locked`),
    /// switches to the file at the path if a compaction replaced it, and reads the
    /// frames other writers appended (`takeOtherSaves` hands them over). Cuts a
    /// crashed writer's torn frame. Every `beginTurn` that returns is ended by
    /// `endTurn`. Does nothing for a document that is not shared.
    public func beginTurn() throws(DocumentError) {
        guard isShared else { return }
        turnLock.lock()
        do throws(DocumentError) {
            try takeTurn()
        } catch {
            turnLock.unlock()
            throw error
        }
    }

    /// Ends the turn `beginTurn` began.
    public func endTurn() {
        guard isShared else { return }
        lock.withLock {
            turnHeld = false
            file?.unlock()
        }
        turnLock.unlock()
    }

    /// Whether other writers appended or replaced the file since this document last
    /// looked, or their saves wait to be taken: one `fstat`, compared with what the
    /// last look saw (size, modification time, a link left).
    public var hasOtherSaves: Bool {
        lookLock.withLock {
            guard look.active else { return false }
            if look.waiting { return true }
            var info = stat()
            // (A descriptor that fails: the slow path finds out why.)
            guard fstat(look.descriptor, &info) == 0 else { return true }
            return Int(info.st_size) != look.size || info.st_nlink == 0
                || info.st_mtim.tv_sec != look.modified.tv_sec || info.st_mtim.tv_nsec != look.modified.tv_nsec
        }
    }

    /// The saves of other writers that the store has not applied yet, after reading
    /// what the file holds past where this document stood. Frames still being
    /// written wait for a later look. A failure to read leaves the document where
    /// it stood; one that ends following (the file deleted, or replaced by another
    /// document) stops it (`followFailure`).
    public func takeOtherSaves() -> OtherSaves? {
        lock.withLock {
            if following != nil, followFailure == nil, let file {
                do throws(DocumentError) {
                    if file.status?.links == 0 {
                        try switchToFileAtPath(inTurn: false)
                    } else {
                        try catchUp(from: file, inTurn: false)
                    }
                } catch {
                    // Tried again at the next look (a failure that ends following set
                    // `followFailure` already).
                }
            }
            defer {
                pending = nil
                refreshLook(examined: nil)
            }
            return pending
        }
    }

    /// Takes the `flock` of the current file and reads what other writers appended,
    /// with `turnLock` held and `lock` not: the wait for another writer's turn (up
    /// to `turnPatience`) holds up no fetch. Sets `turnHeld`.
    func takeTurn() throws(DocumentError) {
        for _ in 0..<8 {
            let current = try currentFileForTurn()
            try current.lockForTurn(patience: DocumentFile.turnPatience)
            lock.lock()
            defer { lock.unlock() }
            // A look without the turn may have moved to a new file meanwhile.
            guard current === file else {
                current.unlock()
                continue
            }
            do throws(DocumentError) {
                if current.isStillAtPath {
                    try catchUp(from: current, inTurn: true)
                } else {
                    current.unlock()
                    try switchToFileAtPath(inTurn: true)
                }
            } catch {
                file?.unlock()
                throw error
            }
            turnHeld = true
            refreshLook(examined: nil)
            return
        }
        throw .locked(path: path)
    }

    /// The file a turn locks, closing the files no turn uses any more.
    private func currentFileForTurn() throws(DocumentError) -> DocumentFile {
        lock.lock()
        defer { lock.unlock() }
        // Files a look without the turn moved away from: no turn can use them now.
        for old in retired { old.close() }
        retired = []
        if let followFailure { throw followFailure }
        if let broken { throw broken }
        guard let file else { throw .closed(path: path) }
        return file
    }

    /// Called, with the document's lock held, once a follower began reading its file
    /// whole (another writer replaced it, or a frame it read was cut off) and took
    /// the file's size: the tests' seam for appending meanwhile. Not for applications.
    public var _rereadDidRead: (@Sendable () -> Void)? {
        get { lock.withLock { rereadDidRead } }
        set { lock.withLock { rereadDidRead = newValue } }
    }

    /// Publishes what a fetch's check compares (`Look`), with `lock` held: the
    /// current descriptor and state, and the file's status as last examined (when
    /// `examined` is given; else as it is now, when the document moved since).
    func refreshLook(examined: DocumentFile.Status?) {
        let status = examined ?? (lookNeedsStatus ? file?.status : nil)
        lookNeedsStatus = false
        lookLock.withLock {
            look.descriptor = file?.descriptor ?? -1
            look.active = following != nil && followFailure == nil && file != nil
            look.waiting = pending != nil
            if let status {
                look.size = status.size
                look.modified = status.modified
            }
        }
    }

    /// The last bytes before `length` in `source`, which a later look checks are
    /// still there (`tailCheck`).
    func rememberTail(of source: DocumentFile) throws(DocumentError) {
        tailCheck = try source.read(at: length - Self.tailCheckBytes, count: Self.tailCheckBytes)
    }

    /// How many bytes before `length` a look compares: a frame's payload checksum
    /// and the end of its payload.
    static let tailCheckBytes = 8

    /// Moves to the file the path names now (a compaction elsewhere renamed it over
    /// this one) and reads it whole; in a turn, locked. With `lock` held.
    private func switchToFileAtPath(inTurn: Bool) throws(DocumentError) {
        for _ in 0..<8 {
            let fresh: DocumentFile
            do {
                fresh = try DocumentFile.open(path, writable: !isReadOnly)
            } catch .notFound {
                throw stopFollowing(.notFound(path: path))
            }
            if inTurn {
                try fresh.lockForTurn(patience: DocumentFile.turnPatience)
                guard fresh.isStillAtPath else {
                    fresh.close()
                    continue
                }
            }
            do throws(DocumentError) {
                try reread(fresh, inTurn: inTurn)
            } catch {
                fresh.close()
                throw error
            }
            return
        }
        throw .locked(path: path)
    }

    /// Reads `source` whole (a frame at a time: `FileBytes`) and makes it this
    /// document's file, its version the pending saves (`.replaced`). In a turn, a torn
    /// tail is kept beside the document and cut, as an open cuts it. With `lock` held.
    private func reread(_ source: DocumentFile, inTurn: Bool) throws(DocumentError) {
        guard let following else { return }
        // The status before the read is what the look remembers: a frame appended
        // after it changes the size, so the next look reads on. (Taken after the read,
        // it would include frames the read missed, and the look would wait for the
        // next change.)
        let before = source.status
        let bytes = try FileBytes(source)
        rereadDidRead?()
        let contents: DocumentReader.Contents
        do {
            contents = try DocumentReader.read(bytes: bytes, path: path, expected: following.schema, blobs: .load)
        } catch let .schemaMismatch(path, reason) {
            throw stopFollowing(.schemaMismatch(path: path, reason: "another writer replaced it with \(reason)"))
        }
        guard contents.storeIdentifier == storeIdentifier, contents.schemaVersion == schemaVersion, !contents.needsRewrite else {
            throw stopFollowing(.schemaMismatch(
                path: path, reason: "another document, or another version of its schema, replaced the one this container opened"))
        }
        // A writer of another format (a newer build's, say) cannot be followed: this
        // one would append or compact in its own and drop what it does not know.
        guard contents.formatMajor == following.formatMajor || isReadOnly,
              !DocumentFormat.isNewer(major: contents.formatMajor, minor: contents.formatMinor) else {
            throw stopFollowing(.unsupportedFormat(path: path, major: contents.formatMajor, minor: contents.formatMinor))
        }
        var cut = false
        if inTurn, contents.validLength < bytes.count {
            try Self.keepTornTail(try bytes.bytes(contents.validLength..<bytes.count), of: path, at: contents.validLength)
            try source.truncate(to: contents.validLength)
            try source.sync()
            noteRecovery()
            cut = true
        }
        if source !== file {
            let old = file
            file = source
            // (Its writer's compaction copied this process's frames and synced them.)
            unsynced = nil
            if !isReadOnly { try? source.claim(.shared) }
            // Outside a turn, `takeTurn` may be waiting for the old file's lock: it
            // finds the file changed, and the next turn closes it.
            if inTurn { old?.close() } else if let old { retired.append(old) }
        }
        // (Read again in place: another writer's frame was retracted after this
        // process's; a failed fsync leaves them.)
        unsynced?.interleaved = true
        if source === file {
            // The file may be shorter than an fsync of it covered: a frame written there
            // later is not durable because of it.
            let valid = contents.validLength
            syncCondition.withLock { source.syncedEnd = min(source.syncedEnd, valid) }
        }
        length = contents.validLength
        generation = contents.version.generation
        _snapshotLength = contents.snapshotLength
        _journalFrames = contents.journalFrames
        fileBlobs = contents.blobNames
        lastAppend = nil
        // A compaction of this process wrote a snapshot of what the file held before.
        running = nil
        self.following = (following.schema, contents.formatMajor)
        pending = .replaced(contents.version)
        tailCheck = try bytes.bytes((length - Self.tailCheckBytes)..<length)
        if let before, !cut {
            refreshLook(examined: before)
        } else {
            // (A cut in a turn: nobody else writes until it ends.)
            lookNeedsStatus = true
        }
    }

    /// Reads the frames `source` holds past `length` into `pending`. A frame that
    /// does not follow the last one read means the file changed under this document
    /// (a frame another writer retracted): it is read whole then. With `lock` held.
    private func catchUp(from source: DocumentFile, inTurn: Bool) throws(DocumentError) {
        guard let following else { return }
        guard let status = source.status else { throw .io(operation: "fstat", path: path, errno: errno) }
        let size = status.size
        // The frames this document read end as they did: none was cut off and
        // replaced by another writer's (else the file is read whole).
        guard size >= length, try source.read(at: length - Self.tailCheckBytes, count: Self.tailCheckBytes) == tailCheck else {
            return try reread(source, inTurn: inTurn)
        }
        if size == length {
            refreshLook(examined: status)
            return
        }
        let bytes = try source.read(at: length, count: size - length)
        var offset = 0
        var budget = DocumentFormat.expansionBudget(fileSize: size)
        var records: [CommitRecord] = []
        var names: [String] = []
        var last = generation
        let keepsHistory = DocumentFormat.keepsHistory(major: following.formatMajor)
        scanning: while true {
            let scan: Frame.Scan
            do {
                scan = try Frame.scan(bytes, at: offset, path: path, budget: &budget)
            } catch let .damaged(path, at, reason) {
                throw stopFollowingUnlessInTurn(.damaged(path: path, offset: length + at, reason: reason), inTurn: inTurn)
            }
            switch scan {
            case .end:
                break scanning
            case .torn:
                if inTurn {
                    // Only a writer that crashed mid-append leaves a torn frame under the lock.
                    try Self.keepTornTail(Array(bytes[offset...]), of: path, at: length + offset)
                    try source.truncate(to: length + offset)
                    try source.sync()
                    noteRecovery()
                    lookNeedsStatus = true
                }
                break scanning
            case let .frame(frame):
                guard frame.kind == .commit else {
                    throw stopFollowingUnlessInTurn(
                        .damaged(path: path, offset: length + offset, reason: "a \(frame.kind) frame in the journal"), inTurn: inTurn)
                }
                var blobFailure: DocumentError?
                var reader = ByteReader(frame.payload)
                let record: CommitRecord
                do throws(ByteReader.Failure) {
                    record = try reader.commit(schema: following.schema, history: keepsHistory) {
                        (reference: BlobReference) throws(ByteReader.Failure) -> Value in
                        names.append(reference.name)
                        do throws(DocumentError) {
                            return .data(try blobs.load(reference))
                        } catch {
                            blobFailure = error
                            throw ByteReader.Failure(offset: 0, reason: error.description)
                        }
                    }
                    guard reader.isAtEnd else { throw ByteReader.Failure(offset: reader.position, reason: "unexpected bytes at the end") }
                } catch {
                    // A blob not there yet is read again at the next look.
                    if let blobFailure { throw blobFailure }
                    throw stopFollowingUnlessInTurn(
                        .damaged(path: path, offset: length + offset, reason: "commit frame: \(error.reason)"), inTurn: inTurn)
                }
                guard record.generation > last, (record.previous ?? record.generation - 1) == last else {
                    return try reread(source, inTurn: inTurn)
                }
                records.append(record)
                last = record.generation
                offset += frame.length
            }
        }
        guard !records.isEmpty else {
            // (A torn frame cut in a turn changed the file: its status is read again.)
            refreshLook(examined: lookNeedsStatus ? nil : status)
            return
        }
        tailCheck = Array(bytes[(offset - Self.tailCheckBytes)..<offset])
        // Other writers' frames follow this process's not yet durable ones: a failed
        // fsync leaves them all.
        unsynced?.interleaved = true
        length += offset
        generation = last
        _journalFrames += records.count
        fileBlobs.formUnion(names)
        // A compaction running here copies these frames behind its snapshot: their
        // blobs stay.
        running?.appendedBlobs.formUnion(names)
        if pending == nil { pending = .saves(records) } else { pending!.merge(.saves(records)) }
        refreshLook(examined: lookNeedsStatus ? nil : status)
    }

    /// Counts a crashed writer's torn frame cut in a turn as a recovery (at `attach`,
    /// when the container has not attached its metrics yet).
    private func noteRecovery() {
        if let metrics { metrics.recovered() } else { recoveredTornTail = true }
    }

    /// Stops following with `error`, which the next save throws.
    private func stopFollowing(_ error: DocumentError) -> DocumentError {
        followFailure = error
        refreshLook(examined: nil)
        return error
    }

    /// Damage found in a turn fails that save (as an open would fail); found by a
    /// reader, it stops following, since nothing past it can be read.
    private func stopFollowingUnlessInTurn(_ error: DocumentError, inTurn: Bool) -> DocumentError {
        inTurn ? error : stopFollowing(error)
    }
}
