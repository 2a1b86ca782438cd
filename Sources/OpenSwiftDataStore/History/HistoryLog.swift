/// The store's history: its transactions in generation order, shared between
/// store versions the way tables are.
///
/// Transactions sit in fixed-capacity chunks. A commit appends in place to the
/// last chunk past the count the published version knows, so publishing costs
/// O(1) and no reader sees a slot it did not publish; a version that is not the
/// tip (a failed commit's, say) copies the chunk before appending. Deleting
/// history builds new chunks (O(history)), which is rare and off the save path.
///
/// `horizon` is the latest generation whose transaction was deleted: a token
/// before it has lost part of what follows it, so a fetch from it is refused.
public struct HistoryLog: Sendable {
    static let chunkCapacity = 256

    private var chunks: [HistoryChunk] = []
    /// Number of transactions.
    public private(set) var count = 0
    /// The latest generation deleted from history (0 when nothing was).
    public internal(set) var horizon: UInt64 = 0

    public init() {}

    /// A log of `transactions` (in ascending generations) whose history up to
    /// `horizon` was deleted: how a store that keeps history elsewhere (a database
    /// table) hands it to the API's history queries.
    /// - Complexity: O(n)
    public init(transactions: [StoredTransaction], horizon: UInt64) {
        for transaction in transactions { append(transaction) }
        self.horizon = horizon
    }

    public var isEmpty: Bool { count == 0 }

    /// Appends `transaction`, whose generation must be greater than every other's.
    /// - Complexity: O(1) amortized
    mutating func append(_ transaction: StoredTransaction) {
        precondition(last.map { $0.generation < transaction.generation } ?? true, "history out of order")
        let slot = count % Self.chunkCapacity
        if slot == 0 {
            chunks.append(HistoryChunk())
        } else if chunks[chunks.count - 1].initialized != slot {
            // Another version appended past our count to this chunk: fork it.
            chunks[chunks.count - 1] = chunks[chunks.count - 1].prefix(slot)
        }
        chunks[chunks.count - 1].append(transaction)
        count += 1
    }

    /// Gives the log a last chunk of its own: a store starting from a version
    /// another store may also go on from calls it, so their commits never append to
    /// one shared chunk (each store's appends are serialized, two stores' are not).
    /// - Complexity: O(chunk capacity)
    public mutating func ownTail() {
        let slot = count % Self.chunkCapacity
        if slot != 0 { chunks[chunks.count - 1] = chunks[chunks.count - 1].prefix(slot) }
    }

    /// The last transaction.
    public var last: StoredTransaction? {
        count == 0 ? nil : self[count - 1]
    }

    /// The transaction at position `i` (0 is the oldest).
    /// - Complexity: O(1)
    public subscript(i: Int) -> StoredTransaction {
        precondition(i >= 0 && i < count, "history position out of range")
        return chunks[i / Self.chunkCapacity][i % Self.chunkCapacity]
    }

    /// The position of the first transaction with a generation above `generation`.
    /// - Complexity: O(log n)
    public func firstPosition(after generation: UInt64) -> Int {
        var low = 0, high = count
        while low < high {
            let mid = (low + high) / 2
            if self[mid].generation <= generation { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Calls `body` with each transaction whose generation is above `after` (all
    /// when nil) and at most `through`, oldest first, until it returns false.
    /// - Complexity: O(log n + transactions visited)
    public func forEach(after: UInt64?, through: UInt64? = nil, _ body: (StoredTransaction) throws -> Bool) rethrows {
        var i = after.map(firstPosition(after:)) ?? 0
        while i < count {
            let transaction = self[i]
            if let through, transaction.generation > through { return }
            guard try body(transaction) else { return }
            i += 1
        }
    }

    /// Removes the transactions of `generations` that are present; the horizon
    /// moves to the latest removed. Returns those generations, ascending.
    /// - Complexity: O(n)
    @discardableResult
    mutating func remove(generations: Set<UInt64>) -> [UInt64] {
        guard !generations.isEmpty else { return [] }
        var kept = HistoryLog()
        kept.horizon = horizon
        var removed: [UInt64] = []
        forEach(after: nil) { transaction in
            if generations.contains(transaction.generation) {
                removed.append(transaction.generation)
            } else {
                kept.append(transaction)
            }
            return true
        }
        if let latest = removed.last { kept.horizon = max(kept.horizon, latest) }
        self = kept
        return removed
    }

    /// Every transaction with its changes passed through `map`, which returns nil
    /// to drop a change (and a transaction left with none is dropped): how history
    /// follows a schema migration.
    /// - Complexity: O(n)
    func mapChanges(_ map: (StoredChange) -> StoredChange?) -> HistoryLog {
        var result = HistoryLog()
        result.horizon = horizon
        forEach(after: nil) { transaction in
            var mapped = transaction
            mapped.changes = transaction.changes.compactMap(map)
            if !mapped.changes.isEmpty { result.append(mapped) }
            return true
        }
        return result
    }
}

extension HistoryLog {
    /// Checks that generations strictly increase, stay at or below `generation`
    /// (the version's), and name entities and slots of `schema`.
    public func _checkInvariants(generation: UInt64, schema: StoreSchema) {
        precondition(horizon <= generation, "history horizon \(horizon) past generation \(generation)")
        var previous: UInt64 = 0
        forEach(after: nil) { transaction in
            precondition(transaction.generation > previous && transaction.generation <= generation, "history out of order")
            precondition(!transaction.changes.isEmpty, "an empty history transaction")
            previous = transaction.generation
            for change in transaction.changes {
                precondition(schema.entities.indices.contains(change.entity), "history names entity #\(change.entity)")
                let slotCount = schema.entities[change.entity].slotCount
                switch change {
                case let .inserted(_, first, count): precondition(first.rawValue > 0 && count > 0)
                case let .updated(_, _, slots): precondition(!slots.isEmpty && slots.allSatisfy { $0 < slotCount })
                case let .deleted(_, _, preserved): precondition(preserved.keys.allSatisfy { $0 < slotCount })
                }
            }
            return true
        }
    }
}

/// Up to `HistoryLog.chunkCapacity` transactions in a buffer that never moves.
///
/// Only the store's commit path appends, and it publishes the version that counts
/// the new slot afterwards (under the store's lock); readers read only slots below
/// their version's count. So reads and the append never touch the same slot.
final class HistoryChunk: @unchecked Sendable {
    private let base: UnsafeMutablePointer<StoredTransaction>
    /// Slots holding a transaction.
    private(set) var initialized = 0

    init() {
        base = .allocate(capacity: HistoryLog.chunkCapacity)
    }

    deinit {
        base.deinitialize(count: initialized)
        base.deallocate()
    }

    subscript(i: Int) -> StoredTransaction { base[i] }

    func append(_ transaction: StoredTransaction) {
        precondition(initialized < HistoryLog.chunkCapacity)
        (base + initialized).initialize(to: transaction)
        initialized += 1
    }

    /// A new chunk holding the first `n` transactions.
    func prefix(_ n: Int) -> HistoryChunk {
        let copy = HistoryChunk()
        for i in 0..<n { copy.append(base[i]) }
        return copy
    }
}
