import Foundation
import OpenSwiftDataStore

/// Chooses how a fetch finds its candidate rows.
///
/// From the terms of the predicate's top-level conjunction that pin a stored
/// attribute of the fetched model to constants (`==`, `<`…, ranges, and
/// `constants.contains($0.x)` IN-lists), it picks, in order of preference: a unique
/// key lookup; the ordered index with the longest equality prefix (then an IN-list,
/// then a range on the next key part); with `fetchLimit` and no such index, an index
/// whose order serves `sortBy`; else a scan. Every candidate still passes the whole
/// predicate, so a plan narrows the rows and never changes the answer.
///
/// It is not generic in the model type, so planning looks up no generic metadata
/// (the fetch path runs unspecialized from user modules); the sort arrives as slots.
struct QueryPlanner {
    let filter: FetchFilter
    let layout: EntityLayout
    /// How the entity's table stores each slot.
    let kinds: [ColumnKind]
    /// The attribute slots of each ordered index of the entity.
    let indexes: [[Int]]
    /// The sort as (attribute slot, reverse) pairs, nil when there is none or a key
    /// is not a stored attribute (`sortKeys(of:in:)`).
    let sortKeys: [(slot: Int, reverse: Bool)]?
    let limited: Bool

    private struct Terms {
        var equal: [Int: Value] = [:]
        var lower: [Int: IndexBound] = [:]
        var upper: [Int: IndexBound] = [:]
        var inList: [Int: [Value]] = [:]
    }

    func plan() -> FetchAccess {
        var terms = Terms()
        var conjuncts: [QueryExpression] = []
        if case let .native(expression) = filter {
            conjuncts = expression.conjuncts
            for term in conjuncts { collect(term, into: &terms) }
        }
        for (c, slots) in layout.uniqueness.enumerated() {
            let key = slots.compactMap { terms.equal[$0] }
            if key.count == slots.count, !key.contains(where: \.isNull) {
                return .unique(constraint: c, key: key, exact: isExactKey(slots, conjuncts: conjuncts))
            }
        }
        let order = sortKeys
        var best: (score: Int, plan: FetchIndexPlan)?
        for (i, slots) in indexes.enumerated() {
            guard var candidate = indexPlan(i, slots: slots, terms: terms) else { continue }
            applyOrder(order, to: &candidate, prefix: candidate.equalityPrefix)
            if best == nil || candidate.score > best!.score { best = (candidate.score, candidate.plan) }
        }
        if var plan = best?.plan {
            plan.exact = isExactRange(plan, conjuncts: conjuncts)
            return .index(plan)
        }
        if limited, let order {
            for (i, slots) in indexes.enumerated() {
                var candidate = Candidate(plan: .init(index: i, slots: slots, ranges: [(nil, nil)], lookup: .ordered), equalityPrefix: 0, score: 0)
                applyOrder(order, to: &candidate, prefix: 0)
                if candidate.plan.providesOrder { return .index(candidate.plan) }
            }
        }
        return .scan
    }

    /// Whether the predicate is exactly `slots`' equalities (`$0.a == x && $0.b == y`,
    /// each slot once, nothing else) with constants of the kinds the attributes store
    /// (Bool, integers, Double, Date, String): then the row a unique lookup finds is
    /// the answer, as the index's equality and `==` agree on those kinds (NaN equal to
    /// nothing, -0.0 to 0.0, strings by canonical equivalence).
    private func isExactKey(_ slots: [Int], conjuncts: [QueryExpression]) -> Bool {
        guard conjuncts.count == slots.count, slots.count <= 64 else { return false }
        // Which of the key's slots a term pinned, one bit per position in `slots`.
        var covered: UInt64 = 0
        for term in conjuncts {
            guard case let .equal(l, r) = term, let (slot, value) = pinned(l, r) ?? pinned(r, l),
                  let position = slots.firstIndex(of: slot), covered & (1 << UInt64(position)) == 0,
                  let kind = Self.typedKind(of: value), kind == kinds[slot]
            else { return false }
            covered |= 1 << UInt64(position)
        }
        return true
    }

    /// Whether the predicate is exactly what `plan`'s one range selects, so the rows
    /// the index yields pass it and are not tested again: equalities on each part of
    /// its equality prefix and at most one lower and one upper bound on the next part,
    /// each once, nothing else; constants of the attributes' own typed kinds, never
    /// NaN; the bounded attribute not optional (the index orders nil below every
    /// value); and a `Double` or `Date` bounded from above (the index orders NaN above
    /// +infinity, where every comparison is false).
    private func isExactRange(_ plan: FetchIndexPlan, conjuncts: [QueryExpression]) -> Bool {
        guard plan.ranges.count == 1, plan.lookup == .range || plan.lookup == .equality else { return false }
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
        func fits(_ slot: Int, _ value: Value) -> Bool {
            guard let kind = Self.typedKind(of: value), kind == kinds[slot] else { return false }
            switch value {
            case let .double(v): return !v.isNaN
            case let .date(d): return !d.timeIntervalSinceReferenceDate.isNaN
            default: return true
            }
        }
        for term in conjuncts {
            switch term {
            case let .equal(l, r):
                guard let (slot, value) = pinned(l, r) ?? pinned(r, l), prefix.contains(slot), fits(slot, value) else {
                    return false
                }
                equalities += 1
            case let .compare(op, l, r):
                let side = pinned(l, r).map { ($0.0, $0.1, op) } ?? pinned(r, l).map { ($0.0, $0.1, op.flipped) }
                guard let (slot, value, op) = side, slot == rangeSlot, fits(slot, value) else { return false }
                switch op {
                case .greaterThan, .greaterThanOrEqual:
                    guard !lower else { return false }
                    lower = true
                case .lessThan, .lessThanOrEqual:
                    guard !upper else { return false }
                    upper = true
                }
            case let .inRange(.attribute(.root, _, slot), .constant(low), .constant(high), _):
                guard slot == rangeSlot, !lower, !upper, fits(slot, low), fits(slot, high) else { return false }
                lower = true
                upper = true
            default:
                return false
            }
        }
        // Each prefix part pinned once (a repeated equality could contradict itself).
        guard equalities == prefix.count else { return false }
        if let rangeSlot, lower || upper {
            guard !layout.attributes[rangeSlot].isOptional else { return false }
            if kinds[rangeSlot] == .double || kinds[rangeSlot] == .date, !upper { return false }
        }
        return true
    }

    /// The column kind a value of a typed kind is stored as; nil for other values.
    private static func typedKind(of value: Value) -> ColumnKind? {
        switch value {
        case .bool: .bool
        case .int: .int
        case .uint: .uint
        case .double: .double
        case .date: .date
        case .string: .string
        default: nil
        }
    }

    private struct Candidate {
        var plan: FetchIndexPlan
        var equalityPrefix: Int
        var score: Int
    }

    /// How index `i` could serve the terms, if at all.
    private func indexPlan(_ i: Int, slots: [Int], terms: Terms) -> Candidate? {
        var prefix: [Value] = []
        for slot in slots {
            guard let value = terms.equal[slot] else { break }
            prefix.append(value)
        }
        let k = prefix.count
        if k == slots.count {
            let bound = IndexBound(prefix, inclusive: true)
            return Candidate(plan: .init(index: i, slots: slots, ranges: [(bound, bound)], lookup: .equality), equalityPrefix: k, score: 4 * k)
        }
        let next = slots[k]
        if let values = terms.inList[next] {
            var distinct: [Value] = []
            for value in values.sorted() where distinct.last != value { distinct.append(value) }
            let ranges = distinct.map { value -> (IndexBound?, IndexBound?) in
                let bound = IndexBound(prefix + [value], inclusive: true)
                return (bound, bound)
            }
            return Candidate(plan: .init(index: i, slots: slots, ranges: ranges, lookup: .inList(distinct.count)), equalityPrefix: k, score: 4 * k + 2)
        }
        if terms.lower[next] != nil || terms.upper[next] != nil {
            let lower = terms.lower[next].map { IndexBound(prefix + $0.prefix, inclusive: $0.inclusive) }
                ?? (k > 0 ? IndexBound(prefix, inclusive: true) : nil)
            let upper = terms.upper[next].map { IndexBound(prefix + $0.prefix, inclusive: $0.inclusive) }
                ?? (k > 0 ? IndexBound(prefix, inclusive: true) : nil)
            return Candidate(plan: .init(index: i, slots: slots, ranges: [(lower, upper)], lookup: .range), equalityPrefix: k, score: 4 * k + 1)
        }
        guard k > 0 else { return nil }
        let bound = IndexBound(prefix, inclusive: true)
        return Candidate(plan: .init(index: i, slots: slots, ranges: [(bound, bound)], lookup: .equality), equalityPrefix: k, score: 4 * k)
    }

    /// The sort as (attribute slot, reverse) pairs, when every key is a stored attribute.
    static func sortKeys<T>(of sortBy: [SortDescriptor<T>], in layout: EntityLayout) -> [(slot: Int, reverse: Bool)]? {
        guard !sortBy.isEmpty else { return nil }
        var keys: [(slot: Int, reverse: Bool)] = []
        for sort in sortBy {
            guard let keyPath = sort.keyPath, case let .attribute(slot)? = layout.slots[keyPath] else { return nil }
            keys.append((slot, sort.order == .reverse))
        }
        return keys
    }

    /// Marks the plan as giving `order` when the index's key parts after the equality
    /// prefix are exactly the sort keys, all in one direction, over a single range.
    private func applyOrder(_ order: [(slot: Int, reverse: Bool)]?, to candidate: inout Candidate, prefix: Int) {
        guard let order, candidate.plan.ranges.count == 1 else { return }
        let slots = candidate.plan.slots
        guard prefix + order.count <= slots.count,
              Array(slots[prefix..<(prefix + order.count)]) == order.map(\.slot),
              Set(order.map(\.reverse)).count == 1
        else { return }
        candidate.plan.providesOrder = true
        candidate.plan.reverse = order[0].reverse
        candidate.plan.orderSlotsRange = prefix..<(prefix + order.count)
    }

    private func collect(_ term: QueryExpression, into terms: inout Terms) {
        switch term {
        case let .equal(l, r):
            if let (slot, value) = pinned(l, r) ?? pinned(r, l) { terms.equal[slot] = value }
        case let .compare(op, l, r):
            if let (slot, value) = pinned(l, r), !value.isNull {
                bound(slot, op, value, &terms)
            } else if let (slot, value) = pinned(r, l), !value.isNull {
                bound(slot, op.flipped, value, &terms)
            }
        case let .inRange(.attribute(.root, _, slot), .constant(lower), .constant(upper), closed):
            terms.lower[slot] = IndexBound([lower], inclusive: true)
            terms.upper[slot] = IndexBound([upper], inclusive: closed)
        case let .contains(.constant(.array(values)), .attribute(.root, _, slot)):
            terms.inList[slot] = values
        default:
            break
        }
    }

    private func pinned(_ attribute: QueryExpression, _ constant: QueryExpression) -> (Int, Value)? {
        guard case let .attribute(.root, _, slot) = attribute, case let .constant(value) = constant else { return nil }
        return (slot, value)
    }

    private func bound(_ slot: Int, _ op: QueryExpression.ComparisonOperator, _ value: Value, _ terms: inout Terms) {
        switch op {
        case .greaterThan: terms.lower[slot] = IndexBound([value], inclusive: false)
        case .greaterThanOrEqual: terms.lower[slot] = IndexBound([value], inclusive: true)
        case .lessThan: terms.upper[slot] = IndexBound([value], inclusive: false)
        case .lessThanOrEqual: terms.upper[slot] = IndexBound([value], inclusive: true)
        }
    }
}

extension QueryExpression.ComparisonOperator {
    /// The operator with its operands swapped: `c < x` is `x > c`.
    var flipped: Self {
        switch self {
        case .lessThan: .greaterThan
        case .lessThanOrEqual: .greaterThanOrEqual
        case .greaterThan: .lessThan
        case .greaterThanOrEqual: .lessThanOrEqual
        }
    }
}
