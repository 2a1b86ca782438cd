/// A binary index: the B-tree over some attribute slots of an entity.
public struct OrderedIndex: Sendable {
    /// The attribute slots, in key order.
    public let slots: [Int]
    public private(set) var tree: BTree

    public init(slots: [Int]) {
        self.slots = slots
        self.tree = BTree()
    }

    /// An index over entries already in index order.
    /// - Complexity: O(n)
    init(slots: [Int], sorted entries: [BTree.Entry]) {
        self.slots = slots
        self.tree = BTree(sorted: entries)
    }

    /// The key of `row` in this index; nil values are keys too (they sort first).
    public func key(of row: Row) -> IndexKey { IndexKey(of: row, slots: slots) }

    mutating func add(_ row: Row, at id: RowID) { tree.insert(key(of: row), row: id) }
    mutating func remove(_ row: Row, at id: RowID) { tree.remove(key(of: row), row: id) }
}
