/// Index entries in index order, for building B-trees in bulk: by sorting a
/// table, or from an order a document stored (checked, not trusted).
enum IndexOrder {
    /// The key of row `id` of `table` over `slots`, read from its columns; nil when
    /// no row has that identifier.
    static func key(of id: RowID, in table: Table, slots: [Int]) -> IndexKey? {
        guard let (s, p) = table.locate(id) else { return nil }
        let columns = table.segments[s].columns
        return slots.count == 1 ? IndexKey(columns[slots[0]].value(at: p)) : IndexKey(slots.map { columns[$0].value(at: p) })
    }

    /// Every row of `table` as an entry of the index over `slots`, sorted.
    /// - Complexity: O(n log n)
    static func sorted(_ table: Table, slots: [Int]) -> [BTree.Entry] {
        var entries: [BTree.Entry] = []
        entries.reserveCapacity(table.count)
        if slots.count == 1 {
            table.forEach(slot: slots[0]) { id, value in entries.append(BTree.Entry(key: IndexKey(value), row: id)) }
        } else {
            table.forEach { id, row in entries.append(BTree.Entry(key: IndexKey(of: row, slots: slots), row: id)) }
        }
        entries.sort(by: BTree.less)
        return entries
    }

    /// The entries of the stored `order` (the snapshot's rows in index order) for
    /// rows the journal did not touch, merged with the touched rows that still
    /// exist, sorted. Nil if `order` is not the snapshot's rows in index order.
    /// - Complexity: O(n + k log k) for n rows and k touched ones
    static func merged(_ order: [RowID], table: Table, slots: [Int], touched: Set<RowID>) -> [BTree.Entry]? {
        var base: [BTree.Entry] = []
        base.reserveCapacity(order.count)
        var seen = Set<RowID>(minimumCapacity: touched.count)
        for id in order {
            if touched.contains(id) {
                // A row the journal rewrote or deleted: its entry comes from `extra`.
                guard seen.insert(id).inserted else { return nil }
                continue
            }
            guard let key = key(of: id, in: table, slots: slots) else { return nil }
            let entry = BTree.Entry(key: key, row: id)
            if let last = base.last, !BTree.less(last, entry) { return nil }
            base.append(entry)
        }
        var extra: [BTree.Entry] = []
        for id in touched {
            guard let key = key(of: id, in: table, slots: slots) else { continue }
            extra.append(BTree.Entry(key: key, row: id))
        }
        // Every untouched row must be in the order exactly once.
        let untouchedInTable = table.count - extra.count
        guard base.count == untouchedInTable else { return nil }
        extra.sort(by: BTree.less)
        guard !extra.isEmpty else { return base }
        var result: [BTree.Entry] = []
        result.reserveCapacity(base.count + extra.count)
        var i = 0
        var j = 0
        while i < base.count, j < extra.count {
            if BTree.less(extra[j], base[i]) {
                result.append(extra[j])
                j += 1
            } else {
                result.append(base[i])
                i += 1
            }
        }
        result.append(contentsOf: base[i...])
        result.append(contentsOf: extra[j...])
        return result
    }
}
