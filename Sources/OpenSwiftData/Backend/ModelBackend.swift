import Foundation
import OpenSwiftDataStore

/// Where a container's rows live, as its contexts see it: the one seam between
/// `ModelContext` and a backend.
///
/// A context keeps what is the same over every backend (the registry of models,
/// unsaved inserts, changes and deletes, delete rules, undo, notifications) and
/// asks its container's backend for everything that reads or writes rows. Two
/// backends implement it:
/// - `EngineBackend`, the built-in engine (`Store`): fetches plan and run a
///   `FetchQuery` on a published version, and a save commits a `ChangeSet`;
/// - `DataStoreBackend`, a custom `DataStore`: fetches and saves go to the store
///   as requests of snapshots.
///
/// Nothing outside the two implementations asks which one a container has. The
/// features only the engine has (`explain(_:)`, aggregates, nearby queries, batch
/// updates, the history feed, compaction) ask for its store
/// (`ModelContainer.engineStore`, `requireEngine()`) and throw
/// `DataStoreError.unsupportedFeature` without one.
///
/// The methods take the context they work for: a backend is shared by every
/// context of its container, on any actor, and keeps no per-context state of its
/// own (a context keeps what a backend needs of it, such as `storeSnapshots`).
protocol ModelBackend: AnyObject, Sendable {
    /// Names this backend's store in permanent identifiers.
    var storeIdentifier: String { get }
    /// Whether the backend saves and deletes rows that no model stands for: pending
    /// inserts kept as rows (`spillUnheldInserts`) and rows a cascade deletes
    /// without making their models (`DeletionClosure.rows`). A `DataStore` saves
    /// snapshots of models, so every change must be a model.
    var takesRows: Bool { get }
    /// The map between the references models hold and the identifiers they stand
    /// for, when references are not rows of the engine; nil when they are.
    var references: ExternalReferences? { get }

    /// The table models of `entity` read their stored values from, and its generation.
    /// - Complexity: O(1)
    func table(of entity: Int) -> (table: Table, generation: UInt64)

    // MARK: A context's life

    /// Called as `context` begins, and as it ends (a `DataStore`'s
    /// `initializeState(for:)` and `invalidateState(for:)`).
    func contextBegan(_ context: ModelContext)
    func contextEnded(_ context: ModelContext)

    // MARK: Reading

    /// Calls `body` with each model `request` selects, in order, after `count` with
    /// their number (or an upper bound); `onModels` gives the typed descriptor's
    /// work on model objects (`FetchedModels`). What `ModelContext.fetch(_:)` runs.
    func forEachMatch(
        _ request: FetchRequest, in context: ModelContext, onModels: () -> any FetchedModels,
        count: (Int) -> Void, body: (any PersistentModel) -> Void
    ) throws
    /// What `ModelContext.fetchCount(_:)` returns.
    func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, in context: ModelContext) throws -> Int
    /// The identifiers of the models `fetch(_:)` would return, in its order.
    func fetchIdentifiers<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, in context: ModelContext
    ) throws -> [PersistentIdentifier]
    /// The models of `fetch(_:)` as a collection read `batchSize` at a time.
    func fetch<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, batchSize: Int, in context: ModelContext
    ) throws -> FetchResultsCollection<T>
    /// Calls `block` with each model `fetch(_:)` would return.
    func enumerate<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, in context: ModelContext, block: (T) throws -> Void
    ) throws
    /// The stored model `id` names (registered in `context`), or nil when the
    /// backend has no such row. `entity` is `id`'s, and the registry has no model of it.
    func storedModel(for id: PersistentIdentifier, entity: Int, in context: ModelContext) -> (any PersistentModel)?
    /// The models a stored relationship value refers to, registering them in
    /// `context`; references to rows that no longer exist are skipped.
    func resolve(
        _ value: Value, of relationship: EntityLayout.RelationshipSlot, in context: ModelContext
    ) -> [any PersistentModel]
    /// The identifiers a stored relationship value names, without loading models.
    func identifiers(
        in value: Value, of relationship: EntityLayout.RelationshipSlot, in context: ModelContext
    ) -> [PersistentIdentifier]

    // MARK: Writing

    /// Writes `context`'s pending inserts, changes and deletes, whose delete rules
    /// have run, as one save; then gives its models their saved state, ends its
    /// pending state and posts `ModelContext.didSave`.
    func save(_ context: ModelContext) throws
    /// Removes every model (`ModelContainer.deleteAllData()`).
    func deleteAllData(of container: ModelContainer)
    /// Removes every model and the store itself (`ModelContainer.erase()`).
    func erase(of container: ModelContainer) throws

    // MARK: History

    func fetchHistory<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>, of container: ModelContainer) throws -> [T]
    func deleteHistory<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>, of container: ModelContainer) throws
}
