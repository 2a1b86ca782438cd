/// Chooses how a query finds its candidate rows.
///
/// From the terms of the predicate's top-level conjunction that pin a stored
/// attribute of the entity to constants (`==`, `<`…, ranges, and
/// `constants.contains($0.x)` IN-lists), it picks, in order of preference: a unique
/// key lookup; an ordered index with an equality prefix; an R-tree whose every
/// attribute is bounded (its window); an ordered index with an IN-list or a range
/// on its first key part; with a limit and no such index, an index whose order
/// serves the sort; else a scan. An index serves the sort when it gives the order
/// of all its keys or of the first ones (the rest break ties after the walk, which
/// still stops at the window). With a limit, an index plan that does not give the
/// order carries an index walk in the order of the sort's first key as its
/// alternative, chosen per run when the plan's ranges prove wide
/// (`StoredRowQuery.chosenAccess`). Every candidate still passes the whole predicate
/// unless the plan is exact, so a plan narrows the rows and never changes the
/// answer.
///
/// Planning reads a predicate *template*, whose captured values are `.parameter`s,
/// and yields a `QueryPlan` that each run binds its values into (`QueryPlan.bind`):
/// a predicate rebuilt with new values (a lookup in a loop) is planned once.
public struct QueryPlanner: Sendable {
    let entity: EntityDescription
    /// The attribute slots of each ordered index of the entity.
    let indexes: [[Int]]
    /// The sort, nil when there is none or a key is not a stored attribute.
    let sortKeys: [SortKey]?
    /// Whether the query has a limit (an index can then serve the sort alone).
    let limited: Bool

    public init(entity: EntityDescription, indexes: [[Int]], sortKeys: [SortKey]?, limited: Bool) {
        self.entity = entity
        self.indexes = indexes
        self.sortKeys = sortKeys
        self.limited = limited
    }

    private struct Terms {
        var equal: [Int: QueryPlan.Operand] = [:]
        var lower: [Int: QueryPlan.Bound] = [:]
        var upper: [Int: QueryPlan.Bound] = [:]
        var inList: [Int: QueryPlan.Operand] = [:]
        /// An identifier the row's own must equal, or a list it must be in.
        var rows: QueryPlan.Operand?
    }

    /// The plan for `expression` (nil: no predicate), whose parameters are bound later.
    public func plan(_ expression: QueryExpression?) -> QueryPlan {
        var terms = Terms()
        var assumptions: [QueryPlan.Assumption] = []
        let conjuncts = expression?.conjuncts ?? []
        for term in conjuncts { collect(term, into: &terms, assuming: &assumptions) }
        func made(
            _ access: QueryPlan.Access, exactWhen: [QueryPlan.Requirement]?, walk: (IndexPlan, QueryPlan.Ranges)? = nil
        ) -> QueryPlan {
            QueryPlan(
                access: access, exactWhen: exactWhen, assumptions: assumptions, planner: self, template: expression,
                orderedWalk: walk)
        }
        if let rows = terms.rows {
            // A row named by its identifier: no index is narrower.
            return made(.rows(rows, exact: conjuncts.count == 1), exactWhen: nil)
        }
        for (c, slots) in entity.uniqueness.enumerated() {
            let key = slots.compactMap { terms.equal[$0] }
            guard key.count == slots.count, !key.contains(where: \.isNull) else { continue }
            for operand in key where operand.isParameter { assumptions.append(.notNull(operand)) }
            return made(.unique(constraint: c, key: key), exactWhen: exactKey(slots, conjuncts: conjuncts))
        }
        var best: (score: Int, plan: IndexPlan, ranges: QueryPlan.Ranges)?
        for (i, slots) in indexes.enumerated() {
            guard var candidate = indexPlan(i, slots: slots, terms: terms, assuming: &assumptions) else { continue }
            applyOrder(to: &candidate, prefix: candidate.equalityPrefix)
            if best == nil || candidate.score > best!.score { best = (candidate.score, candidate.plan, candidate.ranges) }
        }
        // An R-tree whose every attribute is bounded narrows on all of them at once:
        // preferred to a range on one attribute, not to an equality.
        if best.map({ $0.score < Self.spatialScore }) ?? true, let (index, slots) = spatialIndex(terms) {
            let access = QueryPlan.Access.spatial(
                index: index, slots: slots, lower: slots.map { terms.lower[$0]?.parts.first },
                upper: slots.map { terms.upper[$0]?.parts.first })
            return made(access, exactWhen: exactWindow(slots, conjuncts: conjuncts))
        }
        if let best {
            let walk = best.plan.providesOrder ? nil : orderedWalk(terms, besides: best.plan.index)
            return made(
                .index(best.plan, best.ranges), exactWhen: exactRange(best.plan, best.ranges, conjuncts: conjuncts), walk: walk)
        }
        // Nothing narrows the rows: with a limit, an index in the sort's order, walked
        // whole until the window is full. (No term bounds its first part, or that
        // index would have narrowed them.)
        if let (plan, ranges) = orderedWalk(terms, besides: nil) { return made(.index(plan, ranges), exactWhen: nil) }
        return made(.scan, exactWhen: nil)
    }

    /// When the predicate is exactly `slots`' equalities (`$0.a == x && $0.b == y`,
    /// each slot once, nothing else), what its values must be for the row a unique
    /// lookup finds to be the answer: of the kinds the attributes store (Bool,
    /// integers, Double, Date, String), as the index's equality and `==` agree on
    /// those kinds (NaN equal to nothing, -0.0 to 0.0, strings by canonical
    /// equivalence). Nil when the predicate is more than that.
    private func exactKey(_ slots: [Int], conjuncts: [QueryExpression]) -> [QueryPlan.Requirement]? {
        guard conjuncts.count == slots.count, slots.count <= 64 else { return nil }
        // Which of the key's slots a term pinned, one bit per position in `slots`.
        var covered: UInt64 = 0
        var requirements: [QueryPlan.Requirement] = []
        for term in conjuncts {
            guard case let .equal(l, r) = term, let (slot, operand) = pinned(l, r) ?? pinned(r, l),
                  let position = slots.firstIndex(of: slot), covered & (1 << UInt64(position)) == 0
            else { return nil }
            covered |= 1 << UInt64(position)
            requirements.append(.init(operand: operand, slot: slot, rejectsNaN: false))
        }
        return requirements
    }

    /// When the predicate is exactly what the plan's one range selects, what its
    /// values must be for the rows the index yields to pass it untested: equalities
    /// on each part of the equality prefix and at most one lower and one upper bound
    /// on the next part, each once, nothing else; values of the attributes' own typed
    /// kinds, never NaN; the bounded attribute not optional (the index orders nil
    /// below every value); and a `Double` or `Date` bounded from above (the index
    /// orders NaN above +infinity, where every comparison is false).
    private func exactRange(_ plan: IndexPlan, _ ranges: QueryPlan.Ranges, conjuncts: [QueryExpression]) -> [QueryPlan.Requirement]? {
        guard case .bounds = ranges, plan.lookup == .range || plan.lookup == .equality else { return nil }
        var prefix: [Int] = []
        for slot in plan.slots {
            guard conjuncts.contains(where: { term in
                if case let .equal(l, r) = term, let (s, _) = pinned(l, r) ?? pinned(r, l) { return s == slot }
                return false
            }) else { break }
            prefix.append(slot)
        }
        let rangeSlot = prefix.count < plan.slots.count ? plan.slots[prefix.count] : nil
        var equalities = 0
        var lower = false, upper = false
        var requirements: [QueryPlan.Requirement] = []
        func require(_ operand: QueryPlan.Operand, _ slot: Int) {
            requirements.append(.init(operand: operand, slot: slot, rejectsNaN: true))
        }
        for term in conjuncts {
            switch term {
            case let .equal(l, r):
                guard let (slot, operand) = pinned(l, r) ?? pinned(r, l), prefix.contains(slot) else { return nil }
                require(operand, slot)
                equalities += 1
            case let .compare(op, l, r):
                let side = pinned(l, r).map { ($0.0, $0.1, op) } ?? pinned(r, l).map { ($0.0, $0.1, op.flipped) }
                guard let (slot, operand, op) = side, slot == rangeSlot else { return nil }
                require(operand, slot)
                switch op {
                case .greaterThan, .greaterThanOrEqual:
                    guard !lower else { return nil }
                    lower = true
                case .lessThan, .lessThanOrEqual:
                    guard !upper else { return nil }
                    upper = true
                }
            case let .inRange(.attribute(.root, _, slot), low, high, _):
                guard slot == rangeSlot, !lower, !upper, let low = Self.operand(low), let high = Self.operand(high) else { return nil }
                require(low, slot)
                require(high, slot)
                lower = true
                upper = true
            default:
                return nil
            }
        }
        // Each prefix part pinned once (a repeated equality could contradict itself).
        guard equalities == prefix.count else { return nil }
        if let rangeSlot, lower || upper {
            let attribute = entity.attributes[rangeSlot]
            guard !attribute.isOptional else { return nil }
            let kind = ColumnKind(attribute.type)
            if kind == .double || kind == .date, !upper { return nil }
        }
        return requirements
    }

    /// How an R-tree window ranks among ordered-index candidates (whose scores are
    /// 4 per equality, plus 2 for an IN-list or 1 for a range after them).
    static let spatialScore = 3

    /// The first R-tree index whose every attribute the terms bound (on one side at
    /// least), when those attributes are numbers and not optional.
    private func spatialIndex(_ terms: Terms) -> (index: Int, slots: [Int])? {
        entity.spatialIndexSlots.enumerated().first { _, slots in
            !slots.isEmpty && slots.allSatisfy { slot in
                let attribute = entity.attributes[slot]
                // (Not dates: `Date` defines `>=` and `<=` as negations of `<`, so a NaN
                // date passes both, and the tree cannot hold NaN.)
                return !attribute.isOptional && [.int, .uint, .double].contains(ColumnKind(attribute.type))
                    && (terms.lower[slot] != nil || terms.upper[slot] != nil)
            }
        }.map { ($0.offset, $0.element) }
    }

    /// When the predicate is exactly a closed window on the R-tree's attributes
    /// (`>=` and `<=` bounds or closed ranges, at most one lower and one upper bound
    /// per attribute, nothing else), what its values must be for the rows the tree
    /// yields to pass it untested: of the attributes' own kinds and never NaN. Only
    /// for `Double` attributes, whose values the tree holds exactly (an integer past
    /// 2⁵³ would be rounded); strict bounds are left to the predicate, as the tree's
    /// window is closed.
    private func exactWindow(_ slots: [Int], conjuncts: [QueryExpression]) -> [QueryPlan.Requirement]? {
        guard slots.allSatisfy({ ColumnKind(entity.attributes[$0].type) == .double }) else { return nil }
        var lower = Set<Int>(), upper = Set<Int>()
        var requirements: [QueryPlan.Requirement] = []
        for term in conjuncts {
            switch term {
            case let .compare(op, l, r):
                let side = pinned(l, r).map { ($0.0, $0.1, op) } ?? pinned(r, l).map { ($0.0, $0.1, op.flipped) }
                guard let (slot, operand, op) = side, slots.contains(slot) else { return nil }
                switch op {
                case .greaterThanOrEqual: guard lower.insert(slot).inserted else { return nil }
                case .lessThanOrEqual: guard upper.insert(slot).inserted else { return nil }
                case .greaterThan, .lessThan: return nil
                }
                requirements.append(.init(operand: operand, slot: slot, rejectsNaN: true))
            case let .inRange(.attribute(.root, _, slot), low, high, closed):
                guard closed, slots.contains(slot), let low = Self.operand(low), let high = Self.operand(high),
                      lower.insert(slot).inserted, upper.insert(slot).inserted
                else { return nil }
                requirements.append(.init(operand: low, slot: slot, rejectsNaN: true))
                requirements.append(.init(operand: high, slot: slot, rejectsNaN: true))
            default:
                return nil
            }
        }
        return requirements
    }

    private struct Candidate {
        var plan: IndexPlan
        var ranges: QueryPlan.Ranges
        var equalityPrefix: Int
        var score: Int
    }

    /// How index `i` could serve the terms, if at all.
    private func indexPlan(_ i: Int, slots: [Int], terms: Terms, assuming assumptions: inout [QueryPlan.Assumption]) -> Candidate? {
        var prefix: [QueryPlan.Operand] = []
        for slot in slots {
            guard let operand = terms.equal[slot] else { break }
            prefix.append(operand)
        }
        let k = prefix.count
        if k == slots.count {
            let bound = QueryPlan.Bound(parts: prefix, inclusive: true)
            return Candidate(plan: IndexPlan(index: i, slots: slots, ranges: [], lookup: .equality), ranges: .bounds(bound, bound), equalityPrefix: k, score: 4 * k)
        }
        let next = slots[k]
        if let list = terms.inList[next] {
            if case .parameter = list { assumptions.append(.array(list)) }
            return Candidate(plan: IndexPlan(index: i, slots: slots, ranges: [], lookup: .inList(0)), ranges: .inList(prefix: prefix, list: list), equalityPrefix: k, score: 4 * k + 2)
        }
        if terms.lower[next] != nil || terms.upper[next] != nil {
            let whole = k > 0 ? QueryPlan.Bound(parts: prefix, inclusive: true) : nil
            let lower = terms.lower[next].map { QueryPlan.Bound(parts: prefix + $0.parts, inclusive: $0.inclusive) } ?? whole
            let upper = terms.upper[next].map { QueryPlan.Bound(parts: prefix + $0.parts, inclusive: $0.inclusive) } ?? whole
            return Candidate(plan: IndexPlan(index: i, slots: slots, ranges: [], lookup: .range), ranges: .bounds(lower, upper), equalityPrefix: k, score: 4 * k + 1)
        }
        guard k > 0 else { return nil }
        let bound = QueryPlan.Bound(parts: prefix, inclusive: true)
        return Candidate(plan: IndexPlan(index: i, slots: slots, ranges: [], lookup: .equality), ranges: .bounds(bound, bound), equalityPrefix: k, score: 4 * k)
    }

    /// Marks the plan as giving the sort order when the index's key parts after the
    /// equality prefix are the sort's keys, from its first, in one direction, over a
    /// single range (an IN-list's count is known only when bound, so it never gives
    /// order): all of them, or the first ones (`orderIsPartial`).
    private func applyOrder(to candidate: inout Candidate, prefix: Int) {
        guard let order = sortKeys, let first = order.first, case .bounds = candidate.ranges else { return }
        let slots = candidate.plan.slots
        var carried = 0
        while carried < order.count, prefix + carried < slots.count, slots[prefix + carried] == order[carried].slot,
              order[carried].reverse == first.reverse {
            carried += 1
        }
        guard carried > 0 else { return }
        candidate.plan.providesOrder = true
        candidate.plan.orderIsPartial = carried < order.count
        candidate.plan.reverse = first.reverse
        candidate.plan.orderSlotsRange = prefix..<(prefix + carried)
    }

    /// With a limit: an index other than `chosen` whose first part is the sort's first
    /// key, walked in that order within the predicate's bounds on it: the plan when
    /// no index narrows the rows, else the alternative to one that does. A plan that
    /// does not give the order reads every row of its ranges to rank them; when
    /// those are many, the walk stops after about the window's share of the rows
    /// (`StoredRowQuery.chosenAccess(indexOrder:window:)` counts and chooses, per run).
    private func orderedWalk(_ terms: Terms, besides chosen: Int?) -> (IndexPlan, QueryPlan.Ranges)? {
        guard limited, let first = sortKeys?.first, terms.equal[first.slot] == nil, terms.inList[first.slot] == nil
        else { return nil }
        for (i, slots) in indexes.enumerated() where i != chosen && slots.first == first.slot {
            let lower = terms.lower[first.slot], upper = terms.upper[first.slot]
            var candidate = Candidate(
                plan: IndexPlan(index: i, slots: slots, ranges: [], lookup: lower == nil && upper == nil ? .ordered : .range),
                ranges: .bounds(lower, upper), equalityPrefix: 0, score: 0)
            applyOrder(to: &candidate, prefix: 0)
            if candidate.plan.providesOrder { return (candidate.plan, candidate.ranges) }
        }
        return nil
    }

    private func collect(_ term: QueryExpression, into terms: inout Terms, assuming assumptions: inout [QueryPlan.Assumption]) {
        switch term {
        case .equal(.root, let other), .equal(let other, .root):
            if let operand = Self.operand(other) { terms.rows = operand }
        case let .contains(list, .root):
            if let operand = Self.operand(list) { terms.rows = operand }
        case let .equal(l, r):
            if let (slot, operand) = pinned(l, r) ?? pinned(r, l) {
                terms.equal[slot] = operand
                // A negation that cannot be taken (Int.min) reads as nil: plan again.
                if case .negatedParameter = operand { assumptions.append(.notNull(operand)) }
            }
        case let .compare(op, l, r):
            // A bound on nil bounds nothing; a parameter is taken as a value and
            // checked when bound.
            if let (slot, operand) = pinned(l, r), !operand.isNull {
                bound(slot, op, operand, &terms, &assumptions)
            } else if let (slot, operand) = pinned(r, l), !operand.isNull {
                bound(slot, op.flipped, operand, &terms, &assumptions)
            }
        case let .inRange(.attribute(.root, _, slot), low, high, closed):
            guard let low = Self.operand(low), let high = Self.operand(high) else { return }
            terms.lower[slot] = QueryPlan.Bound(parts: [low], inclusive: true)
            terms.upper[slot] = QueryPlan.Bound(parts: [high], inclusive: closed)
        case let .contains(list, .attribute(.root, _, slot)):
            switch list {
            case .constant(.array): terms.inList[slot] = Self.operand(list)
            case .parameter: terms.inList[slot] = Self.operand(list)
            default: break
            }
        default:
            break
        }
    }

    /// A constant or parameter, or the negation of one (`$0.x > -9.2`: `#Predicate`
    /// writes a negative literal as a unary minus on a positive one).
    private static func operand(_ expression: QueryExpression) -> QueryPlan.Operand? {
        switch expression {
        case let .constant(value): .value(value)
        case let .parameter(i): .parameter(i)
        case let .negate(.constant(value)): QueryPlan.Operand.negated(value).map { .value($0) }
        case let .negate(.parameter(i)): .negatedParameter(i)
        default: nil
        }
    }

    private func pinned(_ attribute: QueryExpression, _ constant: QueryExpression) -> (Int, QueryPlan.Operand)? {
        guard case let .attribute(.root, _, slot) = attribute, let operand = Self.operand(constant) else { return nil }
        return (slot, operand)
    }

    private func bound(
        _ slot: Int, _ op: QueryExpression.ComparisonOperator, _ operand: QueryPlan.Operand,
        _ terms: inout Terms, _ assumptions: inout [QueryPlan.Assumption]
    ) {
        if operand.isParameter { assumptions.append(.notNull(operand)) }
        switch op {
        case .greaterThan: terms.lower[slot] = QueryPlan.Bound(parts: [operand], inclusive: false)
        case .greaterThanOrEqual: terms.lower[slot] = QueryPlan.Bound(parts: [operand], inclusive: true)
        case .lessThan: terms.upper[slot] = QueryPlan.Bound(parts: [operand], inclusive: false)
        case .lessThanOrEqual: terms.upper[slot] = QueryPlan.Bound(parts: [operand], inclusive: true)
        }
    }
}

extension QueryExpression {
    /// The terms of a top-level conjunction (the expression itself when it is none).
    public var conjuncts: [QueryExpression] {
        if case let .and(l, r) = self { return l.conjuncts + r.conjuncts }
        return [self]
    }
}

extension QueryExpression.ComparisonOperator {
    /// The operator with its operands swapped: `c < x` is `x > c`.
    public var flipped: Self {
        switch self {
        case .lessThan: .greaterThan
        case .lessThanOrEqual: .greaterThanOrEqual
        case .greaterThan: .lessThan
        case .greaterThanOrEqual: .lessThanOrEqual
        }
    }
}
