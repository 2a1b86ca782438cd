import Foundation

/// What a container's store is and where it lives; `Store` is the store type that
/// opens it (`ModelConfiguration` opens the built-in `DefaultStore`).
public protocol DataStoreConfiguration: Hashable {
    /// The store type that opens configurations of this type.
    associatedtype Store: DataStore where Self == Self.Store.Configuration
    /// The configuration's name.
    var name: String { get }
    /// The entities the store keeps; a container fills in its own schema when this is
    /// `nil`.
    var schema: Schema? { get set }
    /// Checks the configuration before the container opens its store.
    func validate() throws
}

extension DataStoreConfiguration {
    /// Accepts every configuration; override it to reject one before its store opens.
    public func validate() throws {}
}

/// A store SwiftData reads and writes models through, knowing nothing of how it
/// keeps them: contexts talk to it in snapshots (`DataStoreSnapshot`), the values of
/// one model at one moment.
///
/// A container opened with a configuration whose `Store` is a custom type
/// (`ModelContainer(for:configurations:)`) fetches through `fetch(_:)` and saves
/// through `save(_:)`. A store that throws `DataStoreError.preferInMemoryFilter` or
/// `.preferInMemorySort` from `fetch(_:)` is asked again without the predicate or the
/// sort, and the context filters and sorts the models itself (OpenSwiftData.docc/CustomDataStores.md).
///
/// Calls into one store are serialized by its container, so a store needs no lock
/// of its own against the contexts of that container; a ``ConcurrentDataStore`` is
/// called in parallel.
public protocol DataStore: AnyObject {
    /// The configuration type that describes this store.
    associatedtype Configuration: DataStoreConfiguration where Self == Self.Configuration.Store
    /// The snapshot type the store reads and writes models as.
    associatedtype Snapshot: DataStoreSnapshot

    /// The configuration the store was opened with.
    var configuration: Configuration { get }
    /// Names the store in the permanent identifiers it makes.
    var identifier: String { get }
    /// The schema of the models the store keeps.
    var schema: Schema { get }

    /// Opens the store `configuration` describes; a container passes `nil` for
    /// `migrationPlan`.
    init(_ configuration: Configuration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws

    /// The snapshots of the models the request's descriptor selects, and any related
    /// ones the store has at hand (the context resolves relationships from them).
    func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchResult<T, Snapshot>
    /// The number of models the request's descriptor selects.
    func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Int
    /// The identifiers of the models the request's descriptor selects, in its order and
    /// window.
    func fetchIdentifiers<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> [PersistentIdentifier]
    /// Writes one context's changes; inserted snapshots carry temporary identifiers,
    /// which the result maps to the permanent ones the store chose.
    func save(_ request: DataStoreSaveChangesRequest<Snapshot>) throws -> DataStoreSaveChangesResult<Snapshot>
    /// Removes every model and the store's own files.
    func erase() throws
    /// A context begins: a store that caches per context can set its cache up.
    func initializeState(for editingState: EditingState)
    /// A context ended: its cache can go.
    func invalidateState(for editingState: EditingState)
    /// Snapshots the store holds in memory for these identifiers, if any, so a
    /// context resolves relationships without a fetch.
    func cachedSnapshots(
        for persistentIdentifiers: [PersistentIdentifier], editingState: EditingState
    ) throws -> [PersistentIdentifier: Snapshot]
}

extension DataStore {
    /// The count of `fetch(_:)`'s snapshots.
    public func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Int {
        try fetch(request).fetchedSnapshots.count
    }

    /// The identifiers of `fetch(_:)`'s snapshots.
    public func fetchIdentifiers<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> [PersistentIdentifier] {
        try fetch(request).fetchedSnapshots.map(\.persistentIdentifier)
    }

    /// Unsupported unless the store says how: throws `DataStoreError.unsupportedFeature`.
    public func erase() throws {
        throw DataStoreError.unsupportedFeature
    }

    /// Does nothing: a store without per-context state needs no setup.
    public func initializeState(for editingState: EditingState) {}

    /// Does nothing: a store without per-context state has nothing to drop.
    public func invalidateState(for editingState: EditingState) {}

    /// None: the context fetches what it needs.
    public func cachedSnapshots(
        for persistentIdentifiers: [PersistentIdentifier], editingState: EditingState
    ) throws -> [PersistentIdentifier: Snapshot] {
        [:]
    }
}

/// A store that deletes many models in one request.
public protocol DataStoreBatching: DataStore {
    /// Deletes every model the request's predicate selects, without loading them.
    func delete<T: PersistentModel>(_ request: DataStoreBatchDeleteRequest<T>) throws
}

/// A store that keeps the history of its changes (`ModelContext.fetchHistory(_:)`
/// reaches it for a container over the store).
public protocol HistoryProviding<HistoryType> {
    /// The type of the store's history transactions.
    associatedtype HistoryType: HistoryTransaction
    /// The transactions `descriptor` selects, in its order and up to its limit.
    func fetchHistory(_ descriptor: HistoryDescriptor<HistoryType>) throws -> [HistoryType]
    /// Deletes the transactions `descriptor` selects.
    func deleteHistory(_ descriptor: HistoryDescriptor<HistoryType>) throws
    /// The store's transaction type, for code that has only the store's metatype.
    static var historyType: HistoryType.Type { get }
}

/// What a store reports when it will not run a request as asked.
public enum DataStoreError: Error, Hashable, Sendable {
    /// The predicate names something the store cannot test.
    case invalidPredicate
    /// The store returns every model of the entity; the context filters.
    case preferInMemoryFilter
    /// The store returns models unsorted; the context sorts.
    case preferInMemorySort
    /// The store does not do what was asked (erase, batch delete, history, ...).
    case unsupportedFeature
}

/// The values a snapshot may hold.
public typealias DataStoreSnapshotValue = Codable & Sendable
