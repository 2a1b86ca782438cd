import Foundation
import OpenSwiftDataStore

/// One fetch, planned and run against one published store version.
///
/// The predicate is compiled to the engine's form and tested on stored rows; only
/// the rows of the final page become model objects. Models with unsaved changes
/// (and unsaved inserts) are tested on their current values with
/// `Predicate.evaluate`, so pending changes take part. A predicate the compiler
/// cannot translate falls back to materializing each row and evaluating it.
struct FetchQuery<T: PersistentModel> {
    // The parts that do not depend on the model type live outside it: the fetch path
    // runs unspecialized from user modules, where a type nested in a generic one costs
    // a generic-metadata lookup at every use.
    typealias Candidate = FetchCandidate
    typealias Filter = FetchFilter
    typealias Access = FetchAccess
    typealias IndexPlan = FetchIndexPlan

    let descriptor: FetchDescriptor<T>
    let context: ModelContext
    let entity: Int
    let layout: EntityLayout
    let version: StoreVersion
    let filter: Filter
    let access: Access

    init(_ descriptor: FetchDescriptor<T>, context: ModelContext) throws {
        self.descriptor = descriptor
        self.context = context
        entity = try context.container.entityIndex(of: T.self)
        layout = context.container.layout(at: entity)
        version = context.container.store.current
        if let predicate = descriptor.predicate {
            do {
                filter = .native(try PredicateCompiler.compile(predicate, in: context.container))
            } catch let unsupported as PredicateCompiler.Unsupported {
                filter = .fallback(reason: unsupported.description)
            }
        } else {
            filter = .all
        }
        access = QueryPlanner(
            filter: filter, layout: layout, kinds: version.tables[entity].kinds,
            indexes: version.orderedIndexes[entity].map { $0.slots },
            sortKeys: QueryPlanner.sortKeys(of: descriptor.sortBy, in: layout), limited: (descriptor.fetchLimit ?? 0) > 0
        ).plan()
    }

    // MARK: Filtering

    /// Every row and pending model that passes the filter, sorted; or, for a scan
    /// with a limit, no sort and no unsaved models, only the rows up to the end of
    /// its window: stored rows come in row order then, so the scan stops there.
    func candidates() throws -> [Candidate] {
        let changed = changedModels, pending = pendingModels
        // (Scans only: a unique or index access reads few rows, and stopping costs a throw.)
        if case .scan = access, descriptor.sortBy.isEmpty, let limit = descriptor.fetchLimit, limit > 0,
           changed.isEmpty, pending.isEmpty {
            let needed = Self.windowEnd(limit: limit, offset: descriptor.fetchOffset)
            var results: [Candidate] = []
            do {
                _ = try forEachStoredMatch { id, row in
                    results.append(Candidate(rowID: id, values: row, model: nil))
                    if results.count >= needed { throw EnoughRows() }
                }
            } catch is EnoughRows {}
            return results
        }
        var examined = 0
        return try candidates(examined: &examined, changed: changed, pending: pending)
    }

    /// How many rows a window of `limit` after `offset` needs, saturating
    /// (`fetchLimit = Int.max` is a way to say "no limit").
    static func windowEnd(limit: Int, offset: Int?) -> Int {
        let (end, overflow) = limit.addingReportingOverflow(max(offset ?? 0, 0))
        return overflow ? .max : end
    }

    /// Ends a stored-row scan that has every row its window needs.
    private struct EnoughRows: Error {}

    /// Holds the interpreter's per-row state for a filter closure.
    private final class EvaluatorBox {
        var evaluator: RowEvaluator
        init(_ evaluator: RowEvaluator) { self.evaluator = evaluator }
    }

    /// How many rows and pending models pass the filter, before the window; no
    /// candidate is kept and nothing is sorted.
    func matchCount() throws -> Int {
        var count = 0
        if case .scan = access, !hasExcludedRows, let columns = columnFilter {
            count = version.tables[entity].countMatches(columns)
        } else {
            _ = try forEachStoredMatch(inOrder: false) { _, _ in count += 1 }
        }
        for model in changedModels where try descriptor.predicate?.evaluate(model) ?? true { count += 1 }
        for model in pendingModels where try descriptor.predicate?.evaluate(model) ?? true { count += 1 }
        return count
    }

    /// `candidates()`, counting the stored rows and pending models tested.
    ///
    /// Models with unsaved changes are tested on their current values, apart from
    /// the stored rows (an index could not find them by values they do not have yet).
    func candidates(examined: inout Int) throws -> [Candidate] {
        try candidates(examined: &examined, changed: changedModels, pending: pendingModels)
    }

    /// `candidates(examined:)` given the unsaved models it must test.
    private func candidates(examined: inout Int, changed: [T], pending: [T]) throws -> [Candidate] {
        var results: [Candidate] = []
        let stored = try forEachStoredMatch { id, row in results.append(Candidate(rowID: id, values: row, model: nil)) }
        var tested = stored.tested
        if stored.inSortOrder {
            examined = tested
            return results
        }
        for model in changed {
            tested += 1
            if try descriptor.predicate?.evaluate(model) ?? true {
                results.append(Candidate(rowID: RowID(model.persistentModelID.id.key), values: model.modelBacking.values, model: model))
            }
        }
        if !changed.isEmpty { results.sort { $0.rowID! < $1.rowID! } }
        for model in pending {
            tested += 1
            if try descriptor.predicate?.evaluate(model) ?? true {
                results.append(Candidate(rowID: nil, values: model.modelBacking.values, model: model))
            }
        }
        examined = tested
        return sorted(results)
    }

    /// Registered models of this entity with unsaved changes.
    private var changedModels: [T] {
        context.changed.isEmpty ? [] : context.changed.compactMap { context.registry[$0] as? T }
    }

    /// Unsaved inserts of this entity, when the fetch includes pending changes.
    private var pendingModels: [T] {
        descriptor.includePendingChanges && !context.inserted.isEmpty ? context.inserted.compactMap { context.registry[$0] as? T } : []
    }

    /// Calls `body` with each stored row that passes the filter, leaving out deleted
    /// and changed models, in row order (or in `sortBy` order when `inSortOrder`: an
    /// index gave that order, nothing unsaved can interleave, and under a limit the
    /// rows stop after the window and its ties; in no particular order when not
    /// `inOrder`). `body` gets the row's values when the test read them whole.
    /// `tested` counts the rows tested.
    private func forEachStoredMatch(
        inOrder: Bool = true, _ body: (RowID, Row?) throws -> Void
    ) throws -> (tested: Int, inSortOrder: Bool) {
        let table = version.tables[entity]
        var tested = 0
        if case let .unique(constraint, key, exact) = access {
            if let id = version.lookup(unique: key, constraint: constraint, of: entity), table.contains(id) {
                tested = 1
                if exact {
                    // The key is the whole predicate: no filter to build or run, and the
                    // model is a fault until used.
                    if excludedRows?(id) != true { try body(id, nil) }
                } else if let row = try storedRowFilter()(id) {
                    try body(id, row)
                }
            }
            return (tested, false)
        }
        switch access {
        case .scan:
            if let columns = columnFilter {
                let excluded = excludedRows
                try table.forEachMatch(columns) { id in
                    if excluded?(id) != true { try body(id, nil) }
                }
            } else {
                let passes = storedRowFilter()
                for id in table.rowIDs {
                    if let row = try passes(id) { try body(id, row) }
                }
            }
            tested = table.count
        case .unique:
            preconditionFailure("unique lookups return above")
        case let .index(plan):
            // With the order from the index, a window needs only its rows and the
            // rows tied with its last one; unsaved models could land anywhere.
            let inSortOrder = plan.providesOrder && !hasUnsavedModels
            // (A limit of 0 or less means none, as in `window`.)
            let needed = inSortOrder
                ? descriptor.fetchLimit.flatMap { $0 > 0 ? Self.windowEnd(limit: $0, offset: descriptor.fetchOffset) : nil } : nil
            // Rows go straight to `body` unless they must be put in order first.
            let reorders = inSortOrder ? plan.reverse : inOrder
            var boundary: IndexKey?
            var matched = 0
            var held: [(id: RowID, row: Row?)] = []
            let index = version.orderedIndexes[entity][plan.index]
            // An exact range is the whole predicate: only unsaved changes exclude rows.
            let excluded = excludedRows
            let passes: (RowID) throws -> Row?? = plan.exact ? { excluded?($0) == true ? nil : .some(nil) } : storedRowFilter()
            for range in plan.ranges {
                var stop = false
                try index.scan(from: range.lower, to: range.upper, reverse: plan.reverse) { entry in
                    if let boundary, !entry.key.partsEqual(boundary, in: plan.orderSlotsRange) {
                        stop = true
                        return false
                    }
                    tested += 1
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
            if reorders {
                // Index order is the sort order; ties are in row order going forward and
                // in reverse row order going backward, where a stable sort wants row order.
                if inSortOrder {
                    reverseTies(&held, keys: plan.orderSlotsRange.map { plan.slots[$0] })
                } else {
                    held.sort { $0.id < $1.id }
                }
                for match in held { try body(match.id, match.row) }
            }
            return (tested, inSortOrder)
        }
        return (tested, false)
    }

    /// Whether models of this entity have unsaved changes, or are unsaved inserts the
    /// fetch includes: they could land anywhere in an order an index gives.
    private var hasUnsavedModels: Bool {
        context.changed.contains { context.registry[$0] is T }
            || descriptor.includePendingChanges && context.inserted.contains { context.registry[$0] is T }
    }

    /// The filter a stored row passes through, built once per fetch: nil when the
    /// row fails; when it passes, `.some(row)` if the test read the whole row (the
    /// interpreter does), `.some(nil)` if it read only some columns (`RowTest`) or none. Closures over the row's values where the predicate allows
    /// (`RowTest`), else the interpreter, else a model and `Predicate.evaluate`.
    /// Deleted and changed models never pass.
    private func storedRowFilter() -> (RowID) throws -> Row?? {
        let table = version.tables[entity]
        let test: (RowID) throws -> Row??
        switch filter {
        case .all:
            test = { _ in .some(nil) }
        case let .native(expression):
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
            if context.hasChanges, expression.traversesRelationships { evaluator.overlay = context.pendingRows() }
            let box = EvaluatorBox(evaluator)
            test = { id in
                guard let row = table[id] else { return nil }
                return try box.evaluator.test(expression, row: row, id: id) ? .some(row) : nil
            }
        case .fallback:
            test = { [context, version, descriptor, entity] id in
                let identifier = context.identifier(entity: entity, row: id)
                let model = context.registry[identifier] as? T
                    ?? context.makeModel(identifier: identifier, entity: entity, row: nil, in: version) as! T
                return try descriptor.predicate?.evaluate(model) ?? true ? .some(nil) : nil
            }
        }
        guard let excluded = excludedRows else { return test }
        return { id in try excluded(id) ? nil : test(id) }
    }

    /// The scan's column kernels, when the predicate compiles to them (`ColumnFilter`).
    private var columnFilter: ColumnFilter? {
        switch filter {
        case .all: ColumnFilter(.constant(.bool(true)), kinds: version.tables[entity].kinds)
        case let .native(expression): ColumnFilter(expression, kinds: version.tables[entity].kinds)
        case .fallback: nil
        }
    }

    /// Whether some stored rows stand for deleted or changed models.
    private var hasExcludedRows: Bool { !context.deletedSet.isEmpty || !context.changed.isEmpty }

    /// Whether a stored row stands for a deleted or changed model, which never passes
    /// as stored (changed models are tested on their current values instead); nil
    /// when no row does, so no row needs its identifier.
    private var excludedRows: ((RowID) -> Bool)? {
        let deleted = context.deletedSet, changed = context.changed
        guard !deleted.isEmpty || !changed.isEmpty else { return nil }
        return { [context, entity] id in
            let identifier = context.identifier(entity: entity, row: id)
            return deleted.contains(identifier) || changed.contains(identifier)
        }
    }

    /// Entries in the plan's ranges, counted up to a cap (an estimate for `explain`).
    func estimate(_ plan: IndexPlan, cap: Int = 100_000) -> Int {
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

    // MARK: Sorting and windowing

    /// Reverses each run of candidates whose `keys` slots are equal.
    private func reverseTies(_ rows: inout [(id: RowID, row: Row?)], keys: [Int]) {
        let table = version.tables[entity]
        func key(_ i: Int) -> [Value?] { keys.map { rows[i].row?[$0] ?? table.value(rows[i].id, slot: $0) } }
        var start = 0
        while start < rows.count {
            var end = start + 1
            let first = key(start)
            while end < rows.count, key(end) == first { end += 1 }
            if end - start > 1 { rows[start..<end].reverse() }
            start = end
        }
    }

    /// The candidates in `sortBy` order; stable, so ties keep store order.
    private func sorted(_ candidates: [Candidate]) -> [Candidate] {
        guard !descriptor.sortBy.isEmpty else { return candidates }
        var keys: [(slot: Int, reverse: Bool)] = []
        for sort in descriptor.sortBy {
            guard let keyPath = sort.keyPath, case let .attribute(slot)? = layout.slots[keyPath] else {
                return sortedOnModels(candidates)
            }
            keys.append((slot, sort.order == .reverse))
        }
        // Rows not read yet are read now: sorting compares them.
        let table = version.tables[entity]
        let ranked = Array(candidates.map { candidate -> Candidate in
            guard candidate.values == nil, let id = candidate.rowID else { return candidate }
            var read = candidate
            read.values = table[id]
            return read
        }.enumerated())
        func less(_ a: (offset: Int, element: Candidate), _ b: (offset: Int, element: Candidate)) -> Bool {
            for key in keys {
                let x = a.element.values?[key.slot] ?? .null, y = b.element.values?[key.slot] ?? .null
                if x == y { continue }
                return key.reverse ? y < x : x < y
            }
            return a.offset < b.offset
        }
        // With a limit, keep only the rows the window can reach (a top-k heap).
        if let limit = descriptor.fetchLimit, limit > 0 {
            let reach = Self.windowEnd(limit: limit, offset: descriptor.fetchOffset)
            if reach < ranked.count / 2 { return smallest(reach, of: ranked, by: less).map { $0.element } }
        }
        return ranked.sorted(by: less).map { $0.element }
    }

    /// Sorts on model objects with Foundation, for sort keys the engine cannot read
    /// (key paths through relationships or into composite values).
    private func sortedOnModels(_ candidates: [Candidate]) -> [Candidate] {
        let withModels = candidates.map { candidate -> Candidate in
            var candidate = candidate
            candidate.model = materialize(candidate)
            return candidate
        }
        let order = withModels.map { unsafeDowncast($0.model!, to: T.self) }.sorted(using: descriptor.sortBy)
        let positions = Dictionary(uniqueKeysWithValues: withModels.enumerated().map { (ObjectIdentifier($1.model!), $0) })
        return order.map { withModels[positions[ObjectIdentifier($0)]!] }
    }

    /// The candidates within `fetchOffset` and `fetchLimit`.
    func window(_ candidates: [Candidate]) -> ArraySlice<Candidate> {
        candidates[Self.window(of: candidates.count, descriptor)]
    }

    /// The positions `descriptor`'s offset and limit keep out of `count` results:
    /// a negative offset counts as 0, a limit of 0 or less as none.
    static func window(of count: Int, _ descriptor: FetchDescriptor<T>) -> Range<Int> {
        let offset = min(max(descriptor.fetchOffset ?? 0, 0), count)
        var end = count
        if let limit = descriptor.fetchLimit, limit > 0 { end = min(end, offset + min(limit, count)) }
        return offset..<end
    }

    // MARK: Results

    func identifier(of candidate: Candidate) -> PersistentIdentifier {
        if let model = candidate.model { return unsafeDowncast(model, to: T.self).persistentModelID }
        return context.identifier(entity: entity, row: candidate.rowID!)
    }

    /// The value in `slot` of a candidate, read from the table when its row was not.
    func value(of candidate: Candidate, slot: Int) -> Value {
        if let values = candidate.values { return values[slot] }
        return candidate.rowID.flatMap { version.tables[entity].value($0, slot: slot) } ?? .null
    }

    /// The candidate's model, registered with the context: a fault when its row was
    /// not read.
    func materialize(_ candidate: Candidate) -> T {
        if let model = candidate.model { return unsafeDowncast(model, to: T.self) }
        return context.materialize(layout, entity: entity, id: candidate.rowID!, row: candidate.values, in: version) as! T
    }
}

extension QueryExpression {
    /// The terms of a top-level conjunction (the expression itself when it is none).
    var conjuncts: [QueryExpression] {
        if case let .and(l, r) = self { return l.conjuncts + r.conjuncts }
        return [self]
    }
}

/// A row (or unsaved model) that passed the filter.
struct FetchCandidate {
    var rowID: RowID?
    /// Current values in the engine's form, when already read (unsaved models
    /// always; stored rows when a test read them whole). Nil for a stored row
    /// not read: sorting reads its keys from the table, and its model is a fault.
    var values: Row?
    /// The model, when one already exists (registered or pending): a `T` of the
    /// fetch, held untyped so the candidate type is not generic.
    var model: AnyObject?
}

enum FetchFilter {
    case all
    case native(QueryExpression)
    case fallback(reason: String)
}

enum FetchAccess {
    case scan
    /// A unique key lookup. `exact` when the predicate is nothing but the key's
    /// equalities with values of the attributes' own kinds: the row the lookup finds
    /// passes it, and is not tested again (`QueryPlanner.isExactKey`).
    case unique(constraint: Int, key: [Value], exact: Bool)
    case index(FetchIndexPlan)
}

/// A B-tree access: key ranges of one ordered index.
struct FetchIndexPlan {
    var index: Int
    var slots: [Int]
    var ranges: [(lower: IndexBound?, upper: IndexBound?)]
    var lookup: FetchExplanation.IndexLookup
    /// Whether walking the ranges yields rows in `sortBy` order.
    var providesOrder = false
    var reverse = false
    /// The positions in the index key that carry the sort keys, when `providesOrder`.
    var orderSlotsRange: Range<Int> = 0..<0
    /// Whether the predicate is exactly the range: the rows it yields pass it and are
    /// not tested again (`QueryPlanner.isExactRange`).
    var exact = false
}
