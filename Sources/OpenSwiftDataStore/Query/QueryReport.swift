/// How a query over stored rows ran, in one text for `ModelContext.explain` and
/// `osd query --explain`: the entity, the access path, whether the index gave the
/// sort's order, and how the filter was applied.
public struct QueryReport: CustomStringConvertible, Sendable {
    /// How the filter was applied.
    public enum Filtering: Hashable, Sendable {
        /// There was none.
        case none
        /// Tested on each stored row the access yields.
        case onRows
        /// Answered by the access alone: its rows are not tested again.
        case byIndex
        /// Evaluated on model objects (a predicate the engine cannot run); why.
        case onModels(String)
    }

    public var entity: String
    /// The access path, as `QueryAccess.summary(of:)` says it.
    public var access: String
    public var inSortOrder: Bool
    public var filtering: Filtering

    public init(entity: String, access: String, inSortOrder: Bool, filtering: Filtering) {
        self.entity = entity
        self.access = access
        self.inSortOrder = inSortOrder
        self.filtering = filtering
    }

    /// `access` of `entity`, with the filtering the access allows when there is a filter.
    public init(_ access: QueryAccess, of entity: EntityDescription, filtered: Bool, inSortOrder: Bool) {
        self.init(
            entity: entity.name, access: access.summary(of: entity), inSortOrder: inSortOrder,
            filtering: filtered ? (access.isExact ? .byIndex : .onRows) : .none)
    }

    /// For example `Trip: index (days) range, in sort order, filter answered by the index`.
    public var description: String {
        var text = "\(entity): \(access)"
        if inSortOrder { text += ", in sort order" }
        switch filtering {
        case .none: break
        case .onRows: text += ", filter tested on rows"
        case .byIndex: text += ", filter answered by the index"
        case let .onModels(reason): text += ", filter evaluated on models: \(reason)"
        }
        return text
    }
}

extension QueryAccess {
    /// The access path in a few words: `scan`, `unique index (name)`,
    /// `index (days) range`, `2 #id`, `R-tree (lat, lon) window`.
    public func summary(of entity: EntityDescription) -> String {
        func names(_ slots: [Int]) -> String { slots.map { entity.attributes[$0].name }.joined(separator: ", ") }
        switch self {
        case .scan:
            return "scan"
        case let .rows(ids, _):
            return "\(ids.count) #id"
        case let .unique(constraint, _, _):
            return "unique index (\(names(entity.uniqueness[constraint])))"
        case let .spatial(plan):
            return "R-tree (\(names(plan.slots))) window"
        case let .index(plan):
            return Self.summary(of: plan, names: names)
        }
    }

    /// `index (price) range`; a walk in the order of the sort's first keys says so,
    /// and a walk chosen over another plan names its budget and that plan.
    private static func summary(of plan: IndexPlan, names: ([Int]) -> String) -> String {
        let lookup = switch plan.lookup {
        case .equality: "equality"
        case .range: "range"
        case let .inList(count): "in-list of \(count)"
        case .ordered: "ordered"
        }
        var text = "index (\(names(plan.slots))) \(lookup)"
        if plan.providesOrder && plan.orderIsPartial {
            let keys = plan.orderSlotsRange.count
            text += " in the order of the sort's first \(keys == 1 ? "key" : "\(keys) keys")"
        }
        if let budget = plan.walkBudget, let other = plan.alternative?.plan {
            text += ", up to \(budget) rows tested, else \(summary(of: other, names: names))"
        }
        return text
    }

    /// Whether the access answers the predicate alone, so no row is tested.
    public var isExact: Bool {
        switch self {
        case let .unique(_, _, exact): exact
        case let .index(plan): plan.exact
        case let .rows(_, exact): exact
        case let .spatial(plan): plan.exact
        case .scan: false
        }
    }
}
