/// One end of an index range, given as values: compared on the first
/// `prefix.count` key parts, so a range can constrain a prefix of a compound key.
/// The query planner makes these; each index turns them into bounds on its own keys.
public struct IndexBound: Sendable, Hashable {
    public var prefix: [Value]
    public var inclusive: Bool
    public init(_ prefix: [Value], inclusive: Bool) {
        self.prefix = prefix
        self.inclusive = inclusive
    }
}

extension BTree where Key == IndexKey {
    /// Adds an entry for the key of `values`.
    /// - Complexity: O(log n)
    public mutating func insert(_ values: [Value], row: RowID) { insert(IndexKey(values), row: row) }

    /// Removes the entry for the key of `values` and `row`, if present.
    /// - Complexity: O(log n)
    public mutating func remove(_ values: [Value], row: RowID) { remove(IndexKey(values), row: row) }

    /// Calls `body` with each entry between `lower` and `upper` (nil: unbounded), in
    /// index order or, with `reverse`, backwards, until `body` returns false.
    /// - Complexity: O(log n + k) for k entries visited.
    public func scan(from lower: IndexBound?, to upper: IndexBound?, reverse: Bool = false, _ body: (Entry) throws -> Bool) rethrows {
        try scan(from: lower.map(Bound.init), to: upper.map(Bound.init), reverse: reverse, body)
    }

    /// How many entries lie between `lower` and `upper`, up to `cap` (`count(from:to:cap:)`).
    /// - Complexity: O(log n + k / b) for k entries counted, b entries a leaf.
    public func count(from lower: IndexBound?, to upper: IndexBound?, cap: Int = .max) -> Int {
        count(from: lower.map(Bound.init), to: upper.map(Bound.init), cap: cap)
    }
}

extension BTree<IndexKey>.Bound {
    /// The bound at `bound`'s values.
    init(_ bound: IndexBound) {
        self.init(bound.prefix, inclusive: bound.inclusive, decoding: ())
    }
}
