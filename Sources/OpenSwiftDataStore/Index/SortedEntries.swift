/// Views of entries in index order that are not arrays of entries: trees are built
/// from them (`BTree(sorted:)`, `merged(with:)`) without a sorted copy of the entries,
/// which held 24 bytes a row for strings beside the sort's own buffers at the peak of
/// a large save.

/// Entries in index order, as positions into entries in row order: what sorting
/// strings by radix leaves (`IndexOrder.sorted`).
struct PermutedEntries<Key: BTreeKey>: RandomAccessCollection {
    typealias Entry = BTree<Key>.Entry

    /// The entries, in any order.
    let entries: [Entry]
    /// Positions in `entries`, in index order; 4 bytes a row.
    let order: [UInt32]

    /// `entries` in the order of `order`, which must hold each position once.
    init(_ entries: [Entry], order: [UInt32]) {
        precondition(entries.count == order.count && entries.count <= Int(UInt32.max), "a permutation of other entries")
        self.entries = entries
        self.order = order
    }

    /// `entries`, already in index order.
    init(inOrder entries: [Entry]) {
        self.init(entries, order: (0..<UInt32(entries.count)).map { $0 })
    }

    var startIndex: Int { 0 }
    var endIndex: Int { order.count }

    /// - Complexity: O(1)
    subscript(position: Int) -> Entry { entries[Int(order[position])] }
}

/// Entries of few distinct keys in index order, as each position's key (an index into
/// the distinct keys) and row: what counting rows per string leaves
/// (`IndexOrder.counted`). 6 bytes a row.
struct GroupedEntries<Key: BTreeKey>: RandomAccessCollection {
    typealias Entry = BTree<Key>.Entry

    /// The distinct keys, in index order (some may have no entry).
    let keys: [Key]
    /// Each position's key, as an index into `keys`.
    let keyIndexes: [UInt16]
    /// Each position's row, as leaves hold it (`BTree.packed`).
    let rows: [UInt32]

    var startIndex: Int { 0 }
    var endIndex: Int { rows.count }

    /// - Complexity: O(1)
    subscript(position: Int) -> Entry {
        Entry(key: keys[Int(keyIndexes[position])], row: BTree<Key>.row(rows[position]))
    }
}

/// Packed entries in index order, keys and rows apart: what sorting them by radix
/// leaves (`IndexOrder.sortedPacked`). 12 bytes a row.
struct PackedEntries: RandomAccessCollection {
    typealias Entry = BTree<PackedKey>.Entry

    /// Each position's key bits (`PackedKey.bits`).
    let keys: [UInt64]
    /// Each position's row, as leaves hold it (`BTree.packed`).
    let rows: [UInt32]

    var startIndex: Int { 0 }
    var endIndex: Int { rows.count }

    /// - Complexity: O(1)
    subscript(position: Int) -> Entry { Entry(key: PackedKey(bits: keys[position]), row: BTree<PackedKey>.row(rows[position])) }
}
