import Foundation

/// A planned query access whose values are bound per run: what `QueryPlanner`
/// chose for a predicate template, kept with the template so a repeated query
/// only binds its values (`bind`).
///
/// A class: a cached plan is read by every run of its template, and a copy of a
/// struct of these parts cost about 700 instructions per fetch (W2).
public final class QueryPlan: Sendable {
    /// A value in the plan: a constant of the predicate, or one of its parameters.
    enum Operand: Sendable {
        case value(Value)
        case parameter(Int)
        /// The negation of a parameter; nil when it has none (`Int.min`, not a number),
        /// which the plan's not-nil assumption then sends to a fresh plan.
        case negatedParameter(Int)

        var isNull: Bool {
            if case let .value(value) = self { return value.isNull }
            return false
        }

        var isParameter: Bool {
            switch self {
            case .value: false
            case .parameter, .negatedParameter: true
            }
        }

        func resolved(_ parameters: [Value]) -> Value {
            switch self {
            case let .value(value): value
            case let .parameter(i): parameters[i]
            case let .negatedParameter(i): Self.negated(parameters[i]) ?? .null
            }
        }

        /// `-value` as the predicate computes it, nil where that would fail.
        static func negated(_ value: Value) -> Value? {
            switch value {
            case let .int(i): i == .min ? nil : .int(-i)
            case let .double(d): .double(-d)
            case let .decimal(d): .decimal(-d)
            default: nil
            }
        }
    }

    /// One end of an index range: values for a prefix of the key.
    struct Bound: Sendable {
        var parts: [Operand]
        var inclusive: Bool

        func resolved(_ parameters: [Value]) -> IndexBound {
            IndexBound(parts.map { $0.resolved(parameters) }, inclusive: inclusive)
        }
    }

    /// The key ranges of an index access.
    enum Ranges: Sendable {
        case bounds(Bound?, Bound?)
        /// One equality range per distinct value of `list` (an array), after `prefix`.
        case inList(prefix: [Operand], list: Operand)
    }

    enum Access: Sendable {
        case scan
        case unique(constraint: Int, key: [Operand])
        /// The index plan, its `ranges` filled in by `bind`.
        case index(IndexPlan, Ranges)
        /// The rows an identifier (a `.reference`) or a list of them names.
        case rows(Operand, exact: Bool)
        /// An R-tree window: per dimension, the lower and upper bound (nil: open).
        case spatial(index: Int, slots: [Int], lower: [Operand?], upper: [Operand?])
    }

    /// A value the plan is exact only for: one of the kind `slot` stores, and not NaN
    /// when `rejectsNaN`.
    struct Requirement: Sendable {
        var operand: Operand
        var slot: Int
        var rejectsNaN: Bool
    }

    /// What the plan took a parameter to be; a run whose value is otherwise plans again.
    enum Assumption: Sendable {
        case notNull(Operand)
        case array(Operand)
    }

    let access: Access
    /// Nil when the plan is never exact; else the values that make it exact.
    let exactWhen: [Requirement]?
    let assumptions: [Assumption]
    let planner: QueryPlanner
    let template: QueryExpression?
    /// For an index plan that does not give a limited query's sort order: an index
    /// walked in that order, bound beside it as its `alternative`.
    let orderedWalk: (plan: IndexPlan, ranges: Ranges)?

    /// For a plan whose one unique key is one parameter, which its assumptions only
    /// require not to be nil and its one exactness requirement to be of a slot's
    /// kind: that parameter, its constraint and the requirement. `exactUniqueKey`
    /// then tests the one value, where walking the plan's operands copied each
    /// value it resolved (about 300 instructions of a W2 lookup).
    private let singleKey: (constraint: Int, parameter: Int, slot: Int, rejectsNaN: Bool)?

    init(
        access: Access, exactWhen: [Requirement]?, assumptions: [Assumption], planner: QueryPlanner, template: QueryExpression?,
        orderedWalk: (plan: IndexPlan, ranges: Ranges)? = nil
    ) {
        self.access = access
        self.exactWhen = exactWhen
        self.assumptions = assumptions
        self.planner = planner
        self.template = template
        self.orderedWalk = orderedWalk
        singleKey = Self.singleKey(access: access, exactWhen: exactWhen, assumptions: assumptions)
    }

    private static func singleKey(
        access: Access, exactWhen: [Requirement]?, assumptions: [Assumption]
    ) -> (constraint: Int, parameter: Int, slot: Int, rejectsNaN: Bool)? {
        guard case let .unique(constraint, key) = access, key.count == 1, case let .parameter(p) = key[0],
              let exactWhen, exactWhen.count == 1, case .parameter(p) = exactWhen[0].operand
        else { return nil }
        for assumption in assumptions {
            guard case let .notNull(operand) = assumption, case .parameter(p) = operand else { return nil }
        }
        return (constraint, p, exactWhen[0].slot, exactWhen[0].rejectsNaN)
    }

    /// Whether the plan looks one value of a one-attribute unique constraint up:
    /// what `exactUniqueKey` needs, checked before a run reads anything for it.
    public var looksUpOneUniqueKey: Bool {
        if case let .unique(_, key) = access { return key.count == 1 }
        return false
    }

    /// The constraint and the key of a run that looks one value of a
    /// one-attribute unique constraint up and is exact: `bind` would give
    /// `.unique(constraint:key: [key], exact: true)`. Nil for any other run.
    ///
    /// What a key lookup in a loop asks (`ModelContext.keyMatch`): no access is made,
    /// so no key array is allocated and destroyed. Binding and destroying an access
    /// cost about 1,000 instructions a W2 lookup; this costs about 400.
    /// - Complexity: O(p) for p values in the plan.
    public func exactUniqueKey(_ parameters: [Value], kinds: [ColumnKind]) -> (constraint: Int, key: Value)? {
        if let single = singleKey {
            // (A nil is of no column's kind: `fits` rejects it, as the assumption would.)
            let key = parameters[single.parameter]
            guard Self.fits(key, kinds[single.slot], rejectsNaN: single.rejectsNaN) else { return nil }
            return (single.constraint, key)
        }
        guard case let .unique(constraint, key) = access, key.count == 1, let exactWhen else { return nil }
        for assumption in assumptions {
            switch assumption {
            case let .notNull(operand): if operand.resolved(parameters).isNull { return nil }
            case .array: return nil
            }
        }
        for requirement in exactWhen
        where !Self.fits(requirement.operand.resolved(parameters), kinds[requirement.slot], rejectsNaN: requirement.rejectsNaN) {
            return nil
        }
        return (constraint, key[0].resolved(parameters))
    }

    /// Whether a run's candidates can come from the index in the order of the sort's
    /// keys, or of its first keys (`IndexPlan.orderIsPartial`).
    public var providesOrder: Bool {
        if case let .index(plan, _) = access { return plan.providesOrder }
        return false
    }

    /// The access for one run, with `parameters` (the template's `.parameter`
    /// values) bound in; `kinds` are how the entity's table stores each slot.
    /// - Complexity: O(p) for p values in the plan, plus a sort of an IN-list; a
    ///   value the plan cannot take (nil for a unique key, a non-list for an IN-list)
    ///   costs a fresh plan.
    public func bind(_ parameters: [Value], kinds: [ColumnKind]) -> QueryAccess {
        for assumption in assumptions {
            let holds = switch assumption {
            case let .notNull(operand): !operand.resolved(parameters).isNull
            case let .array(operand): if case .array = operand.resolved(parameters) { true } else { false }
            }
            guard holds else { return replanned(parameters, kinds: kinds) }
        }
        let exact = exactWhen?.allSatisfy { Self.fits($0.operand.resolved(parameters), kinds[$0.slot], rejectsNaN: $0.rejectsNaN) } ?? false
        switch access {
        case .scan:
            return .scan
        case let .rows(operand, exact):
            var ids: [RowID] = []
            switch operand.resolved(parameters) {
            case let .reference(id): ids = [id]
            case let .array(values):
                for case let .reference(id) in values { ids.append(id) }
                ids.sort()
                var distinct: [RowID] = []
                for id in ids where distinct.last != id { distinct.append(id) }
                ids = distinct
            default: break  // no row's identifier equals anything else
            }
            return .rows(ids, exact: exact)
        case let .unique(constraint, key):
            return .unique(constraint: constraint, key: key.map { $0.resolved(parameters) }, exact: exact)
        case let .spatial(index, slots, lower, upper):
            // A bound that is no number (NaN, a date, another kind, which `Value`'s
            // order puts above or below every number) is left to a scan: the
            // predicate decides.
            func number(_ operand: Operand?, open: Double) -> Double? {
                guard let operand else { return open }
                switch operand.resolved(parameters) {
                case let value where value.isIntegerOrDouble: return SpatialIndex.coordinate(value)
                default: return nil
                }
            }
            var window = SpatialPlan(index: index, slots: slots, lower: [], upper: [])
            for (low, high) in zip(lower, upper) {
                guard let low = number(low, open: -.infinity), let high = number(high, open: .infinity) else { return .scan }
                window.lower.append(low)
                window.upper.append(high)
            }
            window.exact = exact
            return .spatial(window)
        case .index(var plan, let ranges):
            guard Self.bind(ranges, into: &plan, parameters) else { return replanned(parameters, kinds: kinds) }
            plan.exact = exact
            if var walk = orderedWalk?.plan, let ranges = orderedWalk?.ranges, Self.bind(ranges, into: &walk, parameters) {
                plan.alternative = AlternativePlan(walk)
            }
            return .index(plan)
        }
    }

    /// Fills `plan`'s ranges with `parameters` bound in; false when a value is not
    /// what the plan took it to be (an IN-list's value that is no array).
    private static func bind(_ ranges: Ranges, into plan: inout IndexPlan, _ parameters: [Value]) -> Bool {
        switch ranges {
        case let .bounds(lower, upper):
            plan.ranges = [(lower?.resolved(parameters), upper?.resolved(parameters))]
        case let .inList(prefix, list):
            guard case let .array(values) = list.resolved(parameters) else { return false }
            let head = prefix.map { $0.resolved(parameters) }
            var distinct: [Value] = []
            for value in values.sorted() where distinct.last != value { distinct.append(value) }
            plan.ranges = distinct.map { value in
                let bound = IndexBound(head + [value], inclusive: true)
                return (bound, bound)
            }
            plan.lookup = .inList(distinct.count)
        }
        return true
    }

    /// Plans the template with `parameters` substituted, for values this plan could
    /// not take (a constant plan makes no assumptions, so this does not recur).
    private func replanned(_ parameters: [Value], kinds: [ColumnKind]) -> QueryAccess {
        let expression = template?.substitutingParameters { .constant(parameters[$0]) }
        return planner.plan(expression).bind([], kinds: kinds)
    }

    /// Whether `value` is of the typed kind a column of `kind` stores (so the
    /// index's order and equality agree with the predicate's), and not NaN when
    /// `rejectsNaN`.
    private static func fits(_ value: Value, _ kind: ColumnKind, rejectsNaN: Bool) -> Bool {
        switch (value, kind) {
        case (.bool, .bool), (.int, .int), (.uint, .uint), (.string, .string): true
        case let (.double(v), .double): !(rejectsNaN && v.isNaN)
        case let (.date(d), .date): !(rejectsNaN && d.timeIntervalSinceReferenceDate.isNaN)
        default: false
        }
    }
}

extension Value {
    /// Whether the value is an integer or a `Double`: a number that compares with
    /// the numbers of a numeric column as numbers do.
    var isIntegerOrDouble: Bool {
        switch self {
        case .int, .uint, .double: true
        default: false
        }
    }
}
