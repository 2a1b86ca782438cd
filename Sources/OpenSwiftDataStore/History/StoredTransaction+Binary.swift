import Foundation

/// History's bytes (format 4): the history section ending each commit frame,
/// and the history frames of a snapshot. Docs/DocumentFormat.md specifies both.
extension ByteWriter {
    /// A transaction's changes.
    mutating func changes(_ changes: [StoredChange]) {
        varint(changes.count)
        for change in changes {
            switch change {
            case let .inserted(entity, first, count):
                byte(1)
                varint(entity)
                signed(first.rawValue)
                varint(count)
            case let .updated(entity, id, slots):
                byte(2)
                varint(entity)
                signed(id.rawValue)
                varint(slots.count)
                for slot in slots { varint(slot) }
            case let .deleted(entity, id, preserved):
                byte(3)
                varint(entity)
                signed(id.rawValue)
                varint(preserved.count)
                for slot in preserved.keys.sorted() {
                    varint(slot)
                    value(preserved[slot]!)
                }
            }
        }
    }

    /// A whole transaction, as history frames hold it.
    mutating func transaction(_ transaction: StoredTransaction) {
        varint(transaction.generation)
        double(transaction.timestamp.timeIntervalSinceReferenceDate)
        optionalString(transaction.author)
        changes(transaction.changes)
    }

    /// Generations ascending, as deltas.
    mutating func generations(_ generations: [UInt64]) {
        varint(generations.count)
        var previous: UInt64 = 0
        for g in generations {
            varint(g - previous)
            previous = g
        }
    }
}

extension ByteReader {
    mutating func changes(schema: StoreSchema) throws(Failure) -> [StoredChange] {
        func entity(_ r: inout ByteReader) throws(Failure) -> Int {
            let e = try r.count()
            guard e < schema.entities.count else { throw r.fail("entity #\(e) is not in the schema") }
            return e
        }
        func rowID(_ r: inout ByteReader) throws(Failure) -> RowID {
            let raw = try r.signed()
            guard raw > 0, raw <= DocumentFormat.maximumRowID else { throw r.fail("row identifier \(raw) out of range") }
            return RowID(raw)
        }
        var changes: [StoredChange] = []
        let n = try count(limit: bytes.count)
        // The writer records no transaction that changed nothing.
        guard n > 0 else { throw fail("a history transaction without changes") }
        for _ in 0..<n {
            let tag = try byte()
            let e = try entity(&self)
            let id = try rowID(&self)
            let slotCount = schema.entities[e].slotCount
            switch tag {
            case 1:
                let n = try count()
                guard n > 0, id.rawValue + Int64(n) - 1 <= DocumentFormat.maximumRowID else {
                    throw fail("inserted rows out of range")
                }
                changes.append(.inserted(entity: e, first: id, count: n))
            case 2:
                var slots: [Int] = []
                for _ in 0..<(try count(limit: slotCount)) {
                    let slot = try count()
                    guard slot < slotCount, (slots.last ?? -1) < slot else { throw fail("updated slot \(slot) out of range or order") }
                    slots.append(slot)
                }
                guard !slots.isEmpty else { throw fail("an update of no slot") }
                changes.append(.updated(entity: e, id: id, slots: slots))
            case 3:
                var preserved: [Int: Value] = [:]
                for _ in 0..<(try count(limit: slotCount)) {
                    let slot = try count()
                    guard slot < schema.entities[e].attributes.count, preserved[slot] == nil else {
                        throw fail("preserved slot \(slot) out of range or repeated")
                    }
                    let at = position
                    preserved[slot] = try value { (_: BlobReference) throws(Failure) -> Value in
                        throw Failure(offset: at, reason: "a preserved value refers to a blob")
                    }
                }
                changes.append(.deleted(entity: e, id: id, preserved: preserved))
            default:
                throw fail("unknown history change \(tag)")
            }
        }
        return changes
    }

    mutating func transaction(schema: StoreSchema) throws(Failure) -> StoredTransaction {
        let generation = try varint()
        let timestamp = Date(timeIntervalSinceReferenceDate: try double())
        let author = try optionalString()
        return StoredTransaction(generation: generation, timestamp: timestamp, author: author, changes: try changes(schema: schema))
    }

    mutating func generations() throws(Failure) -> [UInt64] {
        var result: [UInt64] = []
        var previous: UInt64 = 0
        for _ in 0..<(try count(limit: bytes.count)) {
            let delta = try varint()
            // Strictly ascending from generation 1: no transaction has generation 0.
            guard delta > 0, delta <= UInt64(Int64.max) - previous else {
                throw fail("history generations out of order")
            }
            previous += delta
            result.append(previous)
        }
        return result
    }
}
