/// A predicate bound to one run's values: the template a plan was made for, its
/// parameters, and the expression with them substituted, made only when some
/// row must be tested (an exact plan tests none).
public final class BoundPredicate {
    public let template: QueryExpression
    public let parameters: [Value]

    public init(template: QueryExpression, parameters: [Value]) {
        self.template = template
        self.parameters = parameters
    }

    public private(set) lazy var expression: QueryExpression =
        parameters.isEmpty ? template : template.substitutingParameters { [parameters] in .constant(parameters[$0]) }
}

/// How a stored row is tested.
public enum RowFilter {
    /// Every row passes.
    case all
    /// A compiled predicate. `overlay` gives the rows of unsaved changes when the
    /// predicate follows relationships (nil: read the version alone).
    case predicate(BoundPredicate, overlay: (() -> [EntityRow: Row?])?)
    /// A test the engine cannot run itself (the API's fallback on model objects).
    case custom((RowID) throws -> Bool)
}

/// One query's stored-row part, planned and run against one published version:
/// the execution path of the API's fetches and the CLI's `query` (but an API fetch
/// that only looks one unique key up, `ModelContext.keyMatch`, which reads the index
/// with the same plan).
///
/// It walks the plan's access (a unique lookup, index ranges, or a scan through
/// the column kernels or row tests), leaves out `excluded` rows, and hands each
/// match to the caller; the caller sorts and windows them with `RowOrder` and
/// `QueryWindow` (with its unsaved models, in a context).
public struct StoredRowQuery {
    public let version: StoreVersion
    public let entity: Int
    public let access: QueryAccess
    public let filter: RowFilter
    /// Rows that never pass as stored (in a context: deleted or changed models);
    /// nil when there are none, so no row needs checking.
    public let excluded: ((RowID) -> Bool)?
    /// The error to throw when the interpreter fails on a row (nil: its own), so a
    /// caller can name the row.
    public let rowFailure: ((RowID, any Error) -> any Error)?

    public init(
        version: StoreVersion, entity: Int, access: QueryAccess, filter: RowFilter, excluded: ((RowID) -> Bool)?,
        rowFailure: ((RowID, any Error) -> any Error)? = nil
    ) {
        self.version = version
        self.entity = entity
        self.access = access
        self.filter = filter
        self.excluded = excluded
        self.rowFailure = rowFailure
    }

    /// Whether the plan's access answers the predicate alone, so no row is tested.
    public var isExact: Bool { access.isExact }

    /// Calls `body` with each stored row that passes, in row order; or in the
    /// sort's order when the index gives it and `indexOrder` allows (then under a
    /// `window` the rows stop after the window's last and the rows tied with it; an
    /// index that gives the order of the sort's first keys only stops there too, and
    /// hands its rows over in row order for the caller to sort); or in no particular
    /// order when not `inOrder`. With `indexOrder` and a `window`, an index plan may
    /// give way to its ordered walk (`chosenAccess(indexOrder:window:)`). `body` gets the row's values
    /// when the test read them whole. An access that knows how many rows it yields
    /// at most before yielding them (a unique key, a list of rows, a spatial window's
    /// hits) tells `expecting` first, so the caller sizes what it fills once.
    /// - Returns: how many rows were tested, and whether they came in sort order.
    /// - Complexity: O(log n + k) for an index access reading k entries; O(n) for a scan.
    public func forEachMatch(
        inOrder: Bool = true, indexOrder: Bool = false, window: Int? = nil,
        expecting: (Int) -> Void = { _ in },
        _ body: (RowID, Row?) throws -> Void
    ) throws -> (tested: Int, inSortOrder: Bool) {
        let table = version.tables[entity]
        var tested = 0
        switch access {
        case let .unique(constraint, key, exact):
            if let id = version.lookup(unique: key, constraint: constraint, of: entity), table.contains(id) {
                tested = 1
                expecting(1)
                if exact {
                    // The key is the whole predicate: no filter to build or run, and the
                    // row is not read.
                    if excluded?(id) != true { try body(id, nil) }
                } else if let row = try rowFilter()(id) {
                    try body(id, row)
                }
            }
            return (tested, false)
        case let .rows(ids, exact):
            expecting(ids.count)
            let passes = exact ? excludedOnly() : rowFilter()
            for id in ids where table.contains(id) {
                tested += 1
                if let row = try passes(id) { try body(id, row) }
            }
            return (tested, false)
        case let .spatial(plan):
            // Sized for a typical window: grown by doubling from empty, the buffer cost
            // about as much as the search itself. Under 1 KiB with its header: a larger
            // block makes glibc consolidate the small blocks the previous query's models
            // freed (about 30,000 instructions), after which every allocation takes the
            // slow path (W5).
            var ids: [RowID] = []
            ids.reserveCapacity(120)
            version.spatialIndexes[entity][plan.index].tree(over: table).search(lower: plan.lower, upper: plan.upper) {
                ids.append($0)
                return true
            }
            if inOrder { ids.sort() }
            expecting(ids.count)
            // An exact window is the whole predicate: only excluded rows fail.
            let passes = plan.exact ? excludedOnly() : rowFilter()
            for id in ids {
                tested += 1
                if let row = try passes(id) { try body(id, row) }
            }
            return (tested, false)
        case .scan:
            if let columns = columnFilter {
                let excluded = excluded
                try table.forEachMatch(columns) { id in
                    if excluded?(id) != true { try body(id, nil) }
                }
            } else {
                let passes = rowFilter()
                for id in table.rowIDs {
                    if let row = try passes(id) { try body(id, row) }
                }
            }
            return (table.count, false)
        case let .index(planned):
            guard planned.alternative != nil else {
                return try forEachIndexMatch(planned, inOrder: inOrder, indexOrder: indexOrder, window: window, body)!
            }
            let plan = chosen(planned, indexOrder: indexOrder, window: window)
            if let walk = try forEachIndexMatch(plan, inOrder: inOrder, indexOrder: indexOrder, window: window, body) {
                return walk
            }
            // The walk tested more rows than the plan it replaced reads: that plan runs after all.
            let fallback = try forEachIndexMatch(plan.alternative!.plan, inOrder: inOrder, indexOrder: indexOrder, window: window, body)!
            return (fallback.tested + plan.walkBudget!, fallback.inSortOrder)
        }
    }

    /// The access a run reads: the plan's, but for an index plan with an ordered walk
    /// as its `alternative` in a run with a window and the index's order allowed.
    /// That plan reads every row of its ranges and ranks them; the walk reads rows in
    /// the sort's order and stops once the window is full, after about
    /// window × rows ÷ matches of them when the matches are spread evenly over the
    /// order. So the ranges are counted (a leaf at a time) and the walk is chosen when
    /// they hold more than √(window × rows) entries, where the two costs meet. The
    /// walk may test as many rows as the ranges hold; past that (matches bunched at
    /// the far end of the order) the plan runs after all, so a bad guess costs at
    /// most twice the plan's reads.
    /// - Complexity: O(log n + k / b) to count k entries, b a leaf's.
    public func chosenAccess(indexOrder: Bool, window: Int?) -> QueryAccess {
        guard case let .index(plan) = access else { return access }
        return .index(chosen(plan, indexOrder: indexOrder, window: window))
    }

    private func chosen(_ plan: IndexPlan, indexOrder: Bool, window: Int?) -> IndexPlan {
        guard let walk = plan.alternative, plan.walkBudget == nil else { return plan }
        var plan = plan
        plan.alternative = nil
        guard indexOrder, let window, window > 0 else { return plan }
        let rows = version.tables[entity].count
        let threshold = max(Int((Double(window) * Double(rows)).squareRoot()), window)
        // Counted no further than the walk's budget could use.
        let cap = threshold.multipliedReportingOverflow(by: 16).overflow ? Int.max : threshold * 16
        let index = version.orderedIndexes[entity][plan.index]
        var inRanges = 0
        for range in plan.ranges where inRanges < cap {
            inRanges += index.count(from: range.lower, to: range.upper, cap: cap - inRanges)
        }
        guard inRanges > threshold else { return plan }
        var chosen = walk.plan
        chosen.alternative = AlternativePlan(plan)
        chosen.walkBudget = inRanges
        return chosen
    }

    /// `forEachMatch` over index plan `plan`; nil when the plan is a walk that tested
    /// its budget of rows before its window was full (nothing was handed to `body`).
    @inline(__always)
    private func forEachIndexMatch(
        _ plan: IndexPlan, inOrder: Bool, indexOrder: Bool, window: Int?, _ body: (RowID, Row?) throws -> Void
    ) throws -> (tested: Int, inSortOrder: Bool)? {
        let ordered = plan.providesOrder && indexOrder
        let inSortOrder = ordered && !plan.orderIsPartial
        let needed = ordered ? window : nil
        let budget = plan.walkBudget
        // Rows go straight to `body` unless they must be put in order first, or the
        // walk may yet give up.
        let reorders = budget != nil || (inSortOrder ? plan.reverse : inOrder)
        var boundary: IndexKey?
        var matched = 0
        var tested = 0
        var overBudget = false
        var held: [(id: RowID, row: Row?)] = []
        let index = version.orderedIndexes[entity][plan.index]
        // An exact range is the whole predicate: only excluded rows fail.
        let passes = plan.exact ? excludedOnly() : rowFilter()
        // (Read out of the plan here: the closure capturing the plan copied it on
        // every entry, about 150 instructions each.)
        let orderSlots = plan.orderSlotsRange
        for range in plan.ranges {
            var stop = false
            try index.scan(from: range.lower, to: range.upper, reverse: plan.reverse) { entry in
                if let boundary, !entry.key.partsEqual(boundary, in: orderSlots) {
                    stop = true
                    return false
                }
                tested += 1
                if let budget, tested > budget, boundary == nil {
                    overBudget = true
                    stop = true
                    return false
                }
                guard let row = try passes(entry.row) else { return true }
                if reorders { held.append((entry.row, row)) } else { try body(entry.row, row) }
                matched += 1
                if boundary == nil, let needed, matched >= needed {
                    boundary = entry.key
                }
                return true
            }
            if stop { break }
        }
        if overBudget { return nil }
        if reorders {
            // Index order is the sort order; ties are in row order going forward and
            // in reverse row order going backward, where a stable sort wants row order.
            // Rows the caller still sorts go in row order.
            if inSortOrder {
                if plan.reverse { reverseTies(&held, keys: plan.orderSlotsRange.map { plan.slots[$0] }) }
            } else {
                held.sort { $0.id < $1.id }
            }
            for match in held { try body(match.id, match.row) }
        }
        return (tested, inSortOrder)
    }

    /// Calls `body` with each stored row that passes, nearest to `center` first
    /// by `metric` over R-tree index `index`'s points, with its distance, until
    /// `body` returns false or the rows are farther than `radius`. `body` gets the
    /// row's values when the test read them whole. The plan's access is not used.
    /// - Complexity: about O((log n + k) log n) for k rows reached, plus the tree's
    ///   build on first use.
    public func forEachNearest(
        index: Int, metric: SpatialMetric, center: [Double], within radius: Double? = nil,
        _ body: (RowID, Double, Row?) throws -> Bool
    ) throws {
        let tree = version.spatialIndexes[entity][index].tree(over: version.tables[entity])
        let passes = rowFilter()
        try tree.forEachNearest(
            distance: { metric.distance(from: center, to: $0) },
            lowerBound: { metric.lowerBound(from: center, to: $0) }
        ) { id, distance in
            if let radius, !(distance <= radius) { return false }
            guard let row = try passes(id) else { return true }
            return try body(id, distance, row)
        }
    }

    /// The stored rows that pass, collected as `forEachMatch` walks them: for a
    /// caller that sorts (`RowOrder`) or windows them afterwards.
    /// - Complexity: as `forEachMatch`.
    public func matches(indexOrder: Bool, window: Int?) throws -> (rows: [(id: RowID, row: Row?)], inSortOrder: Bool) {
        var rows: [(id: RowID, row: Row?)] = []
        let walk = try forEachMatch(indexOrder: indexOrder, window: window) { id, row in rows.append((id, row)) }
        return (rows, walk.inSortOrder)
    }

    /// The first `limit` matches in row order: a scan stops there.
    /// - Complexity: O(k) rows read until `limit` pass for a scan; as `forEachMatch` otherwise.
    public func firstMatches(_ limit: Int) throws -> [(id: RowID, row: Row?)] {
        var results: [(id: RowID, row: Row?)] = []
        guard limit > 0 else { return results }
        do {
            _ = try forEachMatch { id, row in
                results.append((id, row))
                if results.count >= limit { throw EnoughRows() }
            }
        } catch is EnoughRows {}
        return results
    }

    /// Ends a walk that has every row it needs.
    private struct EnoughRows: Error {}

    /// How many stored rows pass; a scan with no excluded rows counts through the
    /// column kernels without visiting rows.
    /// - Complexity: O(n) for a scan, O(log n + k) for an index access.
    public func count() throws -> Int {
        if case .scan = access, excluded == nil, let columns = columnFilter {
            return version.tables[entity].countMatches(columns)
        }
        var count = 0
        _ = try forEachMatch(inOrder: false) { _, _ in count += 1 }
        return count
    }

    /// Points in the plan's window, counted up to a cap (an estimate for `explain`).
    /// - Complexity: O(log n + min(k, cap)); builds the tree if no query has.
    public func estimate(_ plan: SpatialPlan, cap: Int = 100_000) -> Int {
        var count = 0
        version.spatialIndexes[entity][plan.index].tree(over: version.tables[entity]).search(lower: plan.lower, upper: plan.upper) { _ in
            count += 1
            return count < cap
        }
        return count
    }

    /// Entries in the plan's ranges, counted up to a cap (an estimate for `explain`).
    /// - Complexity: O(log n + min(k, cap)).
    public func estimate(_ plan: IndexPlan, cap: Int = 100_000) -> Int {
        var count = 0
        let index = version.orderedIndexes[entity][plan.index]
        for range in plan.ranges where count < cap {
            index.scan(from: range.lower, to: range.upper) { _ in
                count += 1
                return count < cap
            }
        }
        return count
    }

    /// Holds the interpreter's per-row state for a filter closure.
    private final class EvaluatorBox {
        var evaluator: RowEvaluator
        init(_ evaluator: RowEvaluator) { self.evaluator = evaluator }
    }

    /// The test a stored row goes through, built once per walk: nil when the row
    /// fails; when it passes, `.some(row)` if the test read the whole row (the
    /// interpreter does), `.some(nil)` if it read some columns (`RowTest`) or none.
    /// Excluded rows never pass.
    private func rowFilter() -> (RowID) throws -> Row?? {
        let table = version.tables[entity]
        let test: (RowID) throws -> Row??
        switch filter {
        case .all:
            test = { _ in .some(nil) }
        case let .predicate(predicate, overlay):
            let expression = predicate.expression
            // (Even for the one row of a unique-key lookup: reading one column and
            // running closures measured cheaper than reading the row for the interpreter.)
            if let rowTest = RowTest(expression) {
                let slots = rowTest.slots
                test = { id in
                    guard let row = table.row(id, reading: slots) else { return nil }
                    return rowTest(row) ? .some(nil) : nil
                }
                break
            }
            var evaluator = RowEvaluator(version: version)
            if let overlay, expression.traversesRelationships { evaluator.overlay = overlay() }
            let box = EvaluatorBox(evaluator)
            let failure = rowFailure
            test = { id in
                guard let row = table[id] else { return nil }
                do {
                    return try box.evaluator.test(expression, row: row, id: id) ? .some(row) : nil
                } catch {
                    throw failure?(id, error) ?? error
                }
            }
        case let .custom(passes):
            test = { id in try passes(id) ? .some(nil) : nil }
        }
        guard let excluded else { return test }
        return { id in try excluded(id) ? nil : test(id) }
    }

    /// The test of an exact access, which is the whole predicate: only excluded rows
    /// fail, and no row is read.
    private func excludedOnly() -> (RowID) throws -> Row?? {
        let excluded = excluded
        return { excluded?($0) == true ? nil : .some(nil) }
    }

    /// The scan's column kernels, when the predicate compiles to them (`ColumnFilter`).
    private var columnFilter: ColumnFilter? {
        let kinds = version.tables[entity].kinds
        switch filter {
        case .all: return ColumnFilter(.constant(.bool(true)), kinds: kinds)
        case let .predicate(predicate, _): return ColumnFilter(predicate.expression, kinds: kinds)
        case .custom: return nil
        }
    }

    /// Reverses each run of rows whose `keys` slots tie in index order
    /// (`Value.indexCompare`: a NaN ties a NaN).
    private func reverseTies(_ rows: inout [(id: RowID, row: Row?)], keys: [Int]) {
        let table = version.tables[entity]
        func key(_ i: Int) -> [Value] { keys.map { rows[i].row?[$0] ?? table.value(rows[i].id, slot: $0) ?? .null } }
        func ties(_ a: [Value], _ b: [Value]) -> Bool { zip(a, b).allSatisfy { Value.indexCompare($0, $1) == 0 } }
        var start = 0
        while start < rows.count {
            var end = start + 1
            let first = key(start)
            while end < rows.count, ties(key(end), first) { end += 1 }
            if end - start > 1 { rows[start..<end].reverse() }
            start = end
        }
    }
}
