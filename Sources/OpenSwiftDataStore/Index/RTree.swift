import Foundation

/// A persistent R-tree: points of `dimensions` coordinates, each with the row
/// that holds it, found by window (every point inside a box) and by distance.
///
/// Leaves hold points; internal nodes hold their children's bounding boxes, kept
/// tight (exactly the box of what lies below), so a window walk enters only the
/// children whose box meets it. Nodes are shared between copies and copied on
/// write along one root-to-leaf path, as `BTree`'s are, so a store version that
/// publishes a changed index shares every node the commit did not touch.
///
/// Inserts choose the child needing the least area enlargement and split an
/// overflowing node the R*-tree way (the axis with the least margin, then the cut
/// with the least overlap); there is no forced reinsertion. Deletions leave nodes
/// underfull rather than merging them (empty nodes are removed); a bulk build
/// (Sort-Tile-Recursive packing, `init(dimensions:points:rows:)`) packs them again.
public struct RTree: Sendable {
    /// Entries per node, at most.
    static let capacity = 32
    /// Entries per half of a split, at least (40 %, as the R*-tree paper advises).
    static let minimumSplit = capacity * 2 / 5
    /// How full a bulk build leaves each node: room for a few inserts before a split.
    static let bulkFill = capacity * 7 / 8

    /// A node's arrays skip dynamic exclusivity checks, as `BTree.Node`'s do: only
    /// the writer holding it uniquely mutates it.
    final class Node: @unchecked Sendable {
        /// Leaf: `dimensions` coordinates per point. Internal: per child, its box's
        /// `dimensions` lows, then its `dimensions` highs.
        @exclusivity(unchecked) var values: [Double]
        /// Leaf: the row of each point.
        @exclusivity(unchecked) var rows: [RowID]
        /// Internal: the children.
        @exclusivity(unchecked) var children: [Node]
        let isLeaf: Bool

        init(isLeaf: Bool, values: [Double] = [], rows: [RowID] = [], children: [Node] = []) {
            self.isLeaf = isLeaf
            self.values = values
            self.rows = rows
            self.children = children
        }

        var count: Int { isLeaf ? rows.count : children.count }
        func copy() -> Node { Node(isLeaf: isLeaf, values: values, rows: rows, children: children) }
    }

    public let dimensions: Int
    private(set) var root: Node
    public private(set) var count = 0

    public init(dimensions: Int) {
        precondition(dimensions > 0, "an R-tree needs at least one dimension")
        self.dimensions = dimensions
        self.root = Node(isLeaf: true)
    }

    // MARK: Boxes

    /// Values per entry of `node`: a point in a leaf, a box (lows, highs) above.
    @inline(__always)
    func stride(of node: Node) -> Int { node.isLeaf ? dimensions : 2 * dimensions }

    /// The low end of entry `i` of `node` on `axis`.
    @inline(__always)
    func low(_ node: Node, _ i: Int, _ axis: Int) -> Double { node.values[i * stride(of: node) + axis] }

    /// The high end of entry `i` of `node` on `axis` (a point's coordinate in a leaf).
    @inline(__always)
    func high(_ node: Node, _ i: Int, _ axis: Int) -> Double {
        node.values[i * stride(of: node) + (node.isLeaf ? axis : dimensions + axis)]
    }

    /// The tight box of every entry of `node`: lows, then highs.
    func box(of node: Node) -> [Double] {
        box(of: node, entries: 0..<node.count)
    }

    private func box<C: Collection<Int>>(of node: Node, entries: C) -> [Double] {
        var box = [Double](repeating: .infinity, count: dimensions) + [Double](repeating: -.infinity, count: dimensions)
        for i in entries {
            for axis in 0..<dimensions {
                box[axis] = Swift.min(box[axis], low(node, i, axis))
                box[dimensions + axis] = Swift.max(box[dimensions + axis], high(node, i, axis))
            }
        }
        return box
    }

    /// The product of a box's extents.
    private func area(_ box: [Double]) -> Double {
        var area = 1.0
        for axis in 0..<dimensions { area *= box[dimensions + axis] - box[axis] }
        return area
    }

    /// The sum of a box's extents (the R*-tree's "margin").
    private func margin(_ box: [Double]) -> Double {
        var margin = 0.0
        for axis in 0..<dimensions { margin += box[dimensions + axis] - box[axis] }
        return margin
    }

    /// The volume two boxes share.
    private func overlap(_ a: [Double], _ b: [Double]) -> Double {
        var volume = 1.0
        for axis in 0..<dimensions {
            let extent = Swift.min(a[dimensions + axis], b[dimensions + axis]) - Swift.max(a[axis], b[axis])
            if extent <= 0 { return 0 }
            volume *= extent
        }
        return volume
    }

    // MARK: Bulk build

    /// Builds a tree of `points` (`dimensions` coordinates each, back to back) and
    /// their `rows`, packed by Sort-Tile-Recursive: sorted into slabs on the first
    /// axis, each slab on the next, and so on, then cut into nodes; each level above
    /// is packed the same way from the centres of the one below.
    /// Coordinates must be numbers (not NaN).
    /// - Complexity: O(n log n)
    public init(dimensions: Int, points: [Double], rows: [RowID]) {
        precondition(points.count == rows.count * dimensions, "points and rows disagree")
        self.init(dimensions: dimensions)
        count = rows.count
        guard !rows.isEmpty else { return }
        let d = dimensions
        // Leaves.
        var order = Array(0..<rows.count)
        var groups: [Range<Int>] = []
        Self.tile(&order, range: 0..<order.count, axis: 0, dimensions: d, into: &groups) { points[$0 * d + $1] }
        var level: [Node] = groups.map { group in
            var values: [Double] = []
            values.reserveCapacity(group.count * d)
            var leafRows: [RowID] = []
            leafRows.reserveCapacity(group.count)
            for i in order[group] {
                values.append(contentsOf: points[(i * d)..<(i * d + d)])
                leafRows.append(rows[i])
            }
            return Node(isLeaf: true, values: values, rows: leafRows)
        }
        // Levels above, from their children's boxes.
        while level.count > 1 {
            let boxes = level.map { box(of: $0) }
            var centres = [Double](repeating: 0, count: level.count * d)
            for (n, box) in boxes.enumerated() {
                for axis in 0..<d { centres[n * d + axis] = (box[axis] + box[d + axis]) / 2 }
            }
            var order = Array(0..<level.count)
            var groups: [Range<Int>] = []
            Self.tile(&order, range: 0..<order.count, axis: 0, dimensions: d, into: &groups) { centres[$0 * d + $1] }
            level = groups.map { group in
                Node(isLeaf: false, values: order[group].flatMap { boxes[$0] }, children: order[group].map { level[$0] })
            }
        }
        root = level[0]
    }

    /// Sort-Tile-Recursive: orders `order[range]` into groups of at most
    /// `bulkFill` neighbours, appending each group's range.
    private static func tile(
        _ order: inout [Int], range: Range<Int>, axis: Int, dimensions: Int, into groups: inout [Range<Int>],
        coordinate: (Int, Int) -> Double
    ) {
        let n = range.count
        let nodes = (n + bulkFill - 1) / bulkFill
        // Sort by this axis, keyed once per entry.
        var keyed = order[range].map { (key: orderedBits(coordinate($0, axis)), index: $0) }
        radixSort(&keyed)
        for (k, entry) in keyed.enumerated() { order[range.lowerBound + k] = entry.index }
        if axis == dimensions - 1 || nodes <= 1 {
            for start in Swift.stride(from: range.lowerBound, to: range.upperBound, by: bulkFill) {
                groups.append(start..<Swift.min(start + bulkFill, range.upperBound))
            }
            return
        }
        // nodes^(1/remaining axes) slabs, each a whole number of nodes.
        let remaining = Double(dimensions - axis)
        let slabs = Swift.max(1, Int((Double(nodes).squareRootOrRoot(remaining)).rounded(.up)))
        let perSlab = ((nodes + slabs - 1) / slabs) * bulkFill
        for start in Swift.stride(from: range.lowerBound, to: range.upperBound, by: perSlab) {
            tile(&order, range: start..<Swift.min(start + perSlab, range.upperBound), axis: axis + 1,
                 dimensions: dimensions, into: &groups, coordinate: coordinate)
        }
    }

    /// `x`'s bits as an unsigned integer in the same order as the numbers.
    @inline(__always)
    private static func orderedBits(_ x: Double) -> UInt64 {
        let bits = x.bitPattern
        return x.sign == .minus ? ~bits : bits | (1 << 63)
    }

    /// Sorts by key (`RadixSort`); small inputs by comparison.
    private static func radixSort(_ keyed: inout [(key: UInt64, index: Int)]) {
        guard keyed.count > 256 else {
            keyed.sort { $0.key < $1.key }
            return
        }
        RadixSort.sort(&keyed) { $0.key }
    }

    // MARK: Changes

    /// Adds the point `point` (`dimensions` coordinates, not NaN) for `row`.
    /// - Complexity: O(log n) nodes, each O(capacity); copies the nodes on one path
    ///   when they are shared.
    public mutating func insert(_ point: [Double], row: RowID) {
        precondition(point.count == dimensions, "a point of \(point.count) coordinates in a tree of \(dimensions)")
        if !isKnownUniquelyReferenced(&root) { root = root.copy() }
        if let sibling = insert(point, row: row, into: root) {
            let left = root
            root = Node(isLeaf: false, values: box(of: left) + box(of: sibling), children: [left, sibling])
        }
        count += 1
    }

    /// Inserts below `node` (held uniquely); returns the new sibling when `node` split.
    private func insert(_ point: [Double], row: RowID, into node: Node) -> Node? {
        if node.isLeaf {
            node.values.append(contentsOf: point)
            node.rows.append(row)
        } else {
            let i = chooseChild(of: node, for: point)
            if !isKnownUniquelyReferenced(&node.children[i]) { node.children[i] = node.children[i].copy() }
            if let sibling = insert(point, row: row, into: node.children[i]) {
                setBox(box(of: node.children[i]), of: i, in: node)
                node.values.append(contentsOf: box(of: sibling))
                node.children.append(sibling)
            } else {
                let base = i * 2 * dimensions
                for axis in 0..<dimensions {
                    node.values[base + axis] = Swift.min(node.values[base + axis], point[axis])
                    node.values[base + dimensions + axis] = Swift.max(node.values[base + dimensions + axis], point[axis])
                }
            }
        }
        return node.count > Self.capacity ? split(node) : nil
    }

    private func setBox(_ box: [Double], of i: Int, in node: Node) {
        let base = i * 2 * dimensions
        for k in 0..<(2 * dimensions) { node.values[base + k] = box[k] }
    }

    /// The child whose box grows least (in area) to take `point`; ties go to the
    /// smaller box, then the one with the smaller margin.
    private func chooseChild(of node: Node, for point: [Double]) -> Int {
        var best = 0
        var bestGrowth = Double.infinity, bestArea = Double.infinity, bestMargin = Double.infinity
        let d = dimensions
        for i in 0..<node.count {
            var area = 1.0, grown = 1.0, margin = 0.0
            let base = i * 2 * d
            for axis in 0..<d {
                let lo = node.values[base + axis], hi = node.values[base + d + axis]
                area *= hi - lo
                grown *= Swift.max(hi, point[axis]) - Swift.min(lo, point[axis])
                margin += hi - lo
            }
            let growth = grown - area
            if growth < bestGrowth || (growth == bestGrowth && (area < bestArea || (area == bestArea && margin < bestMargin))) {
                best = i
                bestGrowth = growth
                bestArea = area
                bestMargin = margin
            }
        }
        return best
    }

    /// Splits an overflowing `node` in two, the R*-tree way: on the axis whose
    /// possible cuts have the least total margin, at the cut whose halves overlap
    /// least (then have the least total area). `node` keeps the first half.
    private func split(_ node: Node) -> Node {
        let n = node.count
        let m = Self.minimumSplit
        var bestAxisOrder: [Int] = []
        var bestAxisMargin = Double.infinity
        for axis in 0..<dimensions {
            // Entries in order of their low end, then high end, on this axis.
            let order = (0..<n).sorted {
                let a = low(node, $0, axis), b = low(node, $1, axis)
                return a < b || (a == b && high(node, $0, axis) < high(node, $1, axis))
            }
            var total = 0.0
            for k in m...(n - m) {
                total += margin(box(of: node, entries: order[..<k])) + margin(box(of: node, entries: order[k...]))
            }
            if total < bestAxisMargin {
                bestAxisMargin = total
                bestAxisOrder = order
            }
        }
        var cut = m
        var bestOverlap = Double.infinity, bestArea = Double.infinity
        for k in m...(n - m) {
            let left = box(of: node, entries: bestAxisOrder[..<k]), right = box(of: node, entries: bestAxisOrder[k...])
            let shared = overlap(left, right), area = area(left) + area(right)
            if shared < bestOverlap || (shared == bestOverlap && area < bestArea) {
                cut = k
                bestOverlap = shared
                bestArea = area
            }
        }
        let s = stride(of: node)
        func part(_ entries: ArraySlice<Int>) -> Node {
            var values: [Double] = []
            values.reserveCapacity(entries.count * s)
            for i in entries { values.append(contentsOf: node.values[(i * s)..<(i * s + s)]) }
            return node.isLeaf
                ? Node(isLeaf: true, values: values, rows: entries.map { node.rows[$0] })
                : Node(isLeaf: false, values: values, children: entries.map { node.children[$0] })
        }
        let left = part(bestAxisOrder[..<cut]), right = part(bestAxisOrder[cut...])
        node.values = left.values
        node.rows = left.rows
        node.children = left.children
        return right
    }

    /// Removes the point `point` of `row`, if present.
    /// - Complexity: O(log n) nodes for a point in one leaf; more where boxes overlap.
    ///   Nodes are looked through first and copied only along the path to the point.
    @discardableResult
    public mutating func remove(_ point: [Double], row: RowID) -> Bool {
        guard point.count == dimensions, let path = path(to: point, row: row, in: root) else { return false }
        if !isKnownUniquelyReferenced(&root) { root = root.copy() }
        remove(at: path[...], from: root)
        count -= 1
        while !root.isLeaf, root.children.count == 1 { root = root.children[0] }
        if root.count == 0 { root = Node(isLeaf: true) }
        return true
    }

    /// The entry positions from `node` down to the point `point` of `row`, nil when
    /// it is not there. Reads only.
    private func path(to point: [Double], row: RowID, in node: Node) -> [Int]? {
        let d = dimensions
        if node.isLeaf {
            for i in 0..<node.rows.count where node.rows[i] == row {
                if (0..<d).allSatisfy({ node.values[i * d + $0] == point[$0] }) { return [i] }
            }
            return nil
        }
        for i in 0..<node.children.count {
            let base = i * 2 * d
            guard (0..<d).allSatisfy({ node.values[base + $0] <= point[$0] && point[$0] <= node.values[base + d + $0] }),
                  let below = path(to: point, row: row, in: node.children[i])
            else { continue }
            return [i] + below
        }
        return nil
    }

    /// Removes the entry at the end of `path` below `node` (held uniquely), copying
    /// shared nodes on the way, then drops emptied children and tightens boxes.
    private func remove(at path: ArraySlice<Int>, from node: Node) {
        let d = dimensions
        let i = path[path.startIndex]
        if node.isLeaf {
            node.rows.remove(at: i)
            node.values.removeSubrange((i * d)..<(i * d + d))
            return
        }
        if !isKnownUniquelyReferenced(&node.children[i]) { node.children[i] = node.children[i].copy() }
        remove(at: path.dropFirst(), from: node.children[i])
        if node.children[i].count == 0 {
            node.children.remove(at: i)
            node.values.removeSubrange((i * 2 * d)..<((i + 1) * 2 * d))
        } else {
            setBox(box(of: node.children[i]), of: i, in: node)
        }
    }

    // MARK: Queries

    /// Calls `body` with the row of every point inside the box from `lower` to
    /// `upper` (inclusive on every axis), until it returns false.
    /// - Complexity: O(log n + k) for k points found, where boxes overlap little.
    public func search(lower: [Double], upper: [Double], _ body: (RowID) throws -> Bool) rethrows {
        precondition(lower.count == dimensions && upper.count == dimensions, "a window of another dimension")
        guard count > 0 else { return }
        let d = dimensions
        var stack: [Node] = [root]
        stack.reserveCapacity(64)
        var stopped = false
        try lower.withUnsafeBufferPointer { lo in
            try upper.withUnsafeBufferPointer { hi in
                while !stopped, let node = stack.popLast() {
                    try node.values.withUnsafeBufferPointer { v in
                        if node.isLeaf {
                            let rows = node.rows
                            if d == 2 {
                                // Points in the plane (the common case), without the axis loop.
                                let (l0, l1, h0, h1) = (lo[0], lo[1], hi[0], hi[1])
                                for i in 0..<rows.count {
                                    let x = v[2 * i], y = v[2 * i + 1]
                                    if l0 <= x, x <= h0, l1 <= y, y <= h1, try !body(rows[i]) {
                                        stopped = true
                                        return
                                    }
                                }
                                return
                            }
                            for i in 0..<rows.count {
                                var inside = true
                                for axis in 0..<d where !(lo[axis] <= v[i * d + axis] && v[i * d + axis] <= hi[axis]) {
                                    inside = false
                                    break
                                }
                                if inside, try !body(rows[i]) {
                                    stopped = true
                                    return
                                }
                            }
                            return
                        }
                        let children = node.children
                        for i in 0..<children.count {
                            let base = i * 2 * d
                            var meets = true
                            for axis in 0..<d where !(v[base + axis] <= hi[axis] && lo[axis] <= v[base + d + axis]) {
                                meets = false
                                break
                            }
                            if meets { stack.append(children[i]) }
                        }
                    }
                }
            }
        }
    }

    /// Calls `body` with every point's row and distance, nearest first, until it
    /// returns false: best-first search, so finding the k nearest reads about the
    /// nodes around them, not the tree.
    ///
    /// - Parameters:
    ///   - distance: a point's distance (its coordinates).
    ///   - lowerBound: at most the distance of any point inside a box (lows, then
    ///     highs), so that no point is passed over.
    /// - Complexity: O((log n + k) log n) for the k nearest, where boxes overlap little.
    public func forEachNearest(
        distance: (UnsafeBufferPointer<Double>) -> Double, lowerBound: (UnsafeBufferPointer<Double>) -> Double,
        _ body: (RowID, Double) throws -> Bool
    ) rethrows {
        guard count > 0 else { return }
        // Nodes are held unretained in the queue: the tree holds every one of them
        // for as long as this call runs, and a retain per push was a third of the time.
        enum Item {
            case node(Unmanaged<Node>)
            case point(RowID)
        }
        var queue = MinimumQueue<Item>()
        queue.push(.node(.passUnretained(root)), priority: 0)
        while let (item, priority) = queue.pop() {
            switch item {
            case let .point(row):
                if try !body(row, priority) { return }
            case let .node(unmanaged):
                let node = unmanaged.takeUnretainedValue()
                let s = stride(of: node)
                // Entries are measured in place (a slice of the array would be
                // retained and released for each).
                node.values.withUnsafeBufferPointer { values in
                    if node.isLeaf {
                        node.rows.withUnsafeBufferPointer { rows in
                            for i in rows.indices {
                                queue.push(.point(rows[i]), priority: distance(UnsafeBufferPointer(rebasing: values[(i * s)..<(i * s + s)])))
                            }
                        }
                    } else {
                        node.children.withUnsafeBufferPointer { children in
                            for i in children.indices {
                                let bound = lowerBound(UnsafeBufferPointer(rebasing: values[(i * s)..<(i * s + s)]))
                                queue.push(.node(.passUnretained(children[i])), priority: bound)
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A binary min-heap of items by priority, for nearest-first walks.
struct MinimumQueue<Item> {
    private var heap: [(priority: Double, item: Item)] = []

    mutating func push(_ item: Item, priority: Double) {
        heap.append((priority, item))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].priority < heap[parent].priority else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> (Item, Double)? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let top = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].priority < heap[smallest].priority { smallest = left }
            if right < heap.count, heap[right].priority < heap[smallest].priority { smallest = right }
            guard smallest != parent else { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return (top.item, top.priority)
    }
}

extension Double {
    /// The `root`-th root (a square root for 2).
    fileprivate func squareRootOrRoot(_ root: Double) -> Double {
        root == 2 ? squareRoot() : Foundation.pow(self, 1 / root)
    }
}
