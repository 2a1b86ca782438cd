/// The order and the window of a query's results, shared by fetches (`FetchQuery`)
/// and `osd query`: sort keys compared value by value in `Value`'s order (NaN above
/// every number and tied with NaN, as in an index), ties kept in the order the rows
/// came in (row order), and only what the window reaches kept when it is small (a
/// top-k heap).
public enum RowOrder {
    /// `items` in the order of the sort keys, stable (ties keep their order in
    /// `items`); with `reach`, only the first `reach` of that order.
    ///
    /// - Parameters:
    ///   - descending: per sort key, whether it sorts in descending order.
    ///   - value: the value of sort key `k` of an item.
    /// - Complexity: O(n log n); O(n log k) for the first k when k is under half of n.
    @inlinable
    public static func sorted<Item>(
        _ items: [Item], descending: [Bool], reach: Int? = nil, value: (Item, Int) -> Value
    ) -> [Item] {
        let ranked = Array(items.enumerated())
        func less(_ a: (offset: Int, element: Item), _ b: (offset: Int, element: Item)) -> Bool {
            for k in descending.indices {
                // In index order (`Value.indexCompare`): a NaN ties a NaN, so later
                // keys and then row order rank them, as an index that serves the
                // sort does. (With `==`, a NaN pair ended the comparison undecided.)
                let c = keyOrder(value(a.element, k), value(b.element, k))
                if c == 0 { continue }
                return descending[k] ? c > 0 : c < 0
            }
            return a.offset < b.offset
        }
        if let reach, reach < ranked.count / 2 { return smallest(reach, of: ranked, by: less).map(\.element) }
        return ranked.sorted(by: less).map(\.element)
    }
}

extension RowOrder {
    /// `Value.indexCompare`, called rather than inlined: inlined into `sorted`, which
    /// callers' specializations of `fetch` inline, it made a W2 lookup copy its fetch
    /// descriptor once more (about 770 instructions).
    @usableFromInline @inline(never)
    static func keyOrder(_ x: Value, _ y: Value) -> Int { Value.indexCompare(x, y) }
}

/// The positions a fetch offset and limit keep of a query's results.
public enum QueryWindow {
    /// The positions an offset and a limit keep out of `count` results: a negative
    /// offset counts as 0, a limit of 0 or less as none.
    /// - Complexity: O(1)
    public static func range(of count: Int, offset: Int?, limit: Int?) -> Range<Int> {
        let offset = min(max(offset ?? 0, 0), count)
        var end = count
        if let limit, limit > 0 { end = min(end, offset + min(limit, count)) }
        return offset..<end
    }

    /// How many results a window of `limit` after `offset` needs, saturating
    /// (`fetchLimit = Int.max` is a way to say "no limit"); nil for no limit.
    /// - Complexity: O(1)
    public static func reach(limit: Int?, offset: Int?) -> Int? {
        guard let limit, limit > 0 else { return nil }
        let (end, overflow) = limit.addingReportingOverflow(max(offset ?? 0, 0))
        return overflow ? .max : end
    }
}
