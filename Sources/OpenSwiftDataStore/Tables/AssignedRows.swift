/// The permanent rows a commit gave the temporary rows of its change set.
///
/// A table of (temporary row, permanent row) pairs sorted by temporary row and
/// searched by halving: 24 bytes an insert, where a dictionary held about 60 at the
/// peak of a large save (its buckets, at three-quarters load) and hashed every key.
public struct AssignedRows: Sendable {
    public struct Pair: Sendable, Hashable {
        public var temporary: EntityRow
        public var permanent: RowID
    }

    /// Sorted by `temporary` once `seal()` ran.
    public private(set) var pairs: [Pair] = []

    public init() {}

    /// Room for `count` pairs.
    mutating func reserveCapacity(_ count: Int) { pairs.reserveCapacity(count) }

    /// Records that `temporary` became `permanent`; `seal()` before looking up.
    /// - Complexity: amortized O(1)
    mutating func append(_ temporary: EntityRow, _ permanent: RowID) {
        pairs.append(Pair(temporary: temporary, permanent: permanent))
    }

    /// Sorts the pairs for lookups. Pairs appended in either temporary-row order are
    /// only checked (and reversed): a context's temporary rows count down as models
    /// are made, and it hands its inserts over in that order.
    /// - Complexity: O(n) when in order either way, else O(n log n)
    mutating func seal() {
        if pairs.isSorted(by: Self.less) { return }
        if pairs.isSorted(by: { Self.less($1, $0) }) { return pairs.reverse() }
        pairs.sort(by: Self.less)
    }

    private static func less(_ a: Pair, _ b: Pair) -> Bool { less(a.temporary, b.temporary) }

    private static func less(_ a: EntityRow, _ b: EntityRow) -> Bool {
        a.id != b.id ? a.id < b.id : a.entity < b.entity
    }

    public var isEmpty: Bool { pairs.isEmpty }
    public var count: Int { pairs.count }

    /// The permanent rows, in temporary-row order.
    public var values: [RowID] { pairs.map(\.permanent) }

    /// The permanent row of `temporary`, if the commit inserted it.
    /// - Complexity: O(log n)
    public subscript(temporary: EntityRow) -> RowID? {
        var low = 0, high = pairs.count
        while low < high {
            let mid = (low + high) / 2
            if Self.less(pairs[mid].temporary, temporary) { low = mid + 1 } else { high = mid }
        }
        return low < pairs.count && pairs[low].temporary == temporary ? pairs[low].permanent : nil
    }
}

extension Array {
    /// Whether the elements are in `less`'s order.
    /// - Complexity: O(n)
    func isSorted(by less: (Element, Element) -> Bool) -> Bool {
        indices.dropFirst().allSatisfy { !less(self[$0], self[$0 - 1]) }
    }
}
