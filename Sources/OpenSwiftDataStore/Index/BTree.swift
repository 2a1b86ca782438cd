import Foundation

/// A persistent B+-tree: an ordered multimap from keys to rows.
///
/// Entries (a key and the row that holds it) live in leaves, ordered by key and
/// then by row, so duplicate keys are allowed and equal keys keep row order.
/// Nodes are shared between copies and copied on write along one root-to-leaf
/// path, so a store version that publishes a changed index shares every node the
/// commit did not touch. Deletions leave nodes underfull rather than rebalancing;
/// a bulk build (`init(sorted:)`) packs them again.
///
/// The key type is a parameter so an index over one number stores 8-byte keys
/// compared as integers (`PackedKey`), and only compound or unusual keys pay for
/// `IndexKey`'s enum comparisons. Leaves keep keys and rows in separate arrays,
/// rows in 32 bits (as Realm's column arrays do): an entry of a string and a row
/// takes 20 bytes there, of a packed key 12, where a `(key, RowID)` pair took 24 and
/// 16 with its padding. A row is held as one less than its identifier, so every
/// identifier a document can hold (1 … 2³², `DocumentFormat.maximumRowID`) fits;
/// another traps.
public struct BTree<Key: BTreeKey>: Sendable {
    public struct Entry: Sendable {
        public var key: Key
        public var row: RowID
        @inline(__always)
        public init(key: Key, row: RowID) {
            self.key = key
            self.row = row
        }
    }

    /// One end of a key range: a key of the tree's own type, or a prefix of values
    /// (compared on its parts only, so a range can constrain a prefix of a compound
    /// key, or hold a value of another kind than the index's keys).
    /// Data, not a comparison closure, which would cost an allocation per bound.
    public struct Bound {
        enum Target {
            case key(Key)
            case values([Value], Key.Decoding)
        }

        var target: Target
        public var inclusive: Bool

        /// A bound at `key`.
        public init(key: Key, inclusive: Bool) {
            self.target = .key(key)
            self.inclusive = inclusive
        }

        /// A bound at the values of `prefix`, compared as `Value.indexCompare` orders them.
        public init(_ prefix: [Value], inclusive: Bool, decoding: Key.Decoding) {
            self.target = .values(prefix, decoding)
            self.inclusive = inclusive
        }

        /// How `key` lies against the bound: negative below, zero tied, positive above.
        @inline(__always)
        func compare(_ key: Key) -> Int {
            switch target {
            case let .key(bound): Key.compare(key, bound)
            case let .values(prefix, decoding): Key.compare(key, prefix: prefix, decoding: decoding)
            }
        }
    }

    @inline(__always) static var capacity: Int { 128 }

    /// A node's arrays skip dynamic exclusivity checks: a node is mutated only by the
    /// one writer that holds it uniquely (copy-on-write along the path), and readers
    /// of a published version never mutate it.
    final class Node: @unchecked Sendable {
        /// Leaf: the entries' keys, one per entry or per run (`BTree+Leaf.swift`). Internal: empty.
        @exclusivity(unchecked) var keys: [Key]
        /// Leaf: the entries' rows, in order. Internal: empty.
        @exclusivity(unchecked) var rows: [UInt32]
        /// Leaf: where each run of equal keys ends; empty when `keys` has one key per entry.
        @exclusivity(unchecked) var runEnds: [UInt16]
        /// Internal: `separators[i]` is the smallest entry of `children[i + 1]`.
        @exclusivity(unchecked) var separators: [Entry]
        @exclusivity(unchecked) var children: [Node]

        init(keys: [Key] = [], rows: [UInt32] = [], runEnds: [UInt16] = [], separators: [Entry] = [], children: [Node] = []) {
            self.keys = keys
            self.rows = rows
            self.runEnds = runEnds
            self.separators = separators
            self.children = children
        }

        var isLeaf: Bool { children.isEmpty }
        var isEmpty: Bool { isLeaf ? rows.isEmpty : children.isEmpty }
        /// Leaf: how many entries it holds.
        var entryCount: Int { rows.count }
        func copy() -> Node { Node(keys: keys, rows: rows, runEnds: runEnds, separators: separators, children: children) }
    }

    /// `row` as a leaf holds it: one less, in 32 bits.
    @inline(__always)
    static func packed(_ row: RowID) -> UInt32 {
        guard let packed = UInt32(exactly: row.rawValue &- 1) else {
            preconditionFailure("row \(row) is outside the rows 1 … 2³² an index holds")
        }
        return packed
    }

    /// The row a leaf's `packed(_:)` value stands for.
    @inline(__always)
    static func row(_ packed: UInt32) -> RowID { RowID(Int64(packed) + 1) }

    private(set) var root = Node()
    public private(set) var count = 0

    public init() {}

    /// Builds a tree from entries already in order (an array, or a sorted view of one,
    /// `PermutedEntries`).
    /// - Complexity: O(n)
    public init<Entries: RandomAccessCollection<Entry>>(sorted entries: Entries) where Entries.Index == Int {
        let fill = Self.fill
        self.init(
            leaves: stride(from: entries.startIndex, to: entries.endIndex, by: fill).map {
                Node(leafOf: entries[$0..<min($0 + fill, entries.endIndex)])
            },
            count: entries.count)
    }

    /// Entries a bulk build puts in a leaf: room is left for inserts.
    static var fill: Int { capacity * 3 / 4 }

    /// A tree over `leaves`, full but for the last, which hold `count` entries in order.
    private init(leaves: [Node], count: Int) {
        self.count = count
        guard !leaves.isEmpty else { return }
        let fill = Self.fill
        var level = leaves
        var minima = level.map { $0.entry(at: 0) }
        while level.count > 1 {
            var next: [Node] = []
            var nextMinima: [Entry] = []
            for start in stride(from: 0, to: level.count, by: fill) {
                let end = min(start + fill, level.count)
                next.append(Node(separators: Array(minima[(start + 1)..<end]), children: Array(level[start..<end])))
                nextMinima.append(minima[start])
            }
            level = next
            minima = nextMinima
        }
        root = level[0]
    }

    /// Builds a tree from entries appended in index order, a leaf at a time, as
    /// `init(sorted:)` builds it: a build from a stored order (a document's open)
    /// holds no array of every entry beside the tree.
    struct Builder {
        private var leaves: [Node] = []
        private var pending: [Entry] = []
        private var count = 0

        init() { pending.reserveCapacity(BTree.fill) }

        /// Appends `entry`, which follows every entry appended before it.
        mutating func append(_ entry: Entry) {
            pending.append(entry)
            count += 1
            if pending.count == BTree.fill {
                leaves.append(Node(leafOf: pending))
                pending.removeAll(keepingCapacity: true)
            }
        }

        consuming func build() -> BTree {
            if !pending.isEmpty { leaves.append(Node(leafOf: pending)) }
            return BTree(leaves: leaves, count: count)
        }
    }

    // MARK: Order

    /// The index order: keys, then rows.
    @inline(__always)
    static func less(_ a: Entry, _ b: Entry) -> Bool {
        let c = Key.compare(a.key, b.key)
        return c != 0 ? c < 0 : a.row < b.row
    }

    /// Whether `key` lies above `bound` (at or above when inclusive).
    @inline(__always)
    static func isAbove(_ key: Key, _ bound: Bound) -> Bool {
        let c = bound.compare(key)
        return c > 0 || (c == 0 && bound.inclusive)
    }

    /// Whether `key` lies below `bound` (at or below when inclusive).
    @inline(__always)
    static func isBelow(_ key: Key, _ bound: Bound) -> Bool {
        let c = bound.compare(key)
        return c < 0 || (c == 0 && bound.inclusive)
    }

    // MARK: Changes

    /// Adds an entry.
    /// - Complexity: O(log n); copies the nodes on one path when they are shared.
    public mutating func insert(_ key: Key, row: RowID) {
        if !isKnownUniquelyReferenced(&root) { root = root.copy() }
        if let (separator, right) = Self.insert(Entry(key: key, row: row), into: root, rightmost: true) {
            root = Node(separators: [separator], children: [root, right])
        }
        count += 1
    }

    /// The tree with `new` added: every entry of both, packed into fresh nodes.
    ///
    /// How large inserts index (`StoreVersion.insertInBulk`): one walk of the tree
    /// and one build, where inserting each entry descends and splits along its path.
    /// `new` must be sorted (`less`) and hold no entry of the tree.
    /// - Complexity: O(n + k) for n entries and k new ones
    public func merged<Entries: RandomAccessCollection<Entry>>(with new: Entries) -> BTree where Entries.Index == Int {
        guard count > 0 else { return BTree(sorted: new) }
        var all: [Entry] = []
        all.reserveCapacity(count + new.count)
        var j = new.startIndex
        scan { entry in
            while j < new.endIndex, Self.less(new[j], entry) {
                all.append(new[j])
                j += 1
            }
            all.append(entry)
            return true
        }
        all.append(contentsOf: new[j...])
        return BTree(sorted: all)
    }

    /// Removes the entry for `key` and `row`, if present.
    /// - Complexity: O(log n)
    public mutating func remove(_ key: Key, row: RowID) {
        if !isKnownUniquelyReferenced(&root) { root = root.copy() }
        if Self.remove(Entry(key: key, row: row), from: root) { count -= 1 }
        while !root.isLeaf, root.children.count == 1 { root = root.children[0] }
        if root.isEmpty { root = Node() }
    }

    /// The child whose range holds `entry`, by the same binary search scans use.
    private static func childIndex(for entry: Entry, in node: Node) -> Int {
        node.separators.withUnsafeBufferPointer { separators in
            firstIndex(in: separators.count) { less(entry, separators[$0]) }
        }
    }

    /// `rightmost`: whether `node` is the last node of its level (every key above it
    /// goes to it).
    private static func insert(_ entry: Entry, into node: Node, rightmost: Bool) -> (Entry, Node)? {
        if node.isLeaf {
            let low = node.insertInLeaf(entry)
            guard node.entryCount > capacity else { return nil }
            // Keys arriving in order (each above every key in the tree) leave full nodes
            // behind, as a bulk build would; other splits are in half. Both halves get
            // buffers of their own size: the one that overflowed had doubled to twice
            // the capacity, and a node keys stop arriving in kept that slack for good.
            let cut = rightmost && low == capacity ? capacity : capacity / 2
            let right = node.splitLeaf(at: cut)
            return (right.entry(at: 0), right)
        }
        let i = childIndex(for: entry, in: node)
        if !isKnownUniquelyReferenced(&node.children[i]) { node.children[i] = node.children[i].copy() }
        guard let (separator, right) = insert(entry, into: node.children[i], rightmost: rightmost && i == node.children.count - 1)
        else { return nil }
        node.separators.insert(separator, at: i)
        node.children.insert(right, at: i + 1)
        guard node.children.count > capacity else { return nil }
        let mid = rightmost && i + 1 == capacity ? capacity : node.children.count / 2
        let promoted = node.separators[mid - 1]
        let sibling = Node(separators: Array(node.separators[mid...]), children: Array(node.children[mid...]))
        node.separators = Array(node.separators[..<(mid - 1)])
        node.children = Array(node.children[..<mid])
        return (promoted, sibling)
    }

    private static func remove(_ entry: Entry, from node: Node) -> Bool {
        if node.isLeaf { return node.removeFromLeaf(entry) }
        let i = childIndex(for: entry, in: node)
        if !isKnownUniquelyReferenced(&node.children[i]) { node.children[i] = node.children[i].copy() }
        guard remove(entry, from: node.children[i]) else { return false }
        if node.children[i].isEmpty {
            node.children.remove(at: i)
            if !node.separators.isEmpty { node.separators.remove(at: max(i - 1, 0)) }
        }
        return true
    }

    // MARK: Equal keys

    /// Calls `body` with each entry whose key ties with `key` in index order, in
    /// row order, until `body` returns false: one descent to the first
    /// such entry, then along the leaves. No bounds, closures over bounds or
    /// arrays are made, which made the scan-based lookup cost about 7,000
    /// instructions per unique check of a save.
    /// - Complexity: O(log n + k) for k entries visited.
    @inline(__always)
    public func forEachEntry(tiedWith key: Key, _ body: (Entry) -> Bool) {
        _ = Self.forEachEntry(in: root, tiedWith: Entry(key: key, row: RowID(Int64.min)), body)
    }

    /// Returns false once the tied run ended or `body` asked to stop.
    private static func forEachEntry(in node: Node, tiedWith probe: Entry, _ body: (Entry) -> Bool) -> Bool {
        if node.isLeaf {
            var i = node.lowerBound(probe)
            guard node.runEnds.isEmpty else {
                // The tied entries are one run; the walk goes on in the next leaf when it
                // ends the leaf.
                guard i < node.entryCount else { return true }
                let r = node.run(containing: i)
                guard Key.compare(node.keys[r], probe.key) == 0 else { return false }
                let end = node.runEnd(r)
                return node.forEachEntry(from: i, to: end, reverse: false, body) && end == node.entryCount
            }
            return node.keys.withUnsafeBufferPointer { keys in
                node.rows.withUnsafeBufferPointer { rows in
                    while i < keys.count {
                        guard Key.compare(keys[i], probe.key) == 0, body(Entry(key: keys[i], row: row(rows[i])))
                        else { return false }
                        i += 1
                    }
                    return true
                }
            }
        }
        // The first entry at or above the probe is in child `i`; a tied run that
        // goes on past its end continues in the children after it.
        var i = childIndex(for: probe, in: node)
        while i < node.children.count {
            guard forEachEntry(in: node.children[i], tiedWith: probe, body) else { return false }
            i += 1
        }
        return true
    }

    // MARK: Scans

    /// Calls `body` with each entry between `lower` and `upper` (nil: unbounded),
    /// in index order or, with `reverse`, backwards, until `body` returns false.
    /// - Complexity: O(log n + k) for k entries visited.
    public func scan(from lower: Bound? = nil, to upper: Bound? = nil, reverse: Bool = false, _ body: (Entry) throws -> Bool) rethrows {
        _ = try Self.scan(root, lower, upper, reverse, body)
    }

    private static func scan(_ node: Node, _ lower: Bound?, _ upper: Bound?, _ reverse: Bool, _ body: (Entry) throws -> Bool) rethrows -> Bool {
        if node.isLeaf {
            // The entries within the bounds are one stretch, found by binary search over
            // the keys (one per entry or per run: bounds compare keys only).
            // Searched through a buffer pointer: keys are compared in place, not copied.
            let (startRun, endRun) = node.keys.withUnsafeBufferPointer { buffer in
                (lower.map { bound in firstIndex(in: buffer.count) { isAbove(buffer[$0], bound) } } ?? 0,
                 upper.map { bound in firstIndex(in: buffer.count) { !isBelow(buffer[$0], bound) } } ?? buffer.count)
            }
            return try node.forEachEntry(from: node.runStart(startRun), to: node.runStart(endRun), reverse: reverse, body)
        }
        // Child i holds entries in [separators[i - 1], separators[i]).
        let n = node.children.count
        var first = 0, last = n - 1
        node.separators.withUnsafeBufferPointer { separators in
            if let lower {
                // Child i holds nothing at or above the bound when its upper separator's
                // prefix is already below the bound's.
                first = firstIndex(in: n - 1) { lower.compare(separators[$0].key) >= 0 }
            }
            if let upper {
                // Child i holds nothing at or below the bound when its lower separator is above it.
                last = firstIndex(in: n - 1) { !isBelow(separators[$0].key, upper) }
            }
        }
        guard first <= last else { return true }
        let inner = innerStart(of: node, first: first, last: last, lower: lower)
        if reverse {
            for i in stride(from: last, through: first, by: -1) {
                if try !scan(node.children[i], i < inner ? lower : nil, i == last ? upper : nil, reverse, body) { return false }
            }
        } else {
            for i in first...last {
                if try !scan(node.children[i], i < inner ? lower : nil, i == last ? upper : nil, reverse, body) { return false }
            }
        }
        return true
    }

    /// The first of the children `first...last` (or `last + 1`) from which on every
    /// entry is within `lower` (above it, or tied with it when it is inclusive): those
    /// children, and all but the last for `upper`, are read without the bound, so a
    /// wide range's leaves are taken whole rather than searched twice each. Child `i`
    /// holds entries from `separators[i - 1]` on, so it needs `lower` while that
    /// separator's key is not within it (equal keys may sit on both sides of a
    /// separator, and an exclusive bound excludes them); child `i` before `last` holds
    /// entries strictly below `separators[i]`, whose key is within `upper`.
    @inline(__always)
    private static func innerStart(of node: Node, first: Int, last: Int, lower: Bound?) -> Int {
        guard let lower else { return first }
        var i = first + 1
        while i <= last, !isAbove(node.separators[i - 1].key, lower) { i += 1 }
        return i
    }

    /// How many entries lie between `lower` and `upper` (nil: unbounded), counted up to
    /// `cap`: once the count reaches it the walk stops, so the answer is the count or
    /// a number at least `cap`. A leaf's stretch is counted at once, never entry by
    /// entry: a planner asks how wide a range is before choosing how to read it.
    /// - Complexity: O(log n + k / b) for k entries counted, b entries a leaf.
    public func count(from lower: Bound? = nil, to upper: Bound? = nil, cap: Int = .max) -> Int {
        var total = 0
        _ = Self.count(root, lower, upper, cap, &total)
        return total
    }

    /// Adds the node's entries within the bounds to `total`; false once it reached `cap`.
    private static func count(_ node: Node, _ lower: Bound?, _ upper: Bound?, _ cap: Int, _ total: inout Int) -> Bool {
        if node.isLeaf {
            let (startRun, endRun) = node.keys.withUnsafeBufferPointer { buffer in
                (lower.map { bound in firstIndex(in: buffer.count) { isAbove(buffer[$0], bound) } } ?? 0,
                 upper.map { bound in firstIndex(in: buffer.count) { !isBelow(buffer[$0], bound) } } ?? buffer.count)
            }
            if endRun > startRun { total += node.runStart(endRun) - node.runStart(startRun) }
            return total < cap
        }
        let n = node.children.count
        var first = 0, last = n - 1
        node.separators.withUnsafeBufferPointer { separators in
            if let lower { first = firstIndex(in: n - 1) { lower.compare(separators[$0].key) >= 0 } }
            if let upper { last = firstIndex(in: n - 1) { !isBelow(separators[$0].key, upper) } }
        }
        guard first <= last else { return true }
        let inner = innerStart(of: node, first: first, last: last, lower: lower)
        for i in first...last where !count(node.children[i], i < inner ? lower : nil, i == last ? upper : nil, cap, &total) {
            return false
        }
        return true
    }

    /// The first index in `0..<count` where `holds` is true, or `count`; `holds` must
    /// be false and then true along the indices.
    @inline(__always)
    static func firstIndex(in count: Int, where holds: (Int) -> Bool) -> Int {
        var low = 0, high = count
        while low < high {
            let mid = (low + high) / 2
            if holds(mid) { high = mid } else { low = mid + 1 }
        }
        return low
    }
}

extension Value {
    /// `Value`'s order (`<`, which puts NaN above every number, so it never breaks a
    /// search; predicates still test rows with Swift's semantics) as a three-way
    /// comparison: one comparison of the common kinds rather than two calls of `<`.
    @inline(__always)
    public static func indexCompare(_ a: borrowing Value, _ b: borrowing Value) -> Int {
        // Switches over borrowed values: the payloads are compared in place.
        switch a {
        case let .string(x):
            switch b {
            case let .string(y): return StringOrder.compare(x, y)
            default: break
            }
        case let .int(x):
            switch b {
            case let .int(y): return x == y ? 0 : (x < y ? -1 : 1)
            default: break
            }
        case let .double(x):
            switch b {
            case let .double(y) where !x.isNaN && !y.isNaN: return x < y ? -1 : (y < x ? 1 : 0)
            default: break
            }
        case let .date(x):
            switch b {
            case let .date(y):
                let (s, t) = (x.timeIntervalSinceReferenceDate, y.timeIntervalSinceReferenceDate)
                if !s.isNaN, !t.isNaN { return s < t ? -1 : (t < s ? 1 : 0) }
            default: break
            }
        default:
            break
        }
        let (x, y) = (copy a, copy b)
        return x < y ? -1 : (y < x ? 1 : 0)
    }
}
