/// The values of an index key, in slot order.
///
/// Most indexes have one slot, so the first value is held inline and only the
/// others in an array: a one-slot key is no allocation of its own (the empty
/// array is shared), where an array per key cost one per index entry, and
/// comparing two keys reads their first values without following a pointer.
public struct IndexKey: Sendable, Hashable, CustomStringConvertible {
    /// The first slot's value.
    public let head: Value
    /// The values of the other slots; empty for one-slot keys.
    public let tail: [Value]

    /// A one-slot key.
    @inline(__always)
    public init(_ value: Value) {
        head = value
        tail = []
    }

    /// A key of `values` (at least one).
    public init(_ values: [Value]) {
        precondition(!values.isEmpty, "an index key has at least one value")
        head = values[0]
        tail = values.count == 1 ? [] : Array(values.dropFirst())
    }

    /// The key of `row` over `slots`.
    @inline(__always)
    public init(of row: Row, slots: [Int]) {
        head = row[slots[0]]
        tail = slots.count == 1 ? [] : slots.dropFirst().map { row[$0] }
    }

    public var count: Int { 1 + tail.count }

    public subscript(i: Int) -> Value { i == 0 ? head : tail[i - 1] }

    /// The values as an array (allocates; for tools and tests).
    public var values: [Value] { [head] + tail }

    public var description: String { values.description }

    /// Whether the parts in `range` tie with those of `other` in index order
    /// (`Value.indexCompare`), as a sort ties them: a NaN ties a NaN, where `==` says
    /// they differ (a walk that stopped at the first NaN after its window's last
    /// missed the NaNs that the sort's later keys rank first).
    public func partsEqual(_ other: IndexKey, in range: Range<Int>) -> Bool {
        range.allSatisfy { Value.indexCompare(self[$0], other[$0]) == 0 }
    }

    /// Three-way comparison in index order (`Value.indexCompare`), part by part over
    /// the parts both keys have.
    /// - Complexity: O(parts compared)
    @inline(__always)
    public static func compare(_ a: IndexKey, _ b: IndexKey) -> Int {
        let c = Value.indexCompare(a.head, b.head)
        if c != 0 || (a.tail.isEmpty && b.tail.isEmpty) { return c }
        for (x, y) in zip(a.tail, b.tail) {
            let c = Value.indexCompare(x, y)
            if c != 0 { return c }
        }
        return 0
    }

    /// Three-way comparison of the first `min(count, prefix.count)` parts with `prefix`.
    @inline(__always)
    public static func compare(_ key: IndexKey, prefix: [Value]) -> Int {
        // Read through a buffer pointer: the parts are compared in place, not copied.
        prefix.withUnsafeBufferPointer { parts in
            guard let first = parts.first else { return 0 }
            let c = Value.indexCompare(key.head, first)
            if c != 0 || parts.count == 1 { return c }
            return key.tail.withUnsafeBufferPointer { tail in
                for i in 0..<min(tail.count, parts.count - 1) {
                    let c = Value.indexCompare(tail[i], parts[i + 1])
                    if c != 0 { return c }
                }
                return 0
            }
        }
    }
}
