import Foundation

/// One save, as the journal holds it: the full new state of every row the commit
/// wrote, and the rows it deleted. Replaying records in generation order onto the
/// snapshot rebuilds the store; each record is idempotent.
public struct CommitRecord: Sendable {
    public struct Put: Sendable {
        public var entity: Int
        public var id: RowID
        public var row: Row
    }

    /// The generation the commit published (the snapshot's plus one, plus one…).
    public var generation: UInt64
    public var timestamp: Date
    public var author: String?
    /// For each entity that allocated identifiers: the raw value its next row gets.
    public var nextRawIDs: [(entity: Int, next: Int64)]
    public var puts: [Put]
    public var deletes: [EntityRow]
    /// What history keeps of the commit (format 4): its changes, when it made any.
    public var transaction: StoredTransaction?
    /// History this commit deleted (`Store.deleteHistory`): the generations
    /// removed and the horizon after it.
    public var pruning: (horizon: UInt64, generations: [UInt64])?
    /// (Format 4.1.) The generation of the frame before this one in the same file,
    /// written only when it is not `generation - 1`: a document of a group
    /// (`DocumentGroup`) journals only the saves that touched its entities, so its
    /// generations skip, and this keeps a missing frame detectable.
    public var previous: UInt64?

    /// The record of the commit that turned `old` into `new`, which wrote the rows
    /// `gathered` holds (`JournalRows`: new rows' values as written, the rest read
    /// back from `new`) and deleted `deleted`.
    /// - Complexity: O(rows written), plus a set of them when a stored row was rewritten.
    init(
        from old: StoreVersion, to new: StoreVersion, gathered: JournalRows, deleted: [EntityRow], author: String?,
        timestamp: Date, transaction: StoredTransaction?
    ) {
        generation = new.generation
        self.timestamp = timestamp
        self.author = author
        self.transaction = transaction
        nextRawIDs = new.tables.indices.compactMap { e in
            new.tables[e].nextRawID != old.tables[e].nextRawID ? (e, new.tables[e].nextRawID) : nil
        }
        deletes = deleted
        var gathered = gathered
        if gathered.rewritesRows {
            var seen = Set<EntityRow>()
            puts = gathered.takePuts().compactMap { put in
                guard seen.insert(EntityRow(entity: put.entity, id: put.id)).inserted,
                      let row = new.row(put.id, of: put.entity) else { return nil }
                return Put(entity: put.entity, id: put.id, row: row)
            }
            return
        }
        let readBack = gathered.readBack
        puts = gathered.takePuts()
        var missing: [Int] = []
        for i in readBack {
            // (The commit stored every new row; one it did not is left out, as the
            // read-back of rewritten rows leaves out a row that is gone.)
            if let row = new.row(puts[i].id, of: puts[i].entity) { puts[i].row = row } else { missing.append(i) }
        }
        for i in missing.reversed() { puts.remove(at: i) }
    }

    init(
        generation: UInt64, timestamp: Date, author: String?, nextRawIDs: [(entity: Int, next: Int64)], puts: [Put],
        deletes: [EntityRow], transaction: StoredTransaction? = nil, pruning: (horizon: UInt64, generations: [UInt64])? = nil
    ) {
        self.transaction = transaction
        self.pruning = pruning
        self.generation = generation
        self.timestamp = timestamp
        self.author = author
        self.nextRawIDs = nextRawIDs
        self.puts = puts
        self.deletes = deletes
    }
}

extension ByteWriter {
    mutating func commit(
        _ record: CommitRecord, schema: StoreSchema, external: (Data) throws(DocumentError) -> BlobReference
    ) throws(DocumentError) {
        varint(record.generation)
        double(record.timestamp.timeIntervalSinceReferenceDate)
        optionalString(record.author)
        varint(record.nextRawIDs.count)
        for (entity, next) in record.nextRawIDs {
            varint(entity)
            signed(next)
        }
        varint(record.puts.count)
        for put in record.puts {
            varint(put.entity)
            signed(put.id.rawValue)
            try row(put.row, of: schema.entities[put.entity], external: external)
        }
        varint(record.deletes.count)
        for delete in record.deletes {
            varint(delete.entity)
            signed(delete.id.rawValue)
        }
        // (Format 4.) The history section.
        byte((record.transaction == nil ? 0 : 1) | (record.pruning == nil ? 0 : 2) | (record.previous == nil ? 0 : 4))
        if let transaction = record.transaction { changes(transaction.changes) }
        if let pruning = record.pruning {
            varint(pruning.horizon)
            generations(pruning.generations)
        }
        if let previous = record.previous { varint(previous) }
    }
}

extension ByteReader {
    /// A commit frame's payload; `history` says whether it ends with a history
    /// section (format 4 and later).
    mutating func commit(
        schema: StoreSchema, history: Bool, blob: (BlobReference) throws(Failure) -> Value
    ) throws(Failure) -> CommitRecord {
        let entityCount = schema.entities.count
        func entity(_ r: inout ByteReader) throws(Failure) -> Int {
            let e = try r.count()
            guard e < entityCount else { throw r.fail("entity #\(e) is not in the schema") }
            return e
        }
        func rowID(_ r: inout ByteReader) throws(Failure) -> RowID {
            let raw = try r.signed()
            guard raw > 0, raw <= DocumentFormat.maximumRowID else { throw r.fail("row identifier \(raw) out of range") }
            return RowID(raw)
        }
        let generation = try varint()
        let timestamp = Date(timeIntervalSinceReferenceDate: try double())
        let author = try optionalString()
        var nextRawIDs: [(entity: Int, next: Int64)] = []
        for _ in 0..<(try count(limit: entityCount)) {
            let e = try entity(&self)
            let next = try signed()
            guard next > 0, next <= DocumentFormat.maximumRowID + 1 else { throw fail("next row identifier \(next) out of range") }
            nextRawIDs.append((e, next))
        }
        var puts: [CommitRecord.Put] = []
        for _ in 0..<(try count(limit: bytes.count)) {
            let e = try entity(&self)
            let id = try rowID(&self)
            let row = try self.row(slotCount: schema.entities[e].slotCount, blob: blob)
            puts.append(CommitRecord.Put(entity: e, id: id, row: row))
        }
        var deletes: [EntityRow] = []
        for _ in 0..<(try count(limit: bytes.count)) {
            let e = try entity(&self)
            deletes.append(EntityRow(entity: e, id: try rowID(&self)))
        }
        var transaction: StoredTransaction?
        var pruning: (horizon: UInt64, generations: [UInt64])?
        var previous: UInt64?
        if history {
            let flags = try byte()
            guard flags & ~7 == 0 else { throw fail("unknown history flags \(flags)") }
            if flags & 1 != 0 {
                transaction = StoredTransaction(
                    generation: generation, timestamp: timestamp, author: author, changes: try changes(schema: schema))
            }
            if flags & 2 != 0 {
                let horizon = try varint()
                let removed = try generations()
                guard horizon < generation, removed.allSatisfy({ $0 <= horizon }) else {
                    throw fail("history deleted past the commit's generation")
                }
                pruning = (horizon, removed)
            }
            if flags & 4 != 0 {
                let before = try varint()
                guard before < generation else { throw fail("previous generation \(before) not before \(generation)") }
                previous = before
            }
        }
        var record = CommitRecord(
            generation: generation, timestamp: timestamp, author: author, nextRawIDs: nextRawIDs, puts: puts, deletes: deletes,
            transaction: transaction, pruning: pruning)
        record.previous = previous
        return record
    }
}
