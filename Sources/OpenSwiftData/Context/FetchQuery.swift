import Foundation
import OpenSwiftDataStore

/// One fetch, planned and run against one published store version.
///
/// The predicate is compiled to the engine's form and tested on stored rows; only
/// the rows of the final page become model objects. Models with unsaved changes
/// (and unsaved inserts) are tested on their current values with
/// `Predicate.evaluate`, so pending changes take part. A predicate the compiler
/// cannot translate falls back to materializing each row and evaluating it.
///
/// The query is not generic: the fetch path runs unspecialized from user modules,
/// where every use of a type generic over the model (the descriptor, the query
/// itself) looked its metadata up and copied it through value witnesses, about
/// 5,000 instructions a fetch. The descriptor is read once, by `init`; what needs
/// it afterwards (testing unsaved models, sorting on models) goes through
/// `onModels`, made only when the fetch has such work.
struct FetchQuery {
    typealias Candidate = FetchCandidate
    typealias Filter = FetchFilter

    let context: ModelContext
    let entity: Int
    let layout: EntityLayout
    let version: StoreVersion
    let filter: Filter
    /// The engine's query over stored rows: its plan, filter and excluded rows.
    let stored: StoredRowQuery
    let hasSort: Bool
    /// The sort as stored-attribute keys; nil without a sort, or when a key is
    /// something the engine cannot read (then `onModels` sorts).
    let sortKeys: [SortKey]?
    let fetchLimit: Int?
    let fetchOffset: Int?
    let includePendingChanges: Bool
    /// The descriptor's work on model objects of its type; nil when the context has
    /// no unsaved models the fetch could meet and the sort is on stored attributes.
    let onModels: (any FetchedModels)?
    /// `onModels != nil`, kept apart: comparing the existential with nil copied it
    /// and destroyed the copy (about 140 instructions per fetch).
    let worksOnModels: Bool

    var access: QueryAccess { stored.access }

    /// The access `candidates()` reads (`StoredRowQuery.chosenAccess`): the plan's,
    /// or the ordered walk chosen over it for this run's window.
    var chosenAccess: QueryAccess {
        stored.chosenAccess(indexOrder: !hasUnsavedModels, window: QueryWindow.reach(limit: fetchLimit, offset: fetchOffset))
    }

    /// Whether the models are the stored rows the access yields, in the order it
    /// yields them, and it tells how many it yields at most before it does: no sort,
    /// no window (but a unique key's, which yields one row), no unsaved model to test,
    /// and a unique key, a list of rows or a spatial window.
    var yieldsModelsInWalkOrder: Bool {
        guard !hasSort, !worksOnModels, (fetchOffset ?? 0) <= 0 else { return false }
        switch access {
        case .unique: return true
        case .rows, .spatial: return (fetchLimit ?? 0) <= 0
        case .index, .scan: return false
        }
    }

    /// The query of `descriptor` in `context`.
    init<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, context: ModelContext) throws {
        try self.init(FetchRequest(descriptor), context: context) { DescriptorModels(descriptor: descriptor) }
    }

    /// The query of a descriptor taken apart; `makeOnModels` is called only when the
    /// fetch has work on model objects. `filter` is the request's (`filter(of:in:)`),
    /// when the caller compiled it already.
    init(
        _ request: FetchRequest, context: ModelContext, filter compiled: Filter? = nil,
        onModels makeOnModels: () -> any FetchedModels
    ) throws {
        // A custom store fetches for itself: what reads the engine's rows (explain,
        // aggregates, nearby queries, batch updates) has nothing to read.
        let store = try context.container.requireEngine()
        let entity = try context.container.entityIndex(of: request.model)
        let layout = context.container.layout(at: entity)
        hasSort = !request.sortBy.isEmpty
        sortKeys = hasSort ? Self.sortKeys(of: request.sortBy, in: layout) : nil
        fetchLimit = request.fetchLimit
        fetchOffset = request.fetchOffset
        includePendingChanges = request.includePendingChanges
        let filter = try compiled ?? Self.filter(of: request, in: context)
        var needsModels = !context.changed.isEmpty || includePendingChanges && context.registry.hasPendingInserts
            || hasSort && sortKeys == nil
        if case .fallback = filter { needsModels = true }
        let onModels = needsModels ? makeOnModels() : nil
        self.context = context
        self.entity = entity
        self.layout = layout
        self.filter = filter
        self.onModels = onModels
        self.worksOnModels = needsModels
        // What other writers of a shared document saved, first (one `fstat` when nothing).
        store.catchUp()
        let version = store.current
        self.version = version
        let shape = PlanShape(sortKeys: sortKeys, limited: (request.fetchLimit ?? 0) > 0)
        func planner() -> QueryPlanner { QueryPlanner(shape, entity: entity, in: version) }
        let kinds = version.tables[entity].kinds
        let rowFilter: RowFilter
        let access: QueryAccess
        switch filter {
        case .all:
            access = planner().plan(nil).bind([], kinds: kinds)
            rowFilter = .all
        case let .native(compiled):
            let template = compiled.template
            let plan = compiled.cache?.plan(for: shape) { planner().plan(template) } ?? planner().plan(template)
            access = plan.bind(compiled.parameters, kinds: kinds)
            rowFilter = .predicate(compiled.bound(), overlay: context.hasChanges ? { [context] in context.pendingRows() } : nil)
        case .fallback:
            access = planner().plan(nil).bind([], kinds: kinds)
            rowFilter = onModels!.evaluatingFilter(context: context, entity: entity, version: version)
        }
        stored = StoredRowQuery(version: version, entity: entity, access: access, filter: rowFilter, excluded: Self.excludedRows(in: context, entity: entity))
    }

    /// `request`'s predicate compiled to the engine's form (with the type test of a
    /// subclass in a model hierarchy), or why it falls back to models; for a fetch of
    /// `context`, whose `PredicateMemo` is tried first.
    static func filter(of request: FetchRequest, in context: ModelContext) throws -> Filter {
        let container = context.container
        if let predicate = request.predicate {
            do {
                return .native(try PredicateCompiler.compile(
                    predicate.expression, variable: predicate.variable, model: request.model, in: container,
                    memo: context.predicateMemo))
            } catch let unsupported as PredicateCompiler.Unsupported {
                return .fallback(reason: unsupported.description)
            }
        }
        if let test = PredicateCompiler.typeFilter(for: request.model, in: container) {
            // A subclass's fetch reads the rows of its class and its subclasses.
            return .native(CompiledFilter(template: test, parameters: [], cache: nil))
        }
        return .all
    }

    /// The sort as stored-attribute keys, nil when a key is something else (a path
    /// through a relationship, a computed value): then the index cannot give it.
    static func sortKeys(of sortBy: [(keyPath: AnyKeyPath?, reverse: Bool)], in layout: EntityLayout) -> [SortKey]? {
        var keys: [SortKey] = []
        for sort in sortBy {
            guard let keyPath = sort.keyPath, case let .attribute(slot)? = layout.slots[keyPath],
                  layout.attributes[slot].transformer == nil
            else { return nil }
            keys.append(SortKey(slot: slot, reverse: sort.reverse))
        }
        return keys
    }

    // MARK: Filtering

    /// Every row and pending model that passes the filter, sorted; or, for a scan
    /// with a limit, no sort and no unsaved models, only the rows up to the end of
    /// its window: stored rows come in row order then, so the scan stops there.
    func candidates() throws -> [Candidate] {
        let changed = changedModels, pending = pendingModels
        // (Scans only: a unique or index access reads few rows, and stopping costs a throw.)
        if case .scan = access, !hasSort, let needed = QueryWindow.reach(limit: fetchLimit, offset: fetchOffset),
           changed.isEmpty, pending.isEmpty {
            return try stored.firstMatches(needed).map { Candidate(rowID: $0.id, values: $0.row, model: nil) }
        }
        var examined = 0
        return try candidates(examined: &examined, changed: changed, pending: pending)
    }

    /// How many rows and pending models pass the filter, before the window; no
    /// candidate is kept and nothing is sorted.
    func matchCount() throws -> Int {
        var count = try stored.count()
        for model in changedModels + pendingModels where try onModels?.passes(model) ?? true {
            count += 1
        }
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
    private func candidates(examined: inout Int, changed: [any PersistentModel], pending: [any PersistentModel]) throws -> [Candidate] {
        var results: [Candidate] = []
        // With the order from the index, a window needs only its rows and the rows
        // tied with its last one; unsaved models could land anywhere. (A limit of 0 or
        // less means none, as in `window`.)
        let window = QueryWindow.reach(limit: fetchLimit, offset: fetchOffset)
        // A small window is mostly what an index walk yields: one allocation, not a
        // doubling series (about 9,000 instructions for 50 rows).
        if let window, window <= 4_096 { results.reserveCapacity(window) }
        let walk = try stored.forEachMatch(indexOrder: !hasUnsavedModels, window: window) { id, row in
            results.append(Candidate(rowID: id, values: row, model: nil))
        }
        var tested = walk.tested
        if walk.inSortOrder {
            examined = tested
            return results
        }
        for model in changed {
            tested += 1
            if try onModels?.passes(model) ?? true {
                results.append(Candidate(rowID: RowID(model.persistentModelID.id.key), values: model.modelBacking.values, model: model))
            }
        }
        if !changed.isEmpty { results.sort { $0.rowID! < $1.rowID! } }
        for model in pending {
            tested += 1
            if try onModels?.passes(model) ?? true {
                results.append(Candidate(rowID: nil, values: model.modelBacking.values, model: model))
            }
        }
        examined = tested
        return sorted(results)
    }

    /// Registered models of the fetched type with unsaved changes.
    var changedModels: [any PersistentModel] {
        guard !context.changed.isEmpty, let onModels else { return [] }
        return context.changed.compactMap { context.registry[$0].flatMap { onModels.isFetched($0) ? $0 : nil } }
    }

    /// Unsaved inserts of this entity, when the fetch includes pending changes. Those
    /// kept as rows (`PendingInserts`) are made again only when their row may pass the
    /// compiled predicate: an import that looks a key up before each insert would
    /// otherwise make every kept insert again at its first look-up. (The models go
    /// through `Predicate.evaluate` as every unsaved one does; a row the engine cannot
    /// test is made again.)
    var pendingModels: [any PersistentModel] {
        guard includePendingChanges && context.registry.hasPendingInserts, let onModels else { return [] }
        return onModels.pendingModels(in: context.registry.pending, keptPassing: keptRowTest())
    }

    /// The test a kept insert's row goes through before its model is made again; nil
    /// to make them all (no predicate, or one the engine cannot run).
    private func keptRowTest() -> ((Row, RowID) -> Bool)? {
        guard case let .predicate(bound, _) = stored.filter else { return nil }
        let expression = bound.expression
        if let test = RowTest(expression) { return { row, _ in test(row) } }
        var evaluator = RowEvaluator(version: version)
        if expression.traversesRelationships { evaluator.overlay = context.pendingRows() }
        return { row, id in (try? evaluator.test(expression, row: row, id: id)) ?? true }
    }

    /// Whether models of this entity have unsaved changes, or are unsaved inserts the
    /// fetch includes: they could land anywhere in an order an index gives.
    private var hasUnsavedModels: Bool {
        guard !context.changed.isEmpty || context.registry.hasPendingInserts, let onModels else { return false }
        return context.changed.contains { context.registry[$0].map(onModels.isFetched) ?? false }
            || includePendingChanges && onModels.hasPendingModels(in: context.registry.pending)
    }

    /// Whether a stored row stands for a deleted or changed model, which never passes
    /// as stored (changed models are tested on their current values instead); nil
    /// when no row does, so no row needs its identifier.
    private static func excludedRows(in context: ModelContext, entity: Int) -> ((RowID) -> Bool)? {
        let deleted = context.deletes.members, changed = context.changed.identifiers
        guard !deleted.isEmpty || !changed.isEmpty else { return nil }
        return { [context] id in
            let identifier = context.identifier(entity: entity, row: id)
            return deleted.contains(identifier) || changed.contains(identifier)
        }
    }

    // MARK: Sorting and windowing

    /// The candidates in `sortBy` order (`RowOrder`, the engine's, as `osd query`
    /// sorts); stable, so ties keep store order.
    private func sorted(_ candidates: [Candidate]) -> [Candidate] {
        guard hasSort else { return candidates }
        guard let keys = sortKeys else { return sortedOnModels(candidates) }
        let table = version.tables[entity]
        /// `candidate` with its row read, if it was not.
        func read(_ candidate: Candidate) -> Candidate {
            guard candidate.values == nil, let id = candidate.rowID else { return candidate }
            var read = candidate
            read.values = table[id]
            return read
        }
        let descending = keys.map(\.reverse), reach = QueryWindow.reach(limit: fetchLimit, offset: fetchOffset)
        // With a limit, only the rows the window can reach are kept (a top-k heap), so
        // only their sort keys are read to rank them, and whole rows only for those
        // kept: a search keeping 20 of 3,000 rows read all 3,000 whole, a tenth of the
        // server's read time (#42).
        if let reach, reach < candidates.count / 2 {
            var ranks: [Value] = []
            ranks.reserveCapacity(candidates.count * keys.count)
            for candidate in candidates {
                for key in keys {
                    ranks.append(candidate.values?[key.slot] ?? candidate.rowID.flatMap { table.value($0, slot: key.slot) } ?? .null)
                }
            }
            return RowOrder.sorted(Array(candidates.indices), descending: descending, reach: reach) { i, k in ranks[i * keys.count + k] }
                .map { read(candidates[$0]) }
        }
        // Rows not read yet are read now: sorting compares them.
        return RowOrder.sorted(candidates.map(read), descending: descending) { candidate, k in
            candidate.values?[keys[k].slot] ?? .null
        }
    }

    /// Sorts on model objects with Foundation, for sort keys the engine cannot read
    /// (key paths through relationships or into composite values).
    private func sortedOnModels(_ candidates: [Candidate]) -> [Candidate] {
        let withModels = candidates.map { candidate -> Candidate in
            var candidate = candidate
            candidate.model = materialize(candidate)
            return candidate
        }
        // (`onModels` is made for every fetch whose sort has no stored keys.)
        let order = onModels!.sorted(withModels.map { $0.model! })
        let positions = Dictionary(uniqueKeysWithValues: withModels.enumerated().map { (ObjectIdentifier($1.model!), $0) })
        return order.map { withModels[positions[ObjectIdentifier($0)]!] }
    }

    /// The candidates within `fetchOffset` and `fetchLimit`.
    func window(_ candidates: [Candidate]) -> ArraySlice<Candidate> {
        candidates[QueryWindow.range(of: candidates.count, offset: fetchOffset, limit: fetchLimit)]
    }

    /// The positions `descriptor`'s offset and limit keep out of `count` results.
    static func window<T>(of count: Int, _ descriptor: FetchDescriptor<T>) -> Range<Int> {
        QueryWindow.range(of: count, offset: descriptor.fetchOffset, limit: descriptor.fetchLimit)
    }

    // MARK: Results

    func identifier(of candidate: Candidate) -> PersistentIdentifier {
        if let model = candidate.model { return model.persistentModelID }
        return context.identifier(entity: entity, row: candidate.rowID!)
    }

    /// The value in `slot` of a candidate, read from the table when its row was not.
    func value(of candidate: Candidate, slot: Int) -> Value {
        if let values = candidate.values { return values[slot] }
        return candidate.rowID.flatMap { version.tables[entity].value($0, slot: slot) } ?? .null
    }

    /// The candidate's model, registered with the context: a fault when its row was
    /// not read. It is of the fetched type: a row of the fetched entity's table is a
    /// model of its class or of a subclass, whose layout is the one of its class.
    func materialize(_ candidate: Candidate) -> any PersistentModel {
        if let model = candidate.model { return model }
        return context.materialize(layout, entity: entity, id: candidate.rowID!, row: candidate.values, in: version)
    }

    /// `materialize(_:)` as the fetched type `T`.
    func materialize<T: PersistentModel>(_ candidate: Candidate, as _: T.Type) -> T {
        unsafeDowncast(materialize(candidate) as AnyObject, to: T.self)
    }
}

/// A row (or unsaved model) that passed the filter.
struct FetchCandidate {
    var rowID: RowID?
    /// Current values in the engine's form, when already read (unsaved models
    /// always; stored rows when a test read them whole). Nil for a stored row
    /// not read: sorting reads its keys from the table, and its model is a fault.
    var values: Row?
    /// The model, when one already exists (registered or pending), of the fetched type.
    var model: (any PersistentModel)?
}

enum FetchFilter {
    case all
    /// Compiled to the engine's form, with this fetch's values.
    case native(CompiledFilter)
    case fallback(reason: String)
}

/// What a fetch's plan depends on besides the predicate's shape: the plans of a
/// cached predicate template are kept by it.
struct PlanShape: Hashable {
    var sortKeys: [SortKey]?
    var limited: Bool
}

extension QueryPlanner {
    /// The planner of a fetch of `entity` of `shape` on `version`'s indexes.
    init(_ shape: PlanShape, entity: Int, in version: StoreVersion) {
        self.init(
            entity: version.schema.entities[entity], indexes: version.orderedIndexes[entity].map { $0.slots },
            sortKeys: shape.sortKeys, limited: shape.limited)
    }
}
