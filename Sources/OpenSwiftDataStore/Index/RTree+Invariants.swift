extension RTree {
    /// Traps unless the tree is consistent: every internal entry's box exactly the
    /// box of its child's entries, every leaf at one depth, no node over capacity,
    /// no empty node but an empty root, arrays of the right lengths, no NaN
    /// coordinate, and `count` equal to the points held. Tests call it after
    /// mutations, in the manner of swift-collections' `_checkInvariants`.
    /// - Complexity: O(n)
    public func _checkInvariants() {
        var points = 0
        var leafDepth: Int?
        func visit(_ node: Node, depth: Int) {
            precondition(node.count <= Self.capacity, "node over capacity")
            precondition(node.count > 0 || (depth == 0 && count == 0), "empty node below the root")
            precondition(node.values.count == node.count * stride(of: node), "values and entries disagree")
            precondition(!node.values.contains(where: \.isNaN), "a NaN coordinate")
            if node.isLeaf {
                precondition(node.children.isEmpty, "a leaf with children")
                precondition(leafDepth == nil || leafDepth == depth, "leaves at depths \(leafDepth!) and \(depth)")
                leafDepth = depth
                points += node.rows.count
                return
            }
            precondition(node.rows.isEmpty, "an internal node with rows")
            for (i, child) in node.children.enumerated() {
                let stored = Array(node.values[(i * 2 * dimensions)..<((i + 1) * 2 * dimensions)])
                precondition(stored == box(of: child), "a child's box is not its entries' box")
                visit(child, depth: depth + 1)
            }
        }
        visit(root, depth: 0)
        precondition(points == count, "count \(count) but \(points) points")
    }

    /// The tree's height (1 for a lone leaf), for tests of the bulk build's packing.
    public var _height: Int {
        var height = 1
        var node = root
        while !node.isLeaf {
            node = node.children[0]
            height += 1
        }
        return height
    }
}
