extension BTree {
    /// The bytes the tree's nodes take, estimated from what they allocate: each node's
    /// object and each array's buffer at its capacity, with the allocator's rounding
    /// (keys' out-of-line storage, shared with the table's columns, not counted).
    /// - Complexity: O(nodes)
    func byteCount() -> Int {
        func buffer(_ count: Int, _ stride: Int) -> Int { count == 0 ? 0 : (32 + count * stride + 8 + 15) & ~15 }
        func walk(_ node: Node) -> Int {
            var bytes = 64
            bytes += buffer(node.keys.capacity, MemoryLayout<Key>.stride) + buffer(node.rows.capacity, 4)
            bytes += buffer(node.runEnds.capacity, 2) + buffer(node.separators.capacity, MemoryLayout<Entry>.stride)
            bytes += buffer(node.children.capacity, 8)
            for child in node.children { bytes += walk(child) }
            return bytes
        }
        return walk(root)
    }
}

extension OrderedIndex {
    /// The bytes the index's tree takes (`BTree.byteCount()`): for memory reports.
    /// Not for applications.
    /// - Complexity: O(nodes)
    public func _byteCount() -> Int {
        switch layout {
        case .general: general.byteCount()
        case .scalar: scalars.byteCount()
        case .string: strings.byteCount()
        }
    }
}
