/// Ordered indexes built in bulk: by sorting a table, or from an order a document
/// stored (checked, not trusted). Both pack nodes: a sort through `BTree(sorted:)`,
/// a stored order through `BTree.Builder`, leaf by leaf as it is checked. Large
/// inserts sort their new entries the same way (`OrderedIndex+Bulk`).
extension OrderedIndex {
    /// An index over `slots` of `entity` holding every row of `table`, built by sorting
    /// (or counting) as a bulk insert of the table's rows under their own identifiers
    /// would (`pending(_:firstID:)`).
    /// - Complexity: O(n log n)
    public init(slots: [Int], of entity: EntityDescription, table: Table) {
        self.init(slots: slots, of: entity)
        if layout != .general, let pending = pending(.init(storage: .table(table)), firstID: 1) {
            add(pending)
            return
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
            if let tree = IndexOrder.merged(order, table: table, touched: touched, key: { id in
                table.packed(id, slot: slot, as: kind)
            }) {
                scalars = tree
                return
            }
        case .string:
            if let tree = IndexOrder.merged(order, table: table, touched: touched, key: { id in
                table.string(id, slot: slot).map(StringKey.init(string:))
            }) {
                strings = tree
                return
            }
        case .general:
            break
        }
        // An index that had gone general (a value that does not pack) keeps its
        // stored order: packed and general keys order alike.
        guard let tree = IndexOrder.merged(order, table: table, touched: touched, key: { id in
            IndexOrder.key(of: id, in: table, slots: slots)
        }) else { return nil }
        layout = .general
        general = tree
    }
}

/// Index entries in index order, for building B-trees in bulk.
enum IndexOrder {
    /// The key of row `id` of `table` over `slots`, read from its columns; nil when
    /// no row has that identifier.
    static func key(of id: RowID, in table: Table, slots: [Int]) -> IndexKey? {
        guard let (s, p) = table.locate(id) else { return nil }
        if slots.count == 1 { return IndexKey(table.withColumn(segment: s, slot: slots[0]) { Column.value(in: $0, at: p) }) }
        return IndexKey(slots.map { slot in table.withColumn(segment: s, slot: slot) { Column.value(in: $0, at: p) } })
    }

    /// The entries of the strings in `slot` of `table`, each row stored under its
    /// identifier plus `rowShift`, in index order, by counting rows per distinct string;
    /// nil when some value is not a string (or nil), or the strings are not few: the
    /// first of several segments is not encoded (`Column.seal(mayHeapLongStrings:)` gives up on columns of
    /// many distinct strings), there are more than 65,535, or, in one segment, more than
    /// one per 16 rows.
    ///
    /// An index over a column of few distinct strings (a city) needs no sort: each
    /// string is numbered once (a segment's dictionary once, when the column is
    /// encoded, `Column.seal(mayHeapLongStrings:)`), the numbers are ranked by sorting the distinct
    /// strings, and the rows are placed by rank in row order. 8 bytes a row at most,
    /// where sorting entries took 56.
    /// - Complexity: O(n + d log d) for n rows and d distinct strings
    static func counted(_ table: Table, slot: Int, rowShift: Int64) -> GroupedEntries<StringKey>? {
        let several = table.segments.count > 1
        let limit = several ? Int(UInt16.max) : table.count / 16
        guard limit > 0 else { return nil }
        if several, !table.withColumn(segment: 0, slot: slot, { $0.pointee.isEncoded }) { return nil }
        var numbers: [String: UInt16] = [:]
        var distinct: [String] = []
        /// The number of `string`, numbering it when new; nil past the limit.
        func number(_ string: String) -> UInt16? {
            if let number = numbers[string] { return number }
            guard distinct.count < limit else { return nil }
            let number = UInt16(distinct.count)
            numbers[string] = number
            distinct.append(string)
            return number
        }
        // Each live row's number, in row order.
        /// The dictionary numbered last (kept, so its buffer is not reused), and the
        /// number of each of its codes.
        var lastNumbering: (dictionary: UnsafePointer<String>?, strings: [String], codes: [UInt16]) = (nil, [], [])
        var numberOfRow: [UInt16] = []
        numberOfRow.reserveCapacity(table.count)
        for s in table.segments.indices {
            let live = table.segments[s].live
            let numbered = table.withColumn(segment: s, slot: slot) { pointer -> Bool in
                let column = pointer.pointee
                guard column.kind == .string else { return false }
                var numbered = true
                if column.isEncoded {
                    // Segments that share a dictionary (`Column.shareDictionary`) share
                    // its numbering too.
                    let sameDictionary = column.dictionary.withUnsafeBufferPointer {
                        $0.baseAddress == lastNumbering.dictionary && $0.count == lastNumbering.strings.count
                    }
                    if !sameDictionary {
                        var codeNumbers: [UInt16] = []
                        codeNumbers.reserveCapacity(column.dictionary.count)
                        for string in column.dictionary {
                            guard let number = number(string) else { return false }
                            codeNumbers.append(number)
                        }
                        lastNumbering = (column.dictionary.withUnsafeBufferPointer { $0.baseAddress }, column.dictionary, codeNumbers)
                    }
                    let codeNumbers = lastNumbering.codes
                    Bitmap.forEachSet(live) { p in
                        guard numbered, Bitmap.test(column.present, p) else { numbered = false; return }
                        numberOfRow.append(codeNumbers[Int(column.codes[p])])
                    }
                } else {
                    Bitmap.forEachSet(live) { p in
                        guard numbered, Bitmap.test(column.present, p), let number = number(column.storedString(at: p)) else {
                            numbered = false
                            return
                        }
                        numberOfRow.append(number)
                    }
                }
                return numbered
            }
            guard numbered else { return nil }
        }
        // Ranks in index order; equal strings (`==`) were numbered once.
        let ranked = distinct.indices.sorted { StringOrder.compare(distinct[$0], distinct[$1]) < 0 }
        var rank = [UInt16](repeating: 0, count: distinct.count)
        for (r, number) in ranked.enumerated() { rank[number] = UInt16(r) }
        // Where each rank's rows start, then the rows placed in row order within a rank.
        var next = [Int](repeating: 0, count: distinct.count + 1)
        for number in numberOfRow { next[Int(rank[Int(number)]) + 1] += 1 }
        for r in 0..<distinct.count { next[r + 1] += next[r] }
        var rows = [UInt32](repeating: 0, count: numberOfRow.count)
        var keyIndexes = [UInt16](repeating: 0, count: numberOfRow.count)
        var i = 0
        table.forEachID { id in
            let r = rank[Int(numberOfRow[i])]
            let position = next[Int(r)]
            next[Int(r)] += 1
            rows[position] = BTree<StringKey>.packed(RowID(id.rawValue + rowShift))
            keyIndexes[position] = r
            i += 1
        }
        return GroupedEntries(keys: ranked.map { StringKey(string: distinct[$0]) }, keyIndexes: keyIndexes, rows: rows)
    }

    /// Packed entries listed in row order (keys and rows apart), sorted by radix on
    /// their keys. Stable, so ties keep row order, as the index orders them.
    /// - Complexity: O(n) per byte in which the keys differ
    static func sortedPacked(keys: consuming [UInt64], rows: consuming [UInt32]) -> PackedEntries {
        RadixSort.sort(keys: &keys, values: &rows)
        return PackedEntries(keys: keys, rows: rows)
    }

    /// String entries listed in row order, in index order: sorted by radix on their
    /// ASCII prefixes (`StringOrder.asciiPrefix`), then runs of one prefix longer than
    /// a few entries by radix on the next eight bytes, and so on to 32 bytes (keys
    /// such as "trip-123456" share their first eight); what is left tied is sorted by
    /// comparison. By comparison alone when some string is not ASCII. Ties keep row
    /// order.
    ///
    /// The order comes back as positions (`PermutedEntries`), not a sorted copy: a tree
    /// built from the view never holds the copy (24 bytes a row) beside the entries
    /// and the positions, at the peak of a large save.
    /// - Complexity: O(n) per level of eight bytes, plus O(r log r) per run of r left
    ///   tied; O(n log n) at worst
    static func sorted(_ entries: [BTree<StringKey>.Entry]) -> PermutedEntries<StringKey> {
        guard entries.count > 256 else { return PermutedEntries(inOrder: entries.sorted(by: BTree.less)) }
        // Sorted as (prefix, position) pairs, which copy without retaining a string.
        var keyed: [(prefix: UInt64, position: Int)] = []
        keyed.reserveCapacity(entries.count)
        for (position, entry) in entries.enumerated() {
            guard let prefix = StringOrder.asciiPrefix(entry.key.string) else {
                return PermutedEntries(inOrder: entries.sorted(by: BTree.less))
            }
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
        // (A view, not a permutation in place: following the permutation's cycles is
        // two cache misses a row, 0.2 s of a million-row save.)
        return PermutedEntries(all, order: keyed.map { UInt32(truncatingIfNeeded: $0.position) })
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

    /// The tree of the stored `order`'s entries for rows not in `touched`, merged
    /// with the touched rows that still exist; `key` gives a row's key (nil for a
    /// missing row or a value without a key). Nil if `order` is not the untouched rows
    /// in index order. The entries go straight into the tree's leaves (`BTree.Builder`):
    /// no array of them all is held beside it at the peak of an open.
    /// - Complexity: O(n + k log k) for n rows and k touched ones
    static func merged<Key>(_ order: [RowID], table: Table, touched: Set<RowID>, key: (RowID) -> Key?) -> BTree<Key>? {
        typealias Entry = BTree<Key>.Entry
        var extra: [Entry] = []
        for id in touched {
            guard let key = key(id) else { continue }
            extra.append(Entry(key: key, row: id))
        }
        extra.sort(by: BTree.less)
        var builder = BTree<Key>.Builder()
        var j = 0
        var last: Entry?
        var untouched = 0
        var seen = Set<RowID>(minimumCapacity: touched.count)
        for id in order {
            if !touched.isEmpty, touched.contains(id) {
                // A row the journal rewrote or deleted: its entry comes from `extra`.
                guard seen.insert(id).inserted else { return nil }
                continue
            }
            guard let key = key(id) else { return nil }
            let entry = Entry(key: key, row: id)
            if let last, !BTree.less(last, entry) { return nil }
            while j < extra.count, BTree.less(extra[j], entry) {
                builder.append(extra[j])
                j += 1
            }
            builder.append(entry)
            last = entry
            untouched += 1
        }
        // Every untouched row must be in the order exactly once (a touched row whose
        // value has no key is missing from `extra`, which fails this too).
        guard untouched == table.count - extra.count else { return nil }
        while j < extra.count {
            builder.append(extra[j])
            j += 1
        }
        return builder.build()
    }
}
