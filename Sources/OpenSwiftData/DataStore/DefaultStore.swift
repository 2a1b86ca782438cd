import Foundation
import OpenSwiftDataStore

/// The built-in store (the engine: columns, indexes, document file) seen through the
/// `DataStore` protocol, in snapshots.
///
/// A container opened with `ModelConfiguration`s uses the engine directly, without
/// snapshots; `DefaultStore` is for code that drives a store itself: a store that
/// wraps another, a tool, a test of the protocol. Each call works in a context of its
/// own over one container, so calls from several threads are safe.
public final class DefaultStore: DataStore, DataStoreBatching, HistoryProviding {
    /// The store opens `ModelConfiguration`s.
    public typealias Configuration = ModelConfiguration
    /// The store reads and writes `DefaultSnapshot`s.
    public typealias Snapshot = DefaultSnapshot
    /// The store's history is the built-in one.
    public typealias HistoryType = DefaultHistoryTransaction
    /// The token of the store's history transactions.
    public typealias TokenType = DefaultHistoryToken

    /// The configuration the store was opened with.
    public let configuration: ModelConfiguration
    /// The configuration's name.
    public let name: String
    /// The configuration's schema, which the store was opened with.
    public let schema: Schema
    /// The document's store identifier, which the permanent identifiers it makes name.
    public var identifier: String { container.storeIdentifier }
    /// The container the store's calls go through.
    let container: ModelContainer

    /// Opens the document (or the in-memory store) `configuration` names, with its
    /// schema, migrating it by `migrationPlan` as a container would.
    /// - Throws: `SwiftDataError.loadIssueModelContainer` when the configuration has
    ///   no schema, and whatever opening the document throws.
    public init(_ configuration: ModelConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)? = nil) throws {
        guard let schema = configuration.schema else {
            throw SwiftDataError(.loadIssueModelContainer, "a DefaultStore opens a configuration with a schema")
        }
        self.configuration = configuration
        self.name = configuration.name
        self.schema = schema
        self.container = try ModelContainer(for: schema, migrationPlan: migrationPlan, configurations: [configuration])
    }

    private func context(_ editingState: EditingState) -> ModelContext {
        let context = ModelContext(container)
        context.author = editingState.author
        return context
    }

    private static func snapshots(of models: [any PersistentModel]) -> [DefaultSnapshot] {
        var related: [PersistentIdentifier: any BackingData] = [:]
        return models.map { DefaultSnapshot(from: $0.anyBackingData, relatedBackingDatas: &related) }
    }

    // MARK: Fetching

    /// - Complexity: as `ModelContext.fetch(_:)`, plus O(properties) per snapshot.
    public func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchResult<T, DefaultSnapshot> {
        // The context lives while the snapshots are made: unresolved relationships
        // are read through it.
        let context = context(request.editingState)
        let models = try context.fetch(request.descriptor)
        return withExtendedLifetime(context) {
            DataStoreFetchResult(descriptor: request.descriptor, fetchedSnapshots: Self.snapshots(of: models))
        }
    }

    /// The number of stored models the request's descriptor selects, counted without
    /// making snapshots.
    public func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Int {
        try context(request.editingState).fetchCount(request.descriptor)
    }

    /// The identifiers of the stored models the request's descriptor selects, without
    /// making snapshots.
    public func fetchIdentifiers<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> [PersistentIdentifier] {
        try context(request.editingState).fetchIdentifiers(request.descriptor)
    }

    // MARK: Saving

    /// Writes the request's snapshots in one commit: inserts (upserts on a unique
    /// key), updates of the properties that differ, deletes (with their delete
    /// rules). Relationships name models of the request by their temporary
    /// identifiers or stored ones by their permanent identifiers.
    ///
    /// The result maps each inserted snapshot's identifier to its permanent one and
    /// reregisters the inserted snapshots as stored (an upsert merges values).
    ///
    /// Properties merge as the context's `conflictPolicy` says by default (only the
    /// changed ones are written, to-many lists by what was added and removed).
    /// `failOnConflict` throws `DataStoreError.unsupportedFeature`: not built yet (the
    /// request's `readSnapshots` would allow it).
    public func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        guard request.conflictPolicy == .mergeByProperty else { throw DataStoreError.unsupportedFeature }
        let context = context(request.editingState)
        var models: [PersistentIdentifier: any PersistentModel] = [:]
        var inserted: [(PersistentIdentifier, any PersistentModel)] = []
        for snapshot in request.inserted {
            let model = try newModel(snapshot, in: context)
            models[snapshot.persistentIdentifier] = model
            inserted.append((snapshot.persistentIdentifier, model))
        }
        func lookup(_ id: PersistentIdentifier) -> (any PersistentModel)? {
            if let model = models[id] { return model }
            // An identifier of an entity the schema lacks names nothing here.
            guard container.entityIndex(named: id.entityName) != nil else { return nil }
            let model = context.model(for: id)
            return model.isDeleted ? nil : model
        }
        var updated: [(DefaultSnapshot, any PersistentModel)] = []
        for snapshot in request.updated {
            guard let stored = lookup(snapshot.persistentIdentifier) else { continue }
            models[snapshot.persistentIdentifier] = stored
            updated.append((snapshot, stored))
        }
        for snapshot in request.inserted {
            write(snapshot, to: models[snapshot.persistentIdentifier]!.modelBacking, in: context, resolve: lookup, writing: { _ in true })
        }
        for (snapshot, model) in updated {
            // Merged by property: what the context did not change keeps the stored value,
            // and a to-many list takes what the context added and removed.
            write(snapshot, to: model.modelBacking, in: context, resolve: lookup, read: request.readSnapshots[snapshot.persistentIdentifier]) {
                request.changed($0, of: snapshot.persistentIdentifier)
            }
        }
        for (_, model) in inserted { context.insertGraph(from: [model]) }
        for snapshot in request.deleted {
            if let stored = lookup(snapshot.persistentIdentifier) { context.deleteModel(stored) }
        }
        // The inner save lists an upsert as updated: so does this result.
        try context.save()
        let updatedIDs = Set(context.lastSavedChanges?.updatedIdentifiers ?? [])
        var remapped: [PersistentIdentifier: PersistentIdentifier] = [:]
        var reregister: [PersistentIdentifier: DefaultSnapshot] = [:]
        var upserted: Set<PersistentIdentifier> = []
        let stored = withExtendedLifetime(context) { Self.snapshots(of: inserted.map(\.1)) }
        for ((temporary, model), snapshot) in zip(inserted, stored) {
            remapped[temporary] = model.persistentModelID
            reregister[temporary] = snapshot
            if updatedIDs.contains(model.persistentModelID) { upserted.insert(temporary) }
        }
        // Updated models as stored: other writers' changes to the properties the
        // context did not change, and merged lists, are what its models read now.
        let updatedNow = withExtendedLifetime(context) { Self.snapshots(of: updated.map(\.1)) }
        for ((snapshot, _), now) in zip(updated, updatedNow) { reregister[snapshot.persistentIdentifier] = now }
        return DataStoreSaveChangesResult(
            for: identifier, remappedIdentifiers: remapped, snapshotsToReregister: reregister, upsertedIdentifiers: upserted)
    }

    /// A new model of the snapshot's entity, not yet inserted, holding no values.
    private func newModel(_ snapshot: DefaultSnapshot, in context: ModelContext) throws -> any PersistentModel {
        guard let entity = container.entityIndex(named: snapshot.persistentIdentifier.entityName) else {
            throw SwiftDataError(.unknownModelType, "\(snapshot.persistentIdentifier.entityName) is not in the store's schema")
        }
        var layout = container.layout(at: entity)
        if let hierarchy = layout.hierarchy, case let .value(.string(name))? = snapshot.entries[layout.attributes[hierarchy.discriminator].name],
           let member = container.schema.memberLayouts.values.first(where: { $0.name == name }) {
            layout = member
        }
        let model = layout.maker.make(
            identifier: PersistentIdentifier.temporary(in: layout.temporaryScope), layout: layout, row: layout.emptyRow,
            table: container.store.current.tables[entity], id: RowID(0), generation: 0, context: context, registering: false)
        let backing = model.modelBacking
        backing.committed = nil
        backing.context = nil
        return model
    }

    /// Writes the snapshot's values of the properties `writing` names over the
    /// backing's: attributes that differ, and relationships (their inverses come with
    /// the related models' own snapshots).
    private func write(
        _ snapshot: DefaultSnapshot, to backing: any ModelBacking, in context: ModelContext,
        resolve: (PersistentIdentifier) -> (any PersistentModel)?, read: DefaultSnapshot? = nil, writing: (String) -> Bool
    ) {
        let layout = backing.layout
        var values = backing.values
        for (i, attribute) in layout.attributes.enumerated() where writing(attribute.name) {
            guard case let .value(value)? = snapshot.entries[attribute.name], values[i] != value else { continue }
            values[i] = value
            if backing.committed != nil { backing.dirty.insert(i) }
        }
        backing.values = values
        for (j, relationship) in layout.relationships.enumerated() where writing(relationship.name) {
            let ids: [PersistentIdentifier]
            switch snapshot.entries[relationship.name] {
            case let .toOne(id)?: ids = id.map { [$0] } ?? []
            case let .toMany(list)?: ids = list
            default: continue
            }
            let current = backing.relatedModels(j).map(\.persistentModelID)
            var wanted = ids
            if relationship.isToMany, case let .toMany(old)? = read?.entries[relationship.name] {
                wanted = mergedList(read: old, mine: ids, stored: current)
            }
            let related = wanted.compactMap(resolve)
            if current != related.map(\.persistentModelID) { backing.setRelated(j, to: related) }
        }
        if !backing.dirty.isEmpty { context.noteChange(of: backing.identifier) }
    }

    // MARK: Deleting

    /// Deletes the matching models (and what their delete rules reach) in one commit.
    public func delete<T: PersistentModel>(_ request: DataStoreBatchDeleteRequest<T>) throws {
        let context = context(request.editingState)
        try context.delete(model: T.self, where: request.predicate, includeSubclasses: request.includeSubclasses)
        try context.save()
    }

    /// Removes every model and the document's files (`ModelContainer.erase()`).
    public func erase() throws {
        try container.erase()
    }

    // MARK: History

    /// `DefaultHistoryTransaction`, the store's transaction type.
    public static var historyType: DefaultHistoryTransaction.Type { DefaultHistoryTransaction.self }

    /// The store's history transactions `descriptor` selects, as
    /// `ModelContext.fetchHistory(_:)` gives them.
    /// - Throws: `SwiftDataError.historyTokenExpired` when history after the descriptor's
    ///   token was deleted.
    public func fetchHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws -> [DefaultHistoryTransaction] {
        try ModelContext(container).fetchHistory(descriptor)
    }

    /// Deletes the history transactions `descriptor` selects, as
    /// `ModelContext.deleteHistory(_:)` does.
    /// - Throws: `SwiftDataError.readOnlyConfiguration` when the configuration does not
    ///   allow saving.
    public func deleteHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws {
        try ModelContext(container).deleteHistory(descriptor)
    }
}
