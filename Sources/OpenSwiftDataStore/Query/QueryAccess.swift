/// How a query finds its candidate rows: what `QueryPlanner` chose, with the
/// values of one run bound in.
public enum QueryAccess: Sendable {
    /// Every row of the entity is tested.
    case scan
    /// A unique constraint's key lookup. `exact` when the predicate is nothing but
    /// the key's equalities with values of the attributes' own kinds: the row the
    /// lookup finds passes it and is not tested again.
    case unique(constraint: Int, key: [Value], exact: Bool)
    /// Key ranges of one ordered index.
    case index(IndexPlan)
    /// The rows of these identifiers, ascending (`$0.persistentModelID == id`, an
    /// identifier list's `contains`, the CLI's `#id ==`). `exact` when that is the
    /// whole predicate.
    case rows([RowID], exact: Bool)
    /// The rows an R-tree finds inside a window; each is tested against the
    /// whole predicate.
    case spatial(SpatialPlan)
}

/// An R-tree access: the window of one spatial index of the entity, from the
/// predicate's bounds on the index's attributes (an attribute bounded on one side
/// only is open on the other).
public struct SpatialPlan: Sendable {
    /// The position of the index in `StoreVersion.spatialIndexes[entity]`.
    public var index: Int
    /// The index's attribute slots, one per dimension.
    public var slots: [Int]
    /// The window's corners, as the tree's coordinates (`SpatialIndex.coordinate`).
    public var lower: [Double]
    public var upper: [Double]
    /// Whether the predicate is exactly the window: the rows the tree yields pass
    /// it and are not tested again.
    public var exact = false

    public init(index: Int, slots: [Int], lower: [Double], upper: [Double]) {
        self.index = index
        self.slots = slots
        self.lower = lower
        self.upper = upper
    }
}

/// A B-tree access: key ranges of one ordered index of the entity.
public struct IndexPlan: Sendable {
    /// The position of the index in `StoreVersion.orderedIndexes[entity]`.
    public var index: Int
    /// The index's attribute slots, in key order.
    public var slots: [Int]
    public var ranges: [(lower: IndexBound?, upper: IndexBound?)]
    public var lookup: IndexLookup
    /// Whether walking the ranges yields rows in the requested sort order: of every
    /// sort key, or of the first ones only (`orderIsPartial`).
    public var providesOrder = false
    /// Whether the walk orders only the sort's first keys (`orderSlotsRange`), the
    /// index's parts after them being other attributes or none: rows tied on those
    /// keys are ranked by the rest after the walk, which still stops once a window's
    /// rows and the rows tied with its last are in.
    public var orderIsPartial = false
    public var reverse = false
    /// The positions in the index key that carry the sort keys (all of them, or the
    /// first ones when `orderIsPartial`), when `providesOrder`.
    public var orderSlotsRange: Range<Int> = 0..<0
    /// Whether the predicate is exactly the range: the rows it yields pass it and
    /// are not tested again.
    public var exact = false
    /// The other way to read the same query. On a plan the planner made: an index
    /// walked in the sort's order (`orderedWalk`), for a run with a window whose
    /// ranges turn out wide. On that walk once chosen (`walkBudget` set): the plan it
    /// replaced, read after all when the walk tests more rows than it holds.
    /// (`StoredRowQuery.chosenAccess(indexOrder:window:)` decides.)
    public var alternative: AlternativePlan?
    /// On a walk chosen over `alternative`: how many rows it may test before its
    /// window is full (the count of the alternative's ranges).
    public var walkBudget: Int?

    public init(index: Int, slots: [Int], ranges: [(lower: IndexBound?, upper: IndexBound?)], lookup: IndexLookup) {
        self.index = index
        self.slots = slots
        self.ranges = ranges
        self.lookup = lookup
    }
}

/// An index plan held by another (`IndexPlan.alternative`): a class, as a struct
/// cannot hold its own type.
public final class AlternativePlan: Sendable {
    public let plan: IndexPlan

    public init(_ plan: IndexPlan) {
        self.plan = plan
    }
}

/// How an ordered index is read.
public enum IndexLookup: Hashable, Sendable {
    /// Keys equal to constants (a whole key or a prefix of a compound one).
    case equality
    /// A range of keys (after any equal prefix).
    case range
    /// One lookup per value of a constant list (`values.contains($0.x)`).
    case inList(Int)
    /// The whole index, read for its order.
    case ordered
}

/// One key of a sort on stored attributes.
public struct SortKey: Hashable, Sendable {
    public var slot: Int
    public var reverse: Bool

    public init(slot: Int, reverse: Bool) {
        self.slot = slot
        self.reverse = reverse
    }
}
