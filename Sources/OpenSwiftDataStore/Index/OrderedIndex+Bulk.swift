/// Entries added in bulk: how a large insert indexes its rows (`StoreVersion`'s bulk
/// insert). Sorting the new entries and merging them into freshly packed nodes is
/// O(n + k log k); adding them one by one descends, and copies or splits, a path of
/// the tree per entry.
extension OrderedIndex {
    /// New entries of an index, sorted in index order, on the index's own key.
    enum Pending {
        case general([BTree<IndexKey>.Entry])
        case scalar(PackedEntries)
        case string(PermutedEntries<StringKey>)
        /// Strings of a column with few distinct ones, counted (`IndexOrder.counted`).
        case groupedString(GroupedEntries<StringKey>)
    }

    /// The entries of `rows`, stored from `firstID` on (`BulkRows` says where),
    /// sorted; nil when a value does not fit the index's packed key (such rows are
    /// added one by one, which turns the index general).
    ///
    /// Numbers and dates sort by radix (`IndexOrder.sortedPacked`); strings are counted
    /// when few are distinct (`IndexOrder.counted`), else sorted (`IndexOrder.sorted`).
    /// Rows come in order.
    /// - Complexity: O(k) for numbers, O(k log k) at worst for k rows
    func pending(_ rows: StoreVersion.BulkRows, firstID: Int64) -> Pending? {
        let slot = slots[0]
        var fits = true
        switch layout {
        case let .scalar(kind):
            // Keys and rows apart: 24 bytes a row while sorting, where entries took 32.
            var keys: [UInt64] = [], ids: [UInt32] = []
            keys.reserveCapacity(rows.count)
            ids.reserveCapacity(rows.count)
            rows.forEachValue(slot: slot) { offset, value in
                guard fits, let key = kind.pack(value) else {
                    fits = false
                    return
                }
                keys.append(key.bits)
                ids.append(BTree<PackedKey>.packed(RowID(firstID + offset)))
            }
            guard fits else { return nil }
            return .scalar(IndexOrder.sortedPacked(keys: consume keys, rows: consume ids))
        case .string:
            if case let .table(table) = rows.storage,
               let grouped = IndexOrder.counted(table, slot: slot, rowShift: firstID - 1) {
                return .groupedString(grouped)
            }
            var entries: [BTree<StringKey>.Entry] = []
            entries.reserveCapacity(rows.count)
            rows.forEachValue(slot: slot) { offset, value in
                guard fits, case let .string(string) = value else {
                    fits = false
                    return
                }
                entries.append(.init(key: StringKey(string: string), row: RowID(firstID + offset)))
            }
            guard fits else { return nil }
            return .string(IndexOrder.sorted(entries))
        case .general:
            var entries: [BTree<IndexKey>.Entry] = []
            entries.reserveCapacity(rows.count)
            rows.forEachRow { offset, row in entries.append(.init(key: key(of: row), row: RowID(firstID + offset))) }
            entries.sort(by: BTree.less)
            return .general(entries)
        }
    }

    /// Whether two keys of `pending`, or one of them and a key the index holds, are
    /// equal as a unique constraint counts them (`holder`): `==` values, none of them
    /// nil (NaN equals nothing).
    /// - Complexity: O(k log n) for k pending entries and n held ones
    func clashes(_ pending: Pending) -> Bool {
        switch pending {
        case let .scalar(entries):
            guard case let .scalar(kind) = layout else { return true }
            return Self.clashes(entries, with: scalars) { !kind.isUnequalWhenTied($0) }
        case let .string(entries):
            // Strings tie in index order exactly when they are `==`.
            return Self.clashes(entries, with: strings) { _ in true }
        case let .groupedString(entries):
            return Self.clashes(entries, with: strings) { _ in true }
        case let .general(entries):
            for i in entries.indices {
                let key = entries[i].key
                guard !key.head.isNull, !key.tail.contains(where: \.isNull) else { continue }
                // Tied is not always equal (two NaNs tie), so look through the whole run
                // of keys tied with this one.
                var j = i - 1
                while j >= 0, IndexKey.compare(entries[j].key, key) == 0 {
                    if entries[j].key == key { return true }
                    j -= 1
                }
                var held = false
                forEachRow(equalTo: key) { _ in
                    held = true
                    return false
                }
                if held { return true }
            }
        }
        return false
    }

    /// Whether two of `entries` (sorted) or one of them and an entry of `tree` tie,
    /// among the keys `counts` lets take part: packed keys tie exactly when equal.
    private static func clashes<Key, Entries: RandomAccessCollection<BTree<Key>.Entry>>(
        _ entries: Entries, with tree: BTree<Key>, counts: (Key) -> Bool
    ) -> Bool where Entries.Index == Int {
        for i in entries.indices where counts(entries[i].key) {
            if i > entries.startIndex, Key.compare(entries[i - 1].key, entries[i].key) == 0 { return true }
            var held = false
            tree.forEachEntry(tiedWith: entries[i].key) { _ in
                held = true
                return false
            }
            if held { return true }
        }
        return false
    }

    /// Adds the entries of `pending`, which `pending(_:)` made from this index and
    /// which name rows the index does not hold yet.
    /// - Complexity: O(n + k) for n entries and k pending ones
    mutating func add(_ pending: Pending) {
        switch pending {
        case let .scalar(entries): scalars = scalars.merged(with: entries)
        case let .string(entries): strings = strings.merged(with: entries)
        case let .groupedString(entries): strings = strings.merged(with: entries)
        case let .general(entries): general = general.merged(with: entries)
        }
    }
}
