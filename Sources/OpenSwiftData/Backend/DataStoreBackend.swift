import Foundation
import OpenSwiftDataStore

/// A custom store (`DataStore`) as a context's backend: fetches ask the store for
/// snapshots and make models of them; saves hand it snapshots of the pending models
/// (`DataStoreBackend+Save.swift`).
///
/// The models are the same classes with the same backing data as over the engine:
/// they hold their values loaded, and their relationships as references that
/// `ExternalReferences` maps to the store's identifiers. A container over a custom
/// store builds no engine `Store`: its models read from empty tables.
@usableFromInline
final class DataStoreBackend: ModelBackend {
    /// The store, type-erased and with its calls serialized.
    let store: any ExternalStore
    /// The store's identifiers as the references models hold.
    let identifierReferences = ExternalReferences()
    /// One empty table per entity: what a model over a snapshot has for a table (it
    /// holds every value loaded, so it never reads one).
    private let emptyTables: [Table]
    var storeIdentifier: String { store.identifier }
    var takesRows: Bool { false }
    var references: ExternalReferences? { identifierReferences }

    init(store: any ExternalStore, schema: StoreSchema) {
        self.store = store
        self.emptyTables = schema.entities.map(Table.init(entity:))
    }

    func table(of entity: Int) -> (table: Table, generation: UInt64) { (emptyTables[entity], 0) }

    func contextBegan(_ context: ModelContext) { store.initializeState(for: context.editingState) }
    func contextEnded(_ context: ModelContext) { store.invalidateState(for: context.editingState) }

    // MARK: Fetching

    func forEachMatch(
        _ request: FetchRequest, in context: ModelContext, onModels: () -> any FetchedModels,
        count: (Int) -> Void, body: (any PersistentModel) -> Void
    ) throws {
        // The store takes the typed descriptor, which `onModels` holds.
        let models = try onModels().storeMatches(in: context, of: self)
        count(models.count)
        for model in models { body(model) }
    }

    /// `fetch(_:)` over the store.
    ///
    /// The store filters, sorts and windows when it can; a store that prefers the
    /// context to filter or sort (`DataStoreError.preferInMemoryFilter`,
    /// `.preferInMemorySort`) is asked again without them, and the models are filtered
    /// with `Predicate.evaluate` and sorted with the descriptor's `SortDescriptor`s.
    /// With unsaved changes taking part, the store is asked for the whole result
    /// (no window), models with pending changes are tested here, unsaved inserts join,
    /// pending deletes leave, and the window is applied here.
    /// - Complexity: the store's fetch, plus O(n log n) in the models returned when
    ///   the context sorts.
    func matches<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, in context: ModelContext) throws -> [T] {
        let pending = descriptor.includePendingChanges ? pendingModels(of: T.self, in: context) : []
        let mixesPending = !pending.isEmpty || !context.deletes.isEmpty
        var request = descriptor
        if mixesPending {
            request.fetchLimit = nil
            request.fetchOffset = nil
        }
        var filtersHere = false, sortsHere = false
        // A predicate may follow relationships into models of other entities with unsaved
        // changes, which the store cannot see: then the context tests every model.
        if descriptor.includePendingChanges, descriptor.predicate != nil,
           pending.count < context.registry.pendingCount + context.changed.count {
            filtersHere = true
            request.predicate = nil
            request.fetchLimit = nil
            request.fetchOffset = nil
        }
        var result: ExternalFetch
        while true {
            do {
                result = try store.fetch(request, editingState: context.editingState)
                break
            } catch let error as DataStoreError where error == .preferInMemoryFilter && request.predicate != nil {
                filtersHere = true
                request.predicate = nil
                request.fetchLimit = nil
                request.fetchOffset = nil
            } catch let error as DataStoreError where error == .preferInMemorySort && !request.sortBy.isEmpty {
                sortsHere = true
                request.sortBy = []
                request.fetchLimit = nil
                request.fetchOffset = nil
            }
        }
        context.storeSnapshots = result.related
        var models: [T] = []
        models.reserveCapacity(result.fetched.count)
        var seen = Set<ObjectIdentifier>(minimumCapacity: result.fetched.count)
        for snapshot in result.fetched {
            guard let model = try materialize(snapshot, in: context) as? T, seen.insert(ObjectIdentifier(model)).inserted else {
                continue
            }
            models.append(model)
        }
        if mixesPending {
            models.removeAll { $0.modelBacking.isDeleted || context.deletes.contains($0.modelBacking.identifier) }
            for model in pending where seen.insert(ObjectIdentifier(model)).inserted { models.append(model) }
        }
        if let predicate = descriptor.predicate, filtersHere || mixesPending {
            models = try models.filter { model in
                // What the store tested needs no second test, unless it changed since.
                guard filtersHere || context.hasPendingChanges(model.modelBacking.identifier) else { return true }
                return try predicate.evaluate(model)
            }
        }
        if !descriptor.sortBy.isEmpty, sortsHere || mixesPending { models.sort(using: descriptor.sortBy) }
        guard filtersHere || sortsHere || mixesPending else { return models }
        return Array(models[QueryWindow.range(of: models.count, offset: descriptor.fetchOffset, limit: descriptor.fetchLimit)])
    }

    func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, in context: ModelContext) throws -> Int {
        try ask(descriptor, in: context, { try $0.fetchCount(descriptor, editingState: $1) }, else: { $0.count })
    }

    func fetchIdentifiers<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, in context: ModelContext
    ) throws -> [PersistentIdentifier] {
        try ask(descriptor, in: context, { try $0.fetchIdentifiers(descriptor, editingState: $1) }, else: {
            $0.map { $0.modelBacking.identifier }
        })
    }

    func fetch<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, batchSize: Int, in context: ModelContext
    ) throws -> FetchResultsCollection<T> {
        // The models come with the store's snapshots: kept, not fetched again one by one.
        let models = try matches(descriptor, in: context)
        let byID = Dictionary(models.map { ($0.modelBacking.identifier, $0) }, uniquingKeysWith: { a, _ in a })
        return FetchResultsCollection(batches: .init(identifiers: models.map { $0.modelBacking.identifier }, batchSize: batchSize) { ids in
            ids.compactMap { byID[$0] }
        })
    }

    func enumerate<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, in context: ModelContext, block: (T) throws -> Void
    ) throws {
        for model in try matches(descriptor, in: context) { try block(model) }
    }

    /// The store's answer (`ask`) unless unsaved changes take part or the store prefers
    /// the context to filter or sort; then `fromModels` of `matches(_:in:)`.
    private func ask<T: PersistentModel, R>(
        _ descriptor: FetchDescriptor<T>, in context: ModelContext,
        _ ask: (any ExternalStore, EditingState) throws -> R, else fromModels: ([T]) -> R
    ) throws -> R {
        if !descriptor.includePendingChanges || (pendingModels(of: T.self, in: context).isEmpty && context.deletes.isEmpty) {
            do {
                return try ask(store, context.editingState)
            } catch let error as DataStoreError where error == .preferInMemoryFilter || error == .preferInMemorySort {}
        }
        return fromModels(try matches(descriptor, in: context))
    }

    /// Unsaved inserts and saved models with unsaved changes, of type `T`.
    private func pendingModels<T: PersistentModel>(of type: T.Type, in context: ModelContext) -> [T] {
        context.registry.pending.models(of: T.self) + context.changed.sorted().compactMap { context.registry[$0] as? T }
    }

    // MARK: Models from snapshots

    /// The registered model of `snapshot`'s identifier, brought to its values unless
    /// it has unsaved changes; or a new model of its values, registered.
    /// - Throws: `SwiftDataError.unknownModelType` for an entity the schema lacks.
    func materialize(
        _ snapshot: DefaultSnapshot, in context: ModelContext, replacingChanges: Bool = false
    ) throws -> any PersistentModel {
        let id = snapshot.persistentIdentifier
        let container = context.container
        guard let entity = container.entityIndex(named: id.entityName) else {
            throw SwiftDataError(.unknownModelType, "the store returned \(id), of an entity the container's schema lacks")
        }
        let table = emptyTables[entity]
        var layout = container.layout(at: entity)
        var row = row(of: snapshot, layout: layout)
        if container.hasHierarchies {
            let member = container.layout(at: entity, row: RowID(0), in: table, values: row)
            if member !== layout {
                layout = member
                row = self.row(of: snapshot, layout: layout)
            }
        }
        if let model = context.registry[id] {
            let backing = model.modelBacking
            if replacingChanges || !context.hasPendingChanges(id), backing.committed != row {
                backing.values = row
                backing.committed = row
                backing.dirty = []
                backing.forgetResolvedRelationships()
            }
            return model
        }
        let model = layout.maker.make(
            identifier: id, layout: layout, row: row, table: table, id: RowID(0), generation: 0, context: context,
            registering: false)
        context.registry.register(model, as: id, retained: false)
        return model
    }

    /// `snapshot`'s values as a row of `layout`: attributes as stored, relationships
    /// as references to the identifiers they name. Properties the snapshot lacks keep
    /// their defaults.
    private func row(of snapshot: DefaultSnapshot, layout: EntityLayout) -> Row {
        // A snapshot made in the layout's order is read by position; others by name.
        if let ordered = snapshot.orderedEntries(named: layout.slotNames) {
            // Built value by value, not as a copy of the empty row overwritten (a
            // fetch makes one a model).
            var row = Row()
            row.reserveCapacity(ordered.count)
            for i in layout.attributes.indices {
                if case let .value(value) = ordered[i] { row.append(value) } else { row.append(layout.emptyRow[i]) }
            }
            for (j, relationship) in layout.relationships.enumerated() {
                row.append(reference(ordered[layout.attributes.count + j], of: relationship))
            }
            return row
        }
        var row = layout.emptyRow
        let named = snapshot.entries
        for (i, attribute) in layout.attributes.enumerated() {
            if case let .value(value)? = named[attribute.name] { row[i] = value }
        }
        for (j, relationship) in layout.relationships.enumerated() {
            row[layout.attributes.count + j] = reference(named[relationship.name], of: relationship)
        }
        return row
    }

    /// A relationship's entry as the row's value: references to the rows its
    /// identifiers name (none, for a missing entry).
    private func reference(_ entry: DefaultSnapshot.Entry?, of relationship: EntityLayout.RelationshipSlot) -> Value {
        let ids: [PersistentIdentifier] = switch entry {
        case let .toOne(id?)?: [id]
        case let .toMany(ids)?: ids
        default: []
        }
        let rows = ids.map(identifierReferences.reference(for:))
        return relationship.isToMany ? .references(rows) : rows.first.map(Value.reference) ?? .null
    }

    func identifiers(
        in value: Value, of relationship: EntityLayout.RelationshipSlot, in context: ModelContext
    ) -> [PersistentIdentifier] {
        value.referencedRows.compactMap(identifierReferences.identifier(for:))
    }

    /// The models `ids` name, from the registry, the snapshots the last fetch brought,
    /// the store's cache, or a fetch by identifier; identifiers the store no longer has
    /// are skipped (as references to deleted rows are). A store that fails here leaves
    /// the relationship empty: a property read cannot throw.
    func resolve(
        _ value: Value, of relationship: EntityLayout.RelationshipSlot, in context: ModelContext
    ) -> [any PersistentModel] {
        let ids = identifiers(in: value, of: relationship, in: context)
        var found: [PersistentIdentifier: any PersistentModel] = [:]
        var missing: [PersistentIdentifier] = []
        for id in ids {
            if let model = context.registry[id] {
                found[id] = model
            } else if let snapshot = context.storeSnapshots[id], let model = try? materialize(snapshot, in: context) {
                found[id] = model
            } else {
                missing.append(id)
            }
        }
        if !missing.isEmpty, let loaded = try? load(missing, as: relationship.destinationType, in: context) {
            found.merge(loaded) { a, _ in a }
        }
        // A store naming a model of another entity here gives nothing rather than a
        // model the property cannot hold.
        let destination: AnyClass = relationship.destinationType
        return ids.compactMap { found[$0] }.filter { EntityLayout.isClass(type(of: $0), orSubclassOf: destination) }
    }

    func storedModel(for id: PersistentIdentifier, entity: Int, in context: ModelContext) -> (any PersistentModel)? {
        if let snapshot = context.storeSnapshots[id], let model = try? materialize(snapshot, in: context) { return model }
        return (try? load([id], as: context.container.layout(at: entity).modelType, in: context))?[id]
    }

    /// Asks the store's cache, then the store, for the models `ids` name.
    private func load(
        _ ids: [PersistentIdentifier], as type: any PersistentModel.Type, in context: ModelContext
    ) throws -> [PersistentIdentifier: any PersistentModel] {
        var snapshots = try store.cachedSnapshots(ids, editingState: context.editingState)
        let rest = ids.filter { snapshots[$0] == nil }
        if !rest.isEmpty {
            for snapshot in try fetchSnapshots(rest, as: type, in: context) { snapshots[snapshot.persistentIdentifier] = snapshot }
        }
        var models: [PersistentIdentifier: any PersistentModel] = [:]
        for (id, snapshot) in snapshots { models[id] = try materialize(snapshot, in: context) }
        return models
    }

    /// The store's snapshots of `ids`, fetched by a predicate on `persistentModelID`
    /// (or the entity whole, for a store that prefers the context to filter).
    private func fetchSnapshots<T: PersistentModel>(
        _ ids: [PersistentIdentifier], as type: T.Type, in context: ModelContext
    ) throws -> [DefaultSnapshot] {
        let wanted = Set(ids)
        let result: ExternalFetch
        do {
            result = try store.fetch(
                FetchDescriptor<T>(predicate: #Predicate<T> { wanted.contains($0.persistentModelID) }),
                editingState: context.editingState)
        } catch let error as DataStoreError where error == .preferInMemoryFilter || error == .invalidPredicate {
            result = try store.fetch(FetchDescriptor<T>(), editingState: context.editingState)
        }
        return result.fetched.filter { wanted.contains($0.persistentIdentifier) }
    }

    // MARK: Container

    func deleteAllData(of container: ModelContainer) { try? store.erase() }

    func erase(of container: ModelContainer) throws { try store.erase() }

    // MARK: History

    /// A store answers if it is `HistoryProviding`, else `unsupportedFeature`.
    func fetchHistory<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>, of container: ModelContainer) throws -> [T] {
        try store.fetchHistory(descriptor)
    }

    func deleteHistory<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>, of container: ModelContainer) throws {
        try store.deleteHistory(descriptor)
    }
}
