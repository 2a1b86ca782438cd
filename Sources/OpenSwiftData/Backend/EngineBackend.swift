import Foundation
import OpenSwiftDataStore

/// The built-in engine as a context's backend: rows in a `Store`'s published
/// versions, fetches planned and run by `FetchQuery`, saves committed as one
/// `ChangeSet` (`ModelContext.commit(to:)`).
final class EngineBackend: ModelBackend {
    /// The engine's store: every context's fetches read its published version, and
    /// every save takes its one commit path.
    let store: Store
    let storeIdentifier: String
    var takesRows: Bool { true }
    var references: ExternalReferences? { nil }

    init(store: Store, storeIdentifier: String) {
        self.store = store
        self.storeIdentifier = storeIdentifier
    }

    func table(of entity: Int) -> (table: Table, generation: UInt64) { store.currentTable(of: entity) }

    func contextBegan(_ context: ModelContext) {}
    func contextEnded(_ context: ModelContext) {}

    // MARK: Reading

    func forEachMatch(
        _ request: FetchRequest, in context: ModelContext, onModels: () -> any FetchedModels,
        count: (Int) -> Void, body: (any PersistentModel) -> Void
    ) throws {
        let filter = try FetchQuery.filter(of: request, in: context)
        switch try context.keyMatch(request, filter: filter) {
        case let .model(model)?:
            count(1)
            body(model)
            return
        case .absent?:
            return
        case nil:
            break
        }
        let query = try FetchQuery(request, context: context, filter: filter, onModels: onModels)
        if query.yieldsModelsInWalkOrder {
            // Rows become models as the walk yields them: no list of candidates, whose
            // allocation (over 1 KiB for a hundred rows) made glibc consolidate the
            // blocks of the models the previous query ended, and every allocation
            // after it take the slow path (W5).
            _ = try query.stored.forEachMatch(indexOrder: true) { expected in
                count(expected)
                if expected > 64 { context.registry.reserveUnretained(expected) }
            } _: { id, row in
                body(query.materialize(FetchCandidate(rowID: id, values: row, model: nil)))
            }
            return
        }
        let candidates = query.window(try query.candidates())
        count(candidates.count)
        if candidates.count > 64 { context.registry.reserveUnretained(candidates.count) }
        for candidate in candidates { body(query.materialize(candidate)) }
    }

    func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, in context: ModelContext) throws -> Int {
        // Without a predicate or unsaved changes: the table's row count (except for a
        // subclass in a model hierarchy, whose rows share their root's table).
        if descriptor.predicate == nil, !context.hasChanges,
           PredicateCompiler.typeFilter(for: T.self, in: context.container) == nil {
            store.catchUp()
            let rows = store.current.tables[try context.container.entityIndex(of: T.self)].count
            return FetchQuery.window(of: rows, descriptor).count
        }
        let query = try FetchQuery(descriptor, context: context)
        return FetchQuery.window(of: try query.matchCount(), descriptor).count
    }

    func fetchIdentifiers<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, in context: ModelContext
    ) throws -> [PersistentIdentifier] {
        let query = try FetchQuery(descriptor, context: context)
        return query.window(try query.candidates()).map { query.identifier(of: $0) }
    }

    func fetch<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, batchSize: Int, in context: ModelContext
    ) throws -> FetchResultsCollection<T> {
        let identifiers = try fetchIdentifiers(descriptor, in: context)
        return FetchResultsCollection(batches: .init(identifiers: identifiers, batchSize: batchSize) { [unowned context] ids in
            ids.compactMap { context.model(for: $0) as? T }
        })
    }

    func enumerate<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, in context: ModelContext, block: (T) throws -> Void
    ) throws {
        for id in try fetchIdentifiers(descriptor, in: context) {
            if let model = context.model(for: id) as? T { try block(model) }
        }
    }

    func storedModel(for id: PersistentIdentifier, entity: Int, in context: ModelContext) -> (any PersistentModel)? {
        guard id.storeIdentifier == context.container.identifierScopes[entity].storeIdentifier, !id.isTemporary else {
            return nil
        }
        store.catchUp()
        let version = store.current
        guard let row = version.row(RowID(id.id.key), of: entity) else { return nil }
        return context.materialize(context.container.layout(at: entity), entity: entity, id: RowID(id.id.key), row: row, in: version)
    }

    func resolve(
        _ value: Value, of relationship: EntityLayout.RelationshipSlot, in context: ModelContext
    ) -> [any PersistentModel] {
        // (Read from the value itself, into a list sized once: collecting the rows into
        // an array first and growing the result by doubling cost about 500
        // instructions per relationship resolved.)
        switch value {
        case .reference: break
        case let .references(ids) where !ids.isEmpty: break
        default: return []
        }
        guard let entity = context.container.entityIndex(ofDestination: relationship) else { return [] }
        let (table, generation) = store.currentTable(of: entity)
        func model(_ id: RowID) -> (any PersistentModel)? {
            let identifier = context.identifier(entity: entity, row: id)
            if let model = context.registry[identifier] { return model }
            guard table.contains(id) else { return nil }
            // A fault, registered: what `materialize` makes of a row it does not find.
            return context.makeModel(
                identifier: identifier, entity: entity, row: nil, table: table, generation: generation, registering: true)
        }
        if case let .reference(id) = value { return model(id).map { [$0] } ?? [] }
        guard case let .references(ids) = value else { return [] }
        var models: [any PersistentModel] = []
        models.reserveCapacity(ids.count)
        for id in ids {
            if let found = model(id) { models.append(found) }
        }
        return models
    }

    func identifiers(
        in value: Value, of relationship: EntityLayout.RelationshipSlot, in context: ModelContext
    ) -> [PersistentIdentifier] {
        guard let entity = context.container.entityIndex(named: relationship.destination) else { return [] }
        return value.referencedRows.map { context.identifier(entity: entity, row: $0) }
    }

    // MARK: Writing

    func save(_ context: ModelContext) throws { try context.commit(to: store) }

    func deleteAllData(of container: ModelContainer) {
        // SwiftData declares this non-throwing: a document that cannot be rewritten
        // (disk full) keeps everything, in memory and on disk.
        guard let emptied = try? store.removeAll() else { return }
        postInvalidation(of: emptied, by: container)
    }

    func erase(of container: ModelContainer) throws {
        let emptied: StoreVersion
        do {
            emptied = try store.erase()
        } catch {
            throw error.apiError
        }
        postInvalidation(of: emptied, by: container)
    }

    /// Posts `ModelContext.didSave` with the container as its object and every
    /// identifier `emptied` held under `invalidatedAllIdentifiers`: what
    /// `deleteAllData()` and `erase()` removed, so contexts and caches can drop it.
    /// - Complexity: O(rows of `emptied`)
    private func postInvalidation(of emptied: StoreVersion, by container: ModelContainer) {
        var identifiers: [PersistentIdentifier] = []
        let scopes = container.identifierScopes
        for (e, table) in emptied.tables.enumerated() where e < scopes.count {
            identifiers += table.rowIDs.map { PersistentIdentifier(scope: scopes[e], key: $0.rawValue) }
        }
        NotificationCenter.default.post(name: ModelContext.didSave, object: container, userInfo: [
            ModelContext.NotificationKey.invalidatedAllIdentifiers.rawValue: identifiers,
        ])
    }

    // MARK: History

    func fetchHistory<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>, of container: ModelContainer) throws -> [T] {
        try container.history(matching: Self.defaultTyped(descriptor)).map { $0 as! T }
    }

    func deleteHistory<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>, of container: ModelContainer) throws {
        try container.deleteHistory(matching: Self.defaultTyped(descriptor))
    }

    /// `descriptor` as one of the engine's transactions, the only type it stores.
    private static func defaultTyped<T>(_ descriptor: HistoryDescriptor<T>) throws -> HistoryDescriptor<DefaultHistoryTransaction> {
        guard let descriptor = descriptor as? HistoryDescriptor<DefaultHistoryTransaction> else {
            throw SwiftDataError(.invalidTransactionFetchRequest, "the store keeps DefaultHistoryTransaction, not \(T.self)")
        }
        return descriptor
    }
}
