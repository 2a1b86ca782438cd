extension BTree {
    /// Traps unless the tree is consistent: entries strictly ascending (by key, then
    /// row) within and across leaves, each separator above everything left of it and
    /// at or below everything right of it, no node over capacity, one separator fewer
    /// than children, every leaf at one depth, no empty node but an empty root, and
    /// `count` equal to the entries held. Tests call it after mutations, in the manner
    /// of swift-collections' `_checkInvariants`.
    /// - Complexity: O(n)
    public func _checkInvariants() {
        var previous: Entry?
        var entries = 0
        var leafDepth: Int?
        func visit(_ node: Node, depth: Int, lower: Entry?, upper: Entry?) {
            if node.isLeaf {
                node.checkLeafForm()
                precondition(node.entryCount <= Self.capacity, "leaf over capacity")
                precondition(!node.isEmpty || (depth == 0 && count == 0), "empty leaf below the root")
                precondition(leafDepth == nil || leafDepth == depth, "leaves at depths \(leafDepth!) and \(depth)")
                leafDepth = depth
                for entry in (0..<node.entryCount).map(node.entry(at:)) {
                    if let previous { precondition(Self.less(previous, entry), "entries out of order") }
                    if let lower { precondition(!Self.less(entry, lower), "entry below its separator") }
                    if let upper { precondition(Self.less(entry, upper), "entry at or above the next separator") }
                    previous = entry
                    entries += 1
                }
                return
            }
            precondition(node.children.count <= Self.capacity, "internal node over capacity")
            precondition(node.separators.count == node.children.count - 1, "separators and children disagree")
            for (i, child) in node.children.enumerated() {
                visit(child, depth: depth + 1,
                      lower: i == 0 ? lower : node.separators[i - 1],
                      upper: i == node.separators.count ? upper : node.separators[i])
            }
        }
        visit(root, depth: 0, lower: nil, upper: nil)
        precondition(entries == count, "count \(count) but \(entries) entries")
    }
}

extension BTree {
    /// The number of leaves: with `count`, how full the tree is (tests check that keys
    /// inserted in order fill their leaves).
    /// - Complexity: O(nodes)
    public var _leafCount: Int {
        func leaves(_ node: Node) -> Int { node.isLeaf ? 1 : node.children.reduce(0) { $0 + leaves($1) } }
        return leaves(root)
    }

    /// The keys the leaves hold: one per entry, or one per run of equal keys
    /// (`BTree+Leaf.swift`). Tests check that few distinct keys are held once a run.
    /// - Complexity: O(nodes)
    public var _leafKeyCount: Int {
        func keys(_ node: Node) -> Int { node.isLeaf ? node.keys.count : node.children.reduce(0) { $0 + keys($1) } }
        return keys(root)
    }
}
