import Foundation

/// One commit as history keeps it: who made it, when, and what it changed, in
/// the engine's terms (entity positions, row identifiers, slots).
///
/// The API module turns it into SwiftData's `DefaultHistoryTransaction` only when
/// a fetch returns it, so history costs a few bytes per change while it waits:
/// inserted rows are kept as runs of consecutive identifiers (a save of a million
/// new rows is one change here), updates as the slots whose values differ, and
/// deletions as the row plus the values of its `.preserveValueOnDeletion` slots.
public struct StoredTransaction: Sendable, Equatable {
    /// The generation the commit published: the transaction's token.
    public var generation: UInt64
    public var timestamp: Date
    public var author: String?
    /// In the order the commit applied them: deletions, then inserts and updates.
    public var changes: [StoredChange]

    public init(generation: UInt64, timestamp: Date, author: String?, changes: [StoredChange]) {
        self.generation = generation
        self.timestamp = timestamp
        self.author = author
        self.changes = changes
    }
}

/// One change of a `StoredTransaction`.
public enum StoredChange: Sendable, Equatable {
    /// Rows `first`, `first + 1`, … (`count` of them) of `entity` were inserted.
    case inserted(entity: Int, first: RowID, count: Int)
    /// Row `id` of `entity` changed in `slots` (ascending).
    case updated(entity: Int, id: RowID, slots: [Int])
    /// Row `id` of `entity` was deleted; `preserved` holds the values of its
    /// `.preserveValueOnDeletion` slots (the tombstone), by slot.
    case deleted(entity: Int, id: RowID, preserved: [Int: Value])

    public var entity: Int {
        switch self {
        case let .inserted(entity, _, _), let .updated(entity, _, _), let .deleted(entity, _, _): entity
        }
    }
}

extension StoredTransaction {
    /// The transaction of the commit that turned `old` into `new`: `inserted` and
    /// `deleted` rows as the commit listed them, and every row of `written` that
    /// `old` already held as an update of the slots whose values differ. Nil when
    /// the commit changed nothing a reader could see (updates to equal values).
    ///
    /// `preserved` lists, per entity, the slots a tombstone keeps.
    /// - Complexity: O(inserted + deleted + updated rows × slots)
    static func recording(
        from old: StoreVersion, to new: StoreVersion, inserted: EntityRows, written: EntityRows, deleted: [EntityRow],
        author: String?, preserved: [[Int]], timestamp: Date
    ) -> StoredTransaction? {
        var changes: [StoredChange] = []
        for row in deleted {
            var values: [Int: Value] = [:]
            let slots = preserved.indices.contains(row.entity) ? preserved[row.entity] : []
            if !slots.isEmpty, let stored = old.row(row.id, of: row.entity) {
                for slot in slots where slot < stored.count && !stored[slot].isNull { values[slot] = stored[slot] }
            }
            changes.append(.deleted(entity: row.entity, id: row.id, preserved: values))
        }
        // Inserts as runs of consecutive identifiers.
        var run: (entity: Int, first: RowID, count: Int)?
        inserted.forEachRun { entity, first, count, step in
            // (A run counting up is taken whole.)
            let (length, pieces) = step > 0 ? (Int64(count), 1) : (1, Int64(count))
            for k in 0..<pieces {
                let id = first + k * step
                if let r = run, r.entity == entity, r.first.rawValue + Int64(r.count) == id {
                    run!.count += Int(length)
                    continue
                }
                if let r = run { changes.append(.inserted(entity: r.entity, first: r.first, count: r.count)) }
                run = (entity, RowID(id), Int(length))
            }
        }
        if let r = run { changes.append(.inserted(entity: r.entity, first: r.first, count: r.count)) }
        // Updates: written rows that existed before, once each. (A run of rows `old` did
        // not reach, as a bulk insert's, is passed over whole.)
        var seen = Set<EntityRow>()
        written.forEachRun { entity, first, count, step in
            let last = first + Int64(count - 1) * step
            if min(first, last) >= old.tables[entity].nextRawID { return }
            for k in 0..<Int64(count) {
                let row = EntityRow(entity: entity, id: RowID(first + k * step))
                guard old.tables[entity].contains(row.id), seen.insert(row).inserted,
                      let before = old.row(row.id, of: entity), let after = new.row(row.id, of: entity) else { continue }
                let slots = before.indices.filter { before[$0] != after[$0] }
                if !slots.isEmpty { changes.append(.updated(entity: entity, id: row.id, slots: slots)) }
            }
        }
        guard !changes.isEmpty else { return nil }
        return StoredTransaction(generation: new.generation, timestamp: timestamp, author: author, changes: changes)
    }

    /// The rows the transaction names, one by one: an insert run counts each row.
    public var changeCount: Int {
        changes.reduce(0) { total, change in
            if case let .inserted(_, _, count) = change { return total + count }
            return total + 1
        }
    }
}

extension StoredChange {
    /// The change made to entity `entity`, the same slots.
    func moved(to entity: Int) -> StoredChange {
        switch self {
        case let .inserted(_, first, count): .inserted(entity: entity, first: first, count: count)
        case let .updated(_, id, slots): .updated(entity: entity, id: id, slots: slots)
        case let .deleted(_, id, preserved): .deleted(entity: entity, id: id, preserved: preserved)
        }
    }

    /// The change in a migrated schema: made to `entity`, with each slot moved as
    /// `slots` says (a slot it lacks was dropped). An update left with no slot is
    /// no change.
    func moved(to entity: Int, slots: [Int: Int]) -> StoredChange? {
        switch self {
        case let .inserted(_, first, count):
            return .inserted(entity: entity, first: first, count: count)
        case let .updated(_, id, old):
            let new = old.compactMap { slots[$0] }.sorted()
            return new.isEmpty ? nil : .updated(entity: entity, id: id, slots: new)
        case let .deleted(_, id, preserved):
            var kept: [Int: Value] = [:]
            for (slot, value) in preserved { if let new = slots[slot] { kept[new] = value } }
            return .deleted(entity: entity, id: id, preserved: kept)
        }
    }
}
