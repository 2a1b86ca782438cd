/// Ordered indexes built in bulk: by sorting a table, or from an order a document
/// stored (checked, not trusted). Both end in `BTree(sorted:)`, which packs nodes.
/// Large inserts sort their new entries the same way (`OrderedIndex+Bulk`).
extension OrderedIndex {
    /// An index over `slots` of `entity` holding every row of `table`, built by sorting.
    /// - Complexity: O(n log n)
    public init(slots: [Int], of entity: EntityDescription, table: Table) {
        self.init(slots: slots, of: entity)
        switch layout {
        case let .scalar(kind):
            if var entries = IndexOrder.entries(table, slot: slots[0], kind.pack) {
                IndexOrder.sort(&entries)
                scalars = BTree(sorted: entries)
                return
            }
        case .string:
            if var entries = IndexOrder.entries(table, slot: slots[0], StringKey.init(packing:)) {
                IndexOrder.sort(&entries)
                strings = BTree(sorted: entries)
                return
            }
        case .general:
            break
        }
        layout = .general
        general = BTree(sorted: IndexOrder.sorted(table, slots: slots))
    }

    /// An index over `slots` of `entity` holding every row of `table`, from `order`
    /// (the snapshot's rows in index order) for rows the journal did not touch,
    /// merged with the touched rows that still exist, on packed keys when every value
    /// packs, else on general keys. Nil if `order` is not the snapshot's rows in
    /// index order.
    /// - Complexity: O(n + k log k) for n rows and k touched ones
    public init?(slots: [Int], of entity: EntityDescription, table: Table, order: [RowID], touched: Set<RowID>) {
        self.init(slots: slots, of: entity)
        let slot = slots[0]
        switch layout {
        case let .scalar(kind):
            if let entries = IndexOrder.merged(order, table: table, touched: touched, key: { id in
                table.packed(id, slot: slot, as: kind)
            }) {
                scalars = BTree(sorted: entries)
                return
            }
        case .string:
            if let entries = IndexOrder.merged(order, table: table, touched: touched, key: { id in
                table.string(id, slot: slot).map(StringKey.init(string:))
            }) {
                strings = BTree(sorted: entries)
                return
            }
        case .general:
            break
        }
        // An index that had gone general (a value that does not pack) keeps its
        // stored order: packed and general keys order alike.
        guard let entries = IndexOrder.merged(order, table: table, touched: touched, key: { id in
            IndexOrder.key(of: id, in: table, slots: slots)
        }) else { return nil }
        layout = .general
        general = BTree(sorted: entries)
    }
}

extension StringKey {
    /// The key of a `.string` value; nil for any other.
    init?(packing value: Value) {
        guard case let .string(string) = value else { return nil }
        self.string = string
    }
}

/// Index entries in index order, for building B-trees in bulk.
enum IndexOrder {
    /// The key of row `id` of `table` over `slots`, read from its columns; nil when
    /// no row has that identifier.
    static func key(of id: RowID, in table: Table, slots: [Int]) -> IndexKey? {
        guard let (s, p) = table.locate(id) else { return nil }
        if slots.count == 1 { return IndexKey(table.withColumn(segment: s, slot: slots[0]) { $0.value(at: p) }) }
        return IndexKey(slots.map { slot in table.withColumn(segment: s, slot: slot) { $0.value(at: p) } })
    }

    /// Every row of `table` as an entry keyed by `key` of its value in `slot`,
    /// unsorted; nil when some value has no key.
    /// - Complexity: O(n)
    static func entries<Key>(_ table: Table, slot: Int, _ key: (Value) -> Key?) -> [BTree<Key>.Entry]? {
        var entries: [BTree<Key>.Entry] = []
        entries.reserveCapacity(table.count)
        var fits = true
        table.forEach(slot: slot) { id, value in
            guard fits, let key = key(value) else {
                fits = false
                return
            }
            entries.append(.init(key: key, row: id))
        }
        return fits ? entries : nil
    }

    /// Sorts packed entries listed in row order by radix on their keys (small inputs by
    /// comparison). Stable, so ties keep row order, as the index orders them.
    /// - Complexity: O(n) per byte in which the keys differ
    static func sort(_ entries: inout [BTree<PackedKey>.Entry]) {
        if entries.count > 256 { RadixSort.sort(&entries) { $0.key.bits } } else { entries.sort(by: BTree.less) }
    }

    /// Sorts string entries listed in row order: by radix on their ASCII prefixes
    /// (`StringOrder.asciiPrefix`), then runs of one prefix longer than a few entries
    /// by radix on the next eight bytes, and so on to 32 bytes (keys such as
    /// "trip-123456" share their first eight); what is left tied is sorted by
    /// comparison. By comparison alone when some string is not ASCII. Ties keep row
    /// order.
    /// - Complexity: O(n) per level of eight bytes, plus O(r log r) per run of r left
    ///   tied; O(n log n) at worst
    static func sort(_ entries: inout [BTree<StringKey>.Entry]) {
        guard entries.count > 256 else { return entries.sort(by: BTree.less) }
        // Sorted as (prefix, position) pairs, which copy without retaining a string.
        var keyed: [(prefix: UInt64, position: Int)] = []
        keyed.reserveCapacity(entries.count)
        for (position, entry) in entries.enumerated() {
            guard let prefix = StringOrder.asciiPrefix(entry.key.string) else { return entries.sort(by: BTree.less) }
            keyed.append((prefix, position))
        }
        RadixSort.sort(&keyed) { $0.prefix }
        let all = entries
        /// Sorts `keyed[range]`, whose strings agree on their first `chunk` chunks.
        func sortRun(_ range: Range<Int>, chunk: Int) {
            guard range.count > 1 else { return }
            if range.count <= 16 || chunk == 4 {
                keyed[range].sort { BTree.less(all[$0.position], all[$1.position]) }
                return
            }
            var run = Array(keyed[range])
            for i in run.indices { run[i].prefix = StringOrder.asciiChunk(all[run[i].position].key.string, chunk) }
            RadixSort.sort(&run) { $0.prefix }
            keyed.replaceSubrange(range, with: run)
            forEachRun(in: range) { sortRun($0, chunk: chunk + 1) }
        }
        /// Calls `body` with each run of equal prefixes in `keyed[range]`.
        func forEachRun(in range: Range<Int>, _ body: (Range<Int>) -> Void) {
            var start = range.lowerBound
            for i in range where i + 1 == range.upperBound || keyed[i + 1].prefix != keyed[start].prefix {
                body(start..<(i + 1))
                start = i + 1
            }
        }
        forEachRun(in: keyed.indices) { sortRun($0, chunk: 1) }
        // (A copy in order, not a permutation in place: following the permutation's
        // cycles is two cache misses a row, 0.2 s of a million-row save.)
        entries = keyed.map { all[$0.position] }
    }

    /// Every row of `table` as an entry of the general index over `slots`, sorted.
    /// - Complexity: O(n log n)
    static func sorted(_ table: Table, slots: [Int]) -> [BTree<IndexKey>.Entry] {
        var entries: [BTree<IndexKey>.Entry] = []
        entries.reserveCapacity(table.count)
        if slots.count == 1 {
            table.forEach(slot: slots[0]) { id, value in entries.append(.init(key: IndexKey(value), row: id)) }
        } else {
            table.forEach { id, row in entries.append(.init(key: IndexKey(of: row, slots: slots), row: id)) }
        }
        entries.sort(by: BTree.less)
        return entries
    }

    /// The entries of the stored `order` for rows not in `touched`, merged with the
    /// touched rows that still exist, sorted; `key` gives a row's key (nil for a
    /// missing row or a value without a key). Nil if `order` is not the untouched
    /// rows in index order.
    /// - Complexity: O(n + k log k) for n rows and k touched ones
    static func merged<Key>(_ order: [RowID], table: Table, touched: Set<RowID>, key: (RowID) -> Key?) -> [BTree<Key>.Entry]? {
        typealias Entry = BTree<Key>.Entry
        var base: [Entry] = []
        base.reserveCapacity(order.count)
        var seen = Set<RowID>(minimumCapacity: touched.count)
        for id in order {
            if touched.contains(id) {
                // A row the journal rewrote or deleted: its entry comes from `extra`.
                guard seen.insert(id).inserted else { return nil }
                continue
            }
            guard let key = key(id) else { return nil }
            let entry = Entry(key: key, row: id)
            if let last = base.last, !BTree.less(last, entry) { return nil }
            base.append(entry)
        }
        var extra: [Entry] = []
        for id in touched {
            guard let key = key(id) else { continue }
            extra.append(Entry(key: key, row: id))
        }
        // Every untouched row must be in the order exactly once (a touched row whose
        // value has no key is missing from `extra`, which fails this too).
        let untouchedInTable = table.count - extra.count
        guard base.count == untouchedInTable else { return nil }
        extra.sort(by: BTree.less)
        guard !extra.isEmpty else { return base }
        var result: [Entry] = []
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
