import Foundation

/// Reads a whole document: checks the header and every frame's checksums,
/// decodes the snapshot, replays the journal and builds the indexes in bulk.
///
/// It needs no Swift model types, only the bytes: the CLI reads any document with it.
public struct DocumentReader {
    /// What to do with external-storage blobs while reading.
    public enum BlobPolicy: Sendable {
        /// Read each blob and check it against its hash (opening, `verify`).
        case load
        /// Leave blob files alone; such values read as empty data (`info`).
        case skip
    }

    /// One frame of the file, for `info` and `verify`.
    public struct FrameSummary: Sendable {
        public var kind: FrameKind
        public var offset: Int
        public var length: Int
        public var rawLength: Int
    }

    /// Everything read from a document.
    public struct Contents: Sendable {
        public var path: String
        public var formatMajor: Int
        public var formatMinor: Int
        public var snapshotGeneration: UInt64
        /// The store as of the last intact journal frame.
        public var version: StoreVersion
        /// Bytes of the header and snapshot frames.
        public var snapshotLength: Int
        /// Bytes of the intact journal frames after the snapshot.
        public var journalLength: Int
        public var journalFrames: Int
        /// Where intact content ends; a writer truncates the file here.
        public var validLength: Int
        /// The torn last frame that was dropped, if any.
        public var tornTail: (offset: Int, reason: String)?
        public var frames: [FrameSummary]
        /// The blobs the snapshot and journal refer to: name and length.
        public var blobs: [String: Int]
        /// Names of the blobs the snapshot and journal refer to.
        public var blobNames: Set<String> { Set(blobs.keys) }
        /// The file's schema lists the entities in another order or names Codable
        /// types differently; a writer rewrites the snapshot before appending.
        public var needsRewrite: Bool
        /// The store identifier the snapshot keeps (format 3); nil in older documents.
        public var storeIdentifier: UUID?
        /// The application schema's version the document records (format 3.1); nil
        /// when none is known (a lightweight migration forgets the recorded one).
        /// `Document.Opening.finish(migratedTo:recording:)` sets the version a
        /// migration plan brought it to.
        public var schemaVersion: SchemaVersionStamp?
        public var schema: StoreSchema { version.schema }
        /// What a salvaging read (`read(path:salvaging:)`) skipped; empty otherwise.
        public var lost: [LostSave] = []
    }

    /// A stretch of the journal a salvaging read could not use: a damaged frame (its
    /// generation unknown) or saves missing between two whole frames.
    public struct LostSave: Sendable, CustomStringConvertible {
        /// Where in the file, and how many bytes were skipped (0 for a gap).
        public var offset: Int
        public var length: Int
        /// The saves lost, when the frames around the gap tell.
        public var generations: ClosedRange<UInt64>?
        public var reason: String

        public var description: String {
            let saves = generations.map {
                $0.count == 1 ? "save \($0.lowerBound)" : "saves \($0.lowerBound)...\($0.upperBound)"
            }
            if length == 0 { return "\(saves ?? "saves") lost before byte \(offset): \(reason)" }
            return "\(saves.map { $0 + ": " } ?? "")\(length) bytes at \(offset) skipped: \(reason)"
        }
    }

    /// Reads the document at `path`.
    ///
    /// - Parameter expected: the schema the application opens it with; a document
    ///   with another schema throws `DocumentError.schemaMismatch`.
    ///
    /// With `migrating` hints, a document whose schema differs from `expected`
    /// beyond entity order is migrated to it (`SchemaMigration`) and marked
    /// `needsRewrite`; what cannot be migrated throws `schemaMismatch`, saying why.
    /// (A migration plan runs in the API, between the phases of `Document.Opening`.)
    /// `progress` hears the bytes read so far after each frame.
    public static func read(
        path: String, expected: StoreSchema? = nil, blobs policy: BlobPolicy = .load, migrating hints: MigrationHints? = nil,
        progress: DocumentProgress = { _, _ in }
    ) throws(DocumentError) -> Contents {
        let file = try DocumentFile.open(path, writable: false)
        defer { file.close() }
        return try read(
            bytes: try FileBytes(file), path: path, expected: expected, blobs: policy, migrating: hints, progress: progress)
    }

    /// Reads what still reads of a damaged document (`osd salvage`): the snapshot
    /// must be whole; in the journal, a frame that is damaged (or whose blob is
    /// missing or damaged) is skipped, reading resumes at the next frame whose header
    /// holds, and the saves after it are applied over what is known. `Contents.lost`
    /// names what was skipped. An undamaged document reads as `read(path:)` reads it.
    public static func read(
        path: String, salvaging: Bool, progress: DocumentProgress = { _, _ in }
    ) throws(DocumentError) -> Contents {
        let file = try DocumentFile.open(path, writable: false)
        defer { file.close() }
        let bytes = try file.readAll()
        let header = try DocumentHeader.decode(bytes, path: path)
        return try read(
            bytes: bytes, header: header, path: path, expected: nil, blobs: .load, migrating: nil, salvaging: salvaging,
            progress: progress)
    }

    /// Reads a document from `bytes`: the file in memory, or an open file
    /// (`FileBytes`), which the snapshot is read from a frame at a time.
    static func read(
        bytes: some DocumentBytes, path: String, expected: StoreSchema?, blobs policy: BlobPolicy, migrating hints: MigrationHints? = nil,
        progress: DocumentProgress = { _, _ in }
    ) throws(DocumentError) -> Contents {
        let header = try DocumentHeader.decode(try bytes.bytes(0..<min(bytes.count, DocumentFormat.headerSize)), path: path)
        do {
            return try read(
                bytes: bytes, header: header, path: path, expected: expected, blobs: policy,
                migrating: hints, salvaging: false, progress: progress)
        } catch .damaged where DocumentFormat.isNewer(major: header.major, minor: header.minor) {
            // A newer minor may use what this build does not know: say so, not "damaged".
            throw .unsupportedFormat(path: path, major: header.major, minor: header.minor)
        }
    }

    private static func read(
        bytes: some DocumentBytes, header: DocumentHeader, path: String, expected: StoreSchema?, blobs policy: BlobPolicy,
        migrating hints: MigrationHints?, salvaging: Bool, progress: DocumentProgress
    ) throws(DocumentError) -> Contents {
        let blobStore = BlobStore(documentPath: path)
        var blobs: [String: Int] = [:]
        var frames: [FrameSummary] = []
        var offset = DocumentFormat.headerSize
        /// A blob that failed to load, reported as itself rather than as frame damage.
        var blobFailure: DocumentError?
        /// Payload bytes left to decompress: a fixed multiple of the file's size.
        var budget = DocumentFormat.expansionBudget(fileSize: bytes.count)

        func next(inSnapshot: Bool) throws(DocumentError) -> Frame.Scanned? {
            switch try Frame.scan(bytes, at: offset, path: path, budget: &budget, deferring: .columns) {
            case let .frame(frame):
                frames.append(FrameSummary(kind: frame.kind, offset: frame.offset, length: frame.length, rawLength: frame.rawLength))
                offset += frame.length
                progress(offset, bytes.count)
                return frame
            case let .torn(at, reason):
                if inSnapshot { throw .damaged(path: path, offset: at, reason: "snapshot incomplete: \(reason)") }
                return nil
            case .end:
                if inSnapshot { throw .damaged(path: path, offset: offset, reason: "the file ends inside the snapshot") }
                return nil
            }
        }
        func decode<T>(_ frame: Frame.Scanned, _ body: (inout ByteReader) throws(ByteReader.Failure) -> T) throws(DocumentError) -> T {
            var reader = ByteReader(frame.payload)
            do throws(ByteReader.Failure) {
                let value = try body(&reader)
                guard reader.isAtEnd else {
                    throw ByteReader.Failure(offset: reader.position, reason: "\(frame.payload.count - reader.position) unexpected bytes at the end")
                }
                return value
            } catch {
                if let blobFailure { throw blobFailure }
                throw .damaged(
                    path: path, offset: frame.offset + DocumentFormat.frameHeaderSize,
                    reason: "\(frame.kind) frame: \(error.reason) (at payload byte \(error.offset))")
            }
        }
        func blob(_ reference: BlobReference) throws(ByteReader.Failure) -> Value {
            blobs[reference.name] = reference.length
            switch policy {
            case .skip: return .data(Data())
            case .load:
                do throws(DocumentError) {
                    return .data(try blobStore.load(reference))
                } catch {
                    blobFailure = error
                    throw ByteReader.Failure(offset: 0, reason: error.description)
                }
            }
        }

        // Snapshot: schema, rows, end.
        guard let schemaFrame = try next(inSnapshot: true), schemaFrame.kind == .schema else {
            throw .damaged(path: path, offset: DocumentFormat.headerSize, reason: "the snapshot does not start with the schema")
        }
        let schema = try decode(schemaFrame) { (r: inout ByteReader) throws(ByteReader.Failure) in try r.schema() }
        // The same entities in another order, or Codable types renamed, still open:
        // rows are moved into the application's order at the end.
        var placement: [Int]?
        /// The application's schema, when the document's is migrated to it at the end.
        var migration: (schema: StoreSchema, hints: MigrationHints)?
        // Entities the document holds and the application does not declare are
        // carried, untouched, after the application's (a later version of the app or
        // another tool may know them): a lightweight open never drops rows. Only a
        // migration plan, whose target schema is an explicit version, drops an entity.
        var target = expected
        if hints != nil, let expected {
            let carried = schema.entities.filter { expected.entityIndex(named: $0.name) == nil }
            if !carried.isEmpty, carried.count < schema.entities.count {
                target = StoreSchema(entities: expected.entities + carried)
            }
        }
        if let expected, let target, target != schema {
            if let order = SchemaDifference.placement(of: schema, in: target) {
                placement = order
            } else if let hints, schema.entities.contains(where: { expected.entityIndex(named: $0.name) != nil }) {
                // (With no entity in common this is another document, not an earlier
                // version of this one: migrating would drop all of it.)
                migration = (target, hints)
            } else {
                throw .schemaMismatch(path: path, reason: SchemaDifference.describe(document: schema, application: expected))
            }
        }
        var tables = schema.entities.map { Table(entity: $0) }
        var history = HistoryLog()
        var sawHistoryFrame = false
        /// Generations the journal deleted from history, applied once at the end
        /// (a deletion only names generations before its own, so the order of
        /// deletions and later appends does not matter), and how many it listed.
        var pruned = Set<UInt64>()
        var prunedListed = 0
        var prunedHorizon: UInt64 = 0
        /// A transaction makes one object per row it names when fetched: insert runs
        /// of many rows are a few bytes in the file, so they are charged against the
        /// decompression budget, as column cells are.
        func charge(_ transaction: StoredTransaction, _ r: inout ByteReader) throws(ByteReader.Failure) {
            budget -= transaction.changeCount * DocumentFormat.bytesPerDecodedCell
            guard budget >= 0 else {
                throw r.fail("history names more rows than a file of \(bytes.count) bytes may (see Limits)")
            }
        }
        var storeIdentifier: UUID?
        var orders: [[[RowID]?]] = schema.entities.map { $0.orderedIndexSlots.map { _ in nil } }
        // Column frames are decompressed and decoded on every core, a batch at a
        // time, and their segments appended in file order.
        var batch: [Frame.Scanned] = []
        let batchSize = 2 * max(1, ProcessInfo.processInfo.activeProcessorCount)
        let cells = Locked(DocumentFormat.expansionBudget(fileSize: bytes.count) / DocumentFormat.bytesPerDecodedCell)
        func appendColumns() throws(DocumentError) {
            guard !batch.isEmpty else { return }
            let decoded = ColumnFrame.decode(batch, schema: schema, path: path, blobs: blobStore, policy: policy, cells: cells)
            for (frame, result) in zip(batch, decoded) {
                let columns = try result.get()
                for reference in columns.blobs { blobs[reference.name] = reference.length }
                guard columns.segment.firstID > (tables[columns.entity].lastRawID ?? 0) else {
                    throw .damaged(
                        path: path, offset: frame.offset + DocumentFormat.frameHeaderSize,
                        reason: "columns frame: row identifiers out of order or stored twice")
                }
                tables[columns.entity].append(segment: columns.segment)
            }
            batch.removeAll()
        }
        while true {
            let scanned: Frame.Scanned?
            do {
                scanned = try next(inSnapshot: true)
            } catch {
                // Damage in an earlier frame is reported first: nothing reads past it.
                try appendColumns()
                throw error
            }
            guard let frame = scanned else { break }
            if frame.kind == .columns {
                batch.append(frame)
                if batch.count == batchSize { try appendColumns() }
                continue
            }
            try appendColumns()
            if frame.kind == .indexOrder {
                try decode(frame) { (r: inout ByteReader) throws(ByteReader.Failure) in
                    let e = try r.count()
                    guard e < orders.count else { throw r.fail("entity #\(e) is not in the schema") }
                    let i = try r.count()
                    guard i < orders[e].count, orders[e][i] == nil else { throw r.fail("index #\(i) of entity #\(e) unknown or repeated") }
                    let n = try r.count(limit: r.bytes.count)
                    var ids: [RowID] = []
                    ids.reserveCapacity(n)
                    var id: Int64 = 0
                    for _ in 0..<n {
                        let delta = try r.signed()
                        let (sum, overflow) = id.addingReportingOverflow(delta)
                        guard !overflow, sum > 0, sum <= DocumentFormat.maximumRowID else { throw r.fail("row identifier out of range") }
                        id = sum
                        ids.append(RowID(id))
                    }
                    orders[e][i] = ids
                }
                continue
            }
            if frame.kind == .history {
                guard DocumentFormat.keepsHistory(major: header.major) else {
                    throw .damaged(path: path, offset: frame.offset, reason: "a history frame in a format \(header.major) document")
                }
                try decode(frame) { (r: inout ByteReader) throws(ByteReader.Failure) in
                    let horizon = try r.varint()
                    guard horizon <= header.generation, !sawHistoryFrame || horizon == history.horizon else {
                        throw r.fail("history horizon \(horizon) out of range or differs between frames")
                    }
                    sawHistoryFrame = true
                    history.horizon = horizon
                    for _ in 0..<(try r.count(limit: r.bytes.count)) {
                        let transaction = try r.transaction(schema: schema)
                        guard transaction.generation <= header.generation,
                              transaction.generation > history.last?.generation ?? 0
                        else { throw r.fail("history transaction \(transaction.generation) out of order or range") }
                        try charge(transaction, &r)
                        history.append(transaction)
                    }
                }
                continue
            }
            if frame.kind == .snapshotEnd {
                try decode(frame) { (r: inout ByteReader) throws(ByteReader.Failure) in
                    guard try r.count() == tables.count else { throw r.fail("entity count differs from the schema's") }
                    for e in tables.indices {
                        let count = try r.count(limit: Int.max)
                        guard count == tables[e].count else {
                            throw r.fail("\(schema.entities[e].name) has \(tables[e].count) rows, the snapshot says \(count)")
                        }
                        let next = try r.signed()
                        guard next > 0, next <= DocumentFormat.maximumRowID + 1 else {
                            throw r.fail("next row identifier \(next) out of range")
                        }
                        tables[e].reserveIdentifiers(below: next)
                    }
                    guard try r.varint() == header.generation else { throw r.fail("generation differs from the header's") }
                    if header.major >= 3 {
                        let b = Array(try r.raw(16))
                        storeIdentifier = UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
                    }
                }
                break
            }
            guard frame.kind == .rows else {
                throw .damaged(path: path, offset: frame.offset, reason: "a \(frame.kind) frame inside the snapshot")
            }
            try decode(frame) { (r: inout ByteReader) throws(ByteReader.Failure) in
                let e = try r.count()
                guard e < schema.entities.count else { throw r.fail("entity #\(e) is not in the schema") }
                let slotCount = schema.entities[e].slotCount
                var id: Int64 = 0
                for _ in 0..<(try r.count()) {
                    let delta = try r.varint()
                    guard delta > 0, delta <= UInt64(DocumentFormat.maximumRowID - id) else {
                        throw r.fail("row identifiers out of order or above \(DocumentFormat.maximumRowID)")
                    }
                    id += Int64(delta)
                    if tables[e].contains(RowID(id)) { throw r.fail("row \(id) stored twice") }
                    tables[e].put(RowID(id), try r.row(slotCount: slotCount, blob: blob))
                }
            }
        }
        let snapshotLength = offset

        // Journal: one commit frame per save, each naming the one before (generations
        // consecutive, or a frame names its predecessor's: `CommitRecord.previous`).
        var generation = header.generation
        /// Rows the journal wrote or deleted: their index entries are not the snapshot's.
        var touched = schema.entities.map { _ in Set<RowID>() }
        var journalFrames = 0
        var tornTail: (offset: Int, reason: String)?
        var lost: [LostSave] = []
        while true {
            let start = offset
            let frame: Frame.Scanned
            let record: CommitRecord
            do throws(DocumentError) {
                let scan = try Frame.scan(bytes, at: offset, path: path, budget: &budget)
                guard case let .frame(scanned) = scan else {
                    if case let .torn(at, reason) = scan { tornTail = (at, reason) }
                    break
                }
                frame = scanned
                guard frame.kind == .commit else {
                    throw .damaged(path: path, offset: start, reason: "a \(frame.kind) frame in the journal")
                }
                let keepsHistory = DocumentFormat.keepsHistory(major: header.major)
                blobFailure = nil
                record = try decode(frame) { (r: inout ByteReader) throws(ByteReader.Failure) in
                    let record = try r.commit(schema: schema, history: keepsHistory, blob: blob)
                    if let transaction = record.transaction { try charge(transaction, &r) }
                    return record
                }
                // The frame before this one in the file: the generation before, unless
                // the frame names another (a document of a group skips generations).
                guard record.generation > generation, record.generation - generation <= 1 << 40 else {
                    throw .damaged(
                        path: path, offset: start,
                        reason: "journal frame for generation \(record.generation) follows generation \(generation)")
                }
                let previous = record.previous ?? record.generation - 1
                if salvaging, previous > generation {
                    // Saves between the last whole frame and this one are gone: the
                    // frames skipped since are theirs (one each when the counts agree).
                    // (In a group's document the range is an upper bound: its
                    // generations skip.)
                    let missing = (generation + 1)...previous
                    let skipped = lost.indices.reversed().prefix { lost[$0].generations == nil && lost[$0].length > 0 }.reversed()
                    if skipped.count == missing.count {
                        for (k, i) in skipped.enumerated() {
                            let save = missing.lowerBound + UInt64(k)
                            lost[i].generations = save...save
                        }
                    } else if let last = skipped.last {
                        lost[last].generations = missing
                    } else {
                        lost.append(LostSave(offset: start, length: 0, generations: missing, reason: "no frame holds these saves"))
                    }
                } else if previous != generation {
                    throw .damaged(
                        path: path, offset: start,
                        reason: "journal frame for generation \(record.generation) follows generation \(generation)")
                }
            } catch {
                guard salvaging else { throw error }
                // Salvage: skip to the next frame whose header holds, and go on.
                // (A frame whose header holds says where the next begins; else search.)
                let next: Int?
                // (A salvaging read has the whole file in memory: `all` does not copy it.)
                let file = try bytes.all()
                if let length = Frame.lengthIfHeaderHolds(in: file, at: start) {
                    next = start + length < file.count ? start + length : nil
                } else {
                    next = Frame.nextHeader(in: file, after: start)
                }
                lost.append(LostSave(offset: start, length: (next ?? bytes.count) - start, generations: nil, reason: error.description))
                guard let next else { break }
                offset = next
                continue
            }
            for put in record.puts {
                tables[put.entity].put(put.id, put.row)
                touched[put.entity].insert(put.id)
            }
            for delete in record.deletes {
                tables[delete.entity].delete(delete.id)
                touched[delete.entity].insert(delete.id)
            }
            for (e, next) in record.nextRawIDs { tables[e].reserveIdentifiers(below: next) }
            if let pruning = record.pruning {
                pruned.formUnion(pruning.generations)
                prunedListed += pruning.generations.count
                prunedHorizon = max(prunedHorizon, pruning.horizon)
            }
            if let transaction = record.transaction { history.append(transaction) }
            generation = record.generation
            frames.append(FrameSummary(kind: .commit, offset: start, length: frame.length, rawLength: frame.payload.count))
            offset += frame.length
            journalFrames += 1
        }

        if salvaging, !lost.isEmpty {
            // A lost save may have inserted rows that later saves refer to: new
            // identifiers start above every one referred to, so none is handed out
            // again to a row those references would then name.
            var highest = [Int64](repeating: 0, count: schema.entities.count)
            for (e, entity) in schema.entities.enumerated() {
                for (j, relationship) in entity.relationships.enumerated() {
                    guard let d = schema.entityIndex(named: relationship.destination) else { continue }
                    tables[e].forEach(slot: entity.slot(ofRelationship: j)) { _, value in
                        for id in value.referencedRows { highest[d] = max(highest[d], id.rawValue) }
                    }
                }
            }
            for e in tables.indices where highest[e] > 0 { tables[e].reserveIdentifiers(below: highest[e] + 1) }
        }

        // A deletion lists only transactions present, each once.
        if prunedListed > 0 || prunedHorizon > 0 {
            guard history.remove(generations: pruned).count == prunedListed || salvaging, pruned.count == prunedListed || salvaging else {
                throw .damaged(path: path, offset: snapshotLength, reason: "the journal deletes history it does not hold")
            }
            history.horizon = max(history.horizon, prunedHorizon)
        }

        // Ordered indexes: the snapshot's order (checked) merged with the rows the
        // journal touched (sorted); entities without a stored order are sorted whole.
        // Each index is built on its own, on every core.
        let jobs = schema.entities.indices.flatMap { e in schema.entities[e].orderedIndexSlots.indices.map { (e, $0) } }
        let (builtTables, builtTouched) = (tables, touched)
        // Each stored order (8 bytes a row) goes to its build and is dropped there.
        let storedOrders = Locked(orders)
        orders = []
        let built = concurrentMap(jobs.count) { k in
            let (e, i) = jobs[k]
            let entity = schema.entities[e], slots = entity.orderedIndexSlots[i]
            let order = storedOrders.withLock { all in
                defer { all[e][i] = nil }
                return all[e][i]
            }
            // The order is derived data: one that does not check out (another build's
            // comparison, say) is rebuilt by sorting rather than refused.
            return order.flatMap {
                OrderedIndex(slots: slots, of: entity, table: builtTables[e], order: $0, touched: builtTouched[e])
            } ?? OrderedIndex(slots: slots, of: entity, table: builtTables[e])
        }
        var indexes: [[OrderedIndex]] = schema.entities.map { _ in [] }
        for (k, (e, _)) in jobs.enumerated() { indexes[e].append(built[k]) }

        var finalSchema = schema
        if let placement, let target {
            history = history.mapChanges { $0.moved(to: placement[$0.entity]) }
            var placed = tables
            var placedIndexes = indexes
            for (documentIndex, applicationIndex) in placement.enumerated() {
                placed[applicationIndex] = tables[documentIndex]
                placedIndexes[applicationIndex] = indexes[documentIndex]
            }
            tables = placed
            indexes = placedIndexes
            finalSchema = target
        }
        var version = StoreVersion(schema: finalSchema, tables: tables, generation: generation, orderedIndexes: indexes)
        version.history = history
        if let migration {
            do throws(SchemaMigration.Failure) {
                version = try SchemaMigration.migrate(version, to: migration.schema, hints: migration.hints)
            } catch {
                throw .schemaMismatch(path: path, reason: "it cannot be migrated to the application's schema: \(error)")
            }
        }
        let schemaVersion = migration == nil ? header.schemaVersion : nil
        return Contents(
            path: path, formatMajor: header.major, formatMinor: header.minor, snapshotGeneration: header.generation,
            version: version,
            snapshotLength: snapshotLength, journalLength: offset - snapshotLength, journalFrames: journalFrames,
            validLength: offset, tornTail: tornTail, frames: frames, blobs: blobs,
            needsRewrite: placement != nil || migration != nil, storeIdentifier: storeIdentifier,
            schemaVersion: schemaVersion, lost: lost)
    }
}

/// Says how a document's schema differs from the application's, for error messages.
enum SchemaDifference {
    /// For each document entity, the application's position of the same entity,
    /// when the two schemas differ only in entity order and Codable type names.
    static func placement(of document: StoreSchema, in application: StoreSchema) -> [Int]? {
        guard document.entities.count == application.entities.count else { return nil }
        var order: [Int] = []
        for entity in document.entities {
            guard let i = application.entityIndex(named: entity.name),
                  normalized(entity) == normalized(application.entities[i])
            else { return nil }
            order.append(i)
        }
        return order
    }

    private static func normalized(_ entity: EntityDescription) -> EntityDescription {
        var entity = entity
        for i in entity.attributes.indices { entity.attributes[i].type = normalized(entity.attributes[i].type) }
        return entity
    }

    private static func normalized(_ type: ValueType) -> ValueType {
        switch type {
        case .codable: .codable("")
        case let .array(element): .array(normalized(element))
        case let .set(element): .set(normalized(element))
        case let .dictionary(key, value): .dictionary(key: normalized(key), value: normalized(value))
        default: type
        }
    }

    static func describe(document: StoreSchema, application: StoreSchema) -> String {
        let documentNames = document.entities.map(\.name)
        let applicationNames = application.entities.map(\.name)
        if Set(documentNames) != Set(applicationNames) {
            let missing = Set(documentNames).subtracting(applicationNames).sorted()
            let added = Set(applicationNames).subtracting(documentNames).sorted()
            return "entities only in the document: \(missing); only in the application: \(added)"
        }
        for entity in application.entities {
            guard let stored = document.entities.first(where: { $0.name == entity.name }), stored != entity else { continue }
            if stored.attributes != entity.attributes {
                return "\(entity.name)'s attributes differ: document \(stored.attributes.map { "\($0.name): \($0.type)" }), application \(entity.attributes.map { "\($0.name): \($0.type)" })"
            }
            if stored.relationships != entity.relationships { return "\(entity.name)'s relationships differ" }
            return "\(entity.name)'s unique constraints or indexes differ"
        }
        return "the entities are in another order"
    }
}
