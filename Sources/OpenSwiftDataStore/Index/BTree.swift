import Foundation

/// A persistent B+-tree: an ordered multimap from index keys to rows.
///
/// Entries (a key and the row that holds it) live in leaves, ordered by key and
/// then by row, so duplicate keys are allowed and equal keys keep row order.
/// Nodes are shared between copies and copied on write along one root-to-leaf
/// path, so a store version that publishes a changed index shares every node the
/// commit did not touch. Deletions leave nodes underfull rather than rebalancing;
/// a bulk build (`init(sorted:)`) packs them again.
public struct BTree: Sendable {
    public struct Entry: Sendable {
        public var key: [Value]
        public var row: RowID
        public init(key: [Value], row: RowID) {
            self.key = key
            self.row = row
        }
    }

    /// One end of a key range, compared on the first `prefix.count` key parts, so
    /// a range can constrain a prefix of a compound key.
    public struct Bound: Sendable, Hashable {
        public var prefix: [Value]
        public var inclusive: Bool
        public init(_ prefix: [Value], inclusive: Bool) {
            self.prefix = prefix
            self.inclusive = inclusive
        }
    }

    static let capacity = 64

    final class Node: @unchecked Sendable {
        /// Leaf: the entries. Internal: empty.
        var entries: [Entry]
        /// Internal: `separators[i]` is the smallest entry of `children[i + 1]`.
        var separators: [Entry]
        var children: [Node]

        init(entries: [Entry] = [], separators: [Entry] = [], children: [Node] = []) {
            self.entries = entries
            self.separators = separators
            self.children = children
        }

        var isLeaf: Bool { children.isEmpty }
        var isEmpty: Bool { isLeaf ? entries.isEmpty : children.isEmpty }
        func copy() -> Node { Node(entries: entries, separators: separators, children: children) }
    }

    private var root = Node()
    public private(set) var count = 0

    public init() {}

    /// Builds a tree from entries already in order.
    /// - Complexity: O(n)
    public init(sorted entries: [Entry]) {
        count = entries.count
        guard !entries.isEmpty else { return }
        let fill = Self.capacity * 3 / 4
        var level: [Node] = stride(from: 0, to: entries.count, by: fill).map {
            Node(entries: Array(entries[$0..<min($0 + fill, entries.count)]))
        }
        var minima = level.map { $0.entries[0] }
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

    // MARK: Order

    /// The index order: values by `Value.indexOrder`, then rows.
    static func less(_ a: Entry, _ b: Entry) -> Bool {
        let c = compare(a.key, b.key)
        return c != 0 ? c < 0 : a.row < b.row
    }

    /// Three-way comparison of the first `limit` parts of two keys.
    static func compare(_ a: [Value], _ b: [Value], limit: Int = .max) -> Int {
        for i in 0..<min(a.count, b.count, limit) {
            let c = Value.indexCompare(a[i], b[i])
            if c != 0 { return c }
        }
        return 0
    }

    /// Whether `entry` lies above `bound` (at or above when inclusive).
    static func isAbove(_ entry: Entry, _ bound: Bound) -> Bool {
        let c = compare(entry.key, bound.prefix, limit: bound.prefix.count)
        return c > 0 || (c == 0 && bound.inclusive)
    }

    /// Whether `entry` lies below `bound` (at or below when inclusive).
    static func isBelow(_ entry: Entry, _ bound: Bound) -> Bool {
        let c = compare(entry.key, bound.prefix, limit: bound.prefix.count)
        return c < 0 || (c == 0 && bound.inclusive)
    }

    // MARK: Changes

    /// Adds an entry.
    /// - Complexity: O(log n); copies the nodes on one path when they are shared.
    public mutating func insert(_ key: [Value], row: RowID) {
        if !isKnownUniquelyReferenced(&root) { root = root.copy() }
        if let (separator, right) = Self.insert(Entry(key: key, row: row), into: root) {
            root = Node(separators: [separator], children: [root, right])
        }
        count += 1
    }

    /// Removes the entry for `key` and `row`, if present.
    /// - Complexity: O(log n)
    public mutating func remove(_ key: [Value], row: RowID) {
        if !isKnownUniquelyReferenced(&root) { root = root.copy() }
        if Self.remove(Entry(key: key, row: row), from: root) { count -= 1 }
        while !root.isLeaf, root.children.count == 1 { root = root.children[0] }
        if root.isEmpty { root = Node() }
    }

    private static func childIndex(for entry: Entry, in node: Node) -> Int {
        var low = 0, high = node.separators.count
        while low < high {
            let mid = (low + high) / 2
            if less(entry, node.separators[mid]) { high = mid } else { low = mid + 1 }
        }
        return low
    }

    private static func insert(_ entry: Entry, into node: Node) -> (Entry, Node)? {
        if node.isLeaf {
            var low = 0, high = node.entries.count
            while low < high {
                let mid = (low + high) / 2
                if less(node.entries[mid], entry) { low = mid + 1 } else { high = mid }
            }
            node.entries.insert(entry, at: low)
            guard node.entries.count > capacity else { return nil }
            let right = Node(entries: Array(node.entries[(capacity / 2)...]))
            node.entries.removeSubrange((capacity / 2)...)
            return (right.entries[0], right)
        }
        let i = childIndex(for: entry, in: node)
        if !isKnownUniquelyReferenced(&node.children[i]) { node.children[i] = node.children[i].copy() }
        guard let (separator, right) = insert(entry, into: node.children[i]) else { return nil }
        node.separators.insert(separator, at: i)
        node.children.insert(right, at: i + 1)
        guard node.children.count > capacity else { return nil }
        let mid = node.children.count / 2
        let promoted = node.separators[mid - 1]
        let sibling = Node(separators: Array(node.separators[mid...]), children: Array(node.children[mid...]))
        node.separators.removeSubrange((mid - 1)...)
        node.children.removeSubrange(mid...)
        return (promoted, sibling)
    }

    private static func remove(_ entry: Entry, from node: Node) -> Bool {
        if node.isLeaf {
            var low = 0, high = node.entries.count
            while low < high {
                let mid = (low + high) / 2
                if less(node.entries[mid], entry) { low = mid + 1 } else { high = mid }
            }
            guard low < node.entries.count, !less(entry, node.entries[low]) else { return false }
            node.entries.remove(at: low)
            return true
        }
        let i = childIndex(for: entry, in: node)
        if !isKnownUniquelyReferenced(&node.children[i]) { node.children[i] = node.children[i].copy() }
        guard remove(entry, from: node.children[i]) else { return false }
        if node.children[i].isEmpty {
            node.children.remove(at: i)
            if !node.separators.isEmpty { node.separators.remove(at: max(i - 1, 0)) }
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
            // The entries within the bounds are one run, found by binary search.
            let entries = node.entries
            let start = lower.map { bound in firstIndex(in: entries.count) { isAbove(entries[$0], bound) } } ?? 0
            let end = upper.map { bound in firstIndex(in: entries.count) { !isBelow(entries[$0], bound) } } ?? entries.count
            guard start < end else { return true }
            if reverse {
                for i in stride(from: end - 1, through: start, by: -1) where try !body(entries[i]) { return false }
            } else {
                for i in start..<end where try !body(entries[i]) { return false }
            }
            return true
        }
        // Child i holds entries in [separators[i - 1], separators[i]).
        let n = node.children.count
        let separators = node.separators
        var first = 0, last = n - 1
        if let lower {
            // Child i holds nothing at or above the bound when its upper separator's
            // prefix is already below the bound's.
            first = firstIndex(in: n - 1) { compare(separators[$0].key, lower.prefix, limit: lower.prefix.count) >= 0 }
        }
        if let upper {
            // Child i holds nothing at or below the bound when its lower separator is above it.
            last = firstIndex(in: n - 1) { !isBelow(separators[$0], upper) }
        }
        guard first <= last else { return true }
        if reverse {
            for i in stride(from: last, through: first, by: -1) where try !scan(node.children[i], lower, upper, reverse, body) {
                return false
            }
        } else {
            for i in first...last where try !scan(node.children[i], lower, upper, reverse, body) {
                return false
            }
        }
        return true
    }

    /// The first index in `0..<count` where `holds` is true, or `count`; `holds` must
    /// be false and then true along the indices.
    @inline(__always)
    private static func firstIndex(in count: Int, where holds: (Int) -> Bool) -> Int {
        var low = 0, high = count
        while low < high {
            let mid = (low + high) / 2
            if holds(mid) { high = mid } else { low = mid + 1 }
        }
        return low
    }
}

extension Value {
    /// `indexOrder` as a three-way comparison: one comparison of the common kinds
    /// rather than two calls of `<`.
    @inline(__always)
    public static func indexCompare(_ a: Value, _ b: Value) -> Int {
        switch (a, b) {
        case let (.string(x), .string(y)):
            return x == y ? 0 : (x < y ? -1 : 1)
        case let (.int(x), .int(y)):
            return x == y ? 0 : (x < y ? -1 : 1)
        case let (.double(x), .double(y)) where !x.isNaN && !y.isNaN:
            return x < y ? -1 : (y < x ? 1 : 0)
        case let (.date(x), .date(y)):
            let (s, t) = (x.timeIntervalSinceReferenceDate, y.timeIntervalSinceReferenceDate)
            if !s.isNaN, !t.isNaN { return s < t ? -1 : (t < s ? 1 : 0) }
        default:
            break
        }
        return indexOrder(a, b) ? -1 : (indexOrder(b, a) ? 1 : 0)
    }

    /// The total order of index keys: `<`, except that NaN sorts above every other
    /// number (so it never breaks a search); predicates still test rows with Swift's
    /// own semantics after the index narrows them.
    public static func indexOrder(_ a: Value, _ b: Value) -> Bool {
        if case let .double(x) = a, case let .double(y) = b {
            if x.isNaN || y.isNaN { return !x.isNaN && y.isNaN }
        }
        return a < b
    }
}
