import Foundation

/// An entity's R-tree index (`#Index<Trip>(.rtree([\.latitude, \.longitude]))`):
/// each row's values of the index's attributes as one point.
///
/// Built on first use, not when a store opens or a save commits: an index that
/// no query reads costs neither memory nor time (documents open and bulk inserts
/// run at the speed of the B-trees alone). The first window or distance query
/// packs the tree from the table in O(n log n); from then on every commit keeps it
/// in step in O(changes × log n), sharing unchanged nodes with earlier versions,
/// except a commit writing more rows than half the tree holds, after which the next
/// query packs it again.
///
/// A row is indexed when every one of its values there is a number: integers,
/// floating point and dates (as seconds since the reference date). Rows with
/// nil, NaN or another kind of value are not in the tree. The planner reads the
/// tree only over integer and `Double` attributes, where no range condition can
/// hold for such rows, so a window query misses nothing (a NaN `Date` passes `>=`
/// and `<=`, which `Date` defines as negations of `<`).
public struct SpatialIndex: Sendable {
    /// The attribute slots, one per dimension.
    public let slots: [Int]

    /// The tree, once built. Copies of a version share it; a commit that changes
    /// the index takes a state of its own first (`mutate`).
    private final class State: @unchecked Sendable {
        let lock = NSLock()
        var tree: RTree?

        init(tree: RTree?) {
            self.tree = tree
        }
    }

    private var state: State

    init(slots: [Int]) {
        self.slots = slots
        self.state = State(tree: nil)
    }

    /// Whether a query has built the tree yet (in this version or an earlier one
    /// it descends from).
    public var isBuilt: Bool { state.lock.withLock { state.tree != nil } }

    /// The number a value stands for as a coordinate, nil when it is none.
    @inline(__always)
    public static func coordinate(_ value: Value) -> Double? {
        switch value {
        case let .int(v): Double(v)
        case let .uint(v): Double(v)
        case let .double(v): v.isNaN ? nil : v
        case let .date(d): d.timeIntervalSinceReferenceDate.isNaN ? nil : d.timeIntervalSinceReferenceDate
        default: nil
        }
    }

    /// The point of `row`, nil when it is not indexed.
    func point(of row: Row) -> [Double]? {
        var point: [Double] = []
        point.reserveCapacity(slots.count)
        for slot in slots {
            guard let x = Self.coordinate(row[slot]) else { return nil }
            point.append(x)
        }
        return point
    }

    /// The tree over `table` (the rows of the version this index belongs to),
    /// built now if no query has built it.
    /// - Complexity: O(1) once built; O(n log n) the first time.
    public func tree(over table: Table) -> RTree {
        state.lock.withLock {
            if let tree = state.tree { return tree }
            let tree = build(from: table)
            state.tree = tree
            return tree
        }
    }

    private func build(from table: Table) -> RTree {
        var points: [Double] = []
        var rows: [RowID] = []
        points.reserveCapacity(table.count * slots.count)
        rows.reserveCapacity(table.count)
        var point = [Double](repeating: 0, count: slots.count)
        for segment in table.segments {
            let columns = slots.map { segment.columns[$0] }
            Bitmap.forEachSet(segment.live) { p in
                for (axis, column) in columns.enumerated() {
                    guard let x = Self.coordinate(column.value(at: p)) else { return }
                    point[axis] = x
                }
                points.append(contentsOf: point)
                rows.append(segment.id(at: p))
            }
        }
        return RTree(dimensions: slots.count, points: points, rows: rows)
    }

    // MARK: Changes (a commit's, on its own copy of the version)

    /// Indexes `row`, stored under `id`, when the tree is built.
    mutating func add(_ row: Row, at id: RowID) {
        guard ownTree(), let point = point(of: row) else { return }
        state.tree!.insert(point, row: id)
    }

    /// Takes `row`, stored under `id`, out of the tree when it is built.
    mutating func remove(_ row: Row, at id: RowID) {
        guard ownTree(), let point = point(of: row) else { return }
        state.tree!.remove(point, row: id)
    }

    /// Whether `old` and `new` are the same point (or both unindexed).
    func samePoint(_ old: Row, _ new: Row) -> Bool {
        slots.allSatisfy { Self.coordinate(old[$0]) == Self.coordinate(new[$0]) }
    }

    /// Forgets a built tree of fewer than `points` points, so the next query builds
    /// it again in bulk (a large commit rebuilds rather than inserts one by one).
    mutating func discardTree(ifSmallerThan points: Int) {
        guard let tree = state.lock.withLock({ state.tree }), tree.count < points else { return }
        state = State(tree: nil)
    }

    /// Gives this copy a state of its own, built or not, as a commit that changes the
    /// entity's rows without `add` or `remove` must (a bulk insert): see `ownTree`.
    mutating func detach() { _ = ownTree() }

    /// Gives this copy a state of its own (so a reader building an earlier version's
    /// tree never builds it into this one, whose rows differ), and says whether it
    /// holds a built tree to change. Unbuilt, there is nothing to change: the first
    /// query builds the tree from the table.
    private mutating func ownTree() -> Bool {
        if !isKnownUniquelyReferenced(&state) {
            state = State(tree: state.lock.withLock { state.tree })
        }
        return state.tree != nil
    }
}
