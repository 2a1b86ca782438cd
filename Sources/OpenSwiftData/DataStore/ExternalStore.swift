import Foundation
import Synchronization
import OpenSwiftDataStore

/// A container's custom store (`DataStore`), type-erased for contexts.
///
/// Calls into the store are serialized: a store written from Apple's documentation
/// (a JSON file read and rewritten whole) has no lock of its own, and contexts on
/// several actors share one container. A `ConcurrentDataStore` is called as its
/// contexts call, in parallel. Snapshots of other types than
/// `DefaultSnapshot` are read through their coded form (`SnapshotReader`).
protocol ExternalStore: AnyObject, Sendable {
    var identifier: String { get }
    /// The store's type and its configuration's name: the dimensions of its metrics.
    var metricsDimensions: [(String, String)] { get }
    func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, editingState: EditingState) throws -> ExternalFetch
    func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, editingState: EditingState) throws -> Int
    func fetchIdentifiers<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, editingState: EditingState
    ) throws -> [PersistentIdentifier]
    func save(
        inserted: [any PersistentModel], updated: [any PersistentModel], deleted: [any PersistentModel],
        editingState: EditingState, conflictPolicy: ModelContext.ConflictPolicy, changedProperties: [PersistentIdentifier: Set<String>],
        readSnapshots: [PersistentIdentifier: DefaultSnapshot]
    ) throws -> ExternalSave
    func cachedSnapshots(_ ids: [PersistentIdentifier], editingState: EditingState) throws -> [PersistentIdentifier: DefaultSnapshot]
    func erase() throws
    func initializeState(for editingState: EditingState)
    func invalidateState(for editingState: EditingState)
    func fetchHistory<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>) throws -> [T]
    func deleteHistory<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>) throws
    /// Whether the store is `HistoryObserving`: a change feed can follow it.
    var observesHistory: Bool { get }
    /// The store's `waitForHistory(after:)`; at once when it is not `HistoryObserving`.
    func waitForHistory(after token: DefaultHistoryToken?) async
}

/// What a custom store's fetch gave: the selected snapshots and related ones.
struct ExternalFetch {
    var fetched: [DefaultSnapshot]
    var related: [PersistentIdentifier: DefaultSnapshot]
}

/// What a custom store's save gave.
struct ExternalSave {
    var remapped: [PersistentIdentifier: PersistentIdentifier]
    var reregister: [PersistentIdentifier: DefaultSnapshot]
    /// Inserts the store saved onto a row it had (their temporary identifiers).
    var upserted: Set<PersistentIdentifier> = []
}

final class ExternalStoreBox<S: DataStore>: ExternalStore, @unchecked Sendable {
    private let store: S
    private let lock = NSLock()
    /// Whether calls take `lock` (not for a `ConcurrentDataStore`).
    private let serializes: Bool
    let identifier: String
    let metricsDimensions: [(String, String)]

    init(_ store: S) {
        self.store = store
        self.serializes = !(store is any ConcurrentDataStore)
        self.identifier = store.identifier
        self.metricsDimensions = [("store", String(describing: S.self)), ("configuration", store.configuration.name)]
    }

    private func serialized<R>(_ body: () throws -> R) rethrows -> R {
        guard serializes else { return try body() }
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, editingState: EditingState) throws -> ExternalFetch {
        let result = try serialized { try store.fetch(DataStoreFetchRequest(descriptor: descriptor, editingState: editingState)) }
        return ExternalFetch(fetched: try Self.read(result.fetchedSnapshots), related: try result.relatedSnapshots.mapValues(SnapshotReader.read))
    }

    /// The store's snapshots as the context reads them: as they are when the store
    /// makes `DefaultSnapshot`s (a dynamic cast each cost about 10 µs of a 100-row
    /// fetch from PostgreSQL), else each read through its coding.
    private static func read(_ snapshots: [S.Snapshot]) throws -> [DefaultSnapshot] {
        if S.Snapshot.self == DefaultSnapshot.self { return unsafeBitCast(snapshots, to: [DefaultSnapshot].self) }
        return try snapshots.map(SnapshotReader.read)
    }

    func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, editingState: EditingState) throws -> Int {
        try serialized { try store.fetchCount(DataStoreFetchRequest(descriptor: descriptor, editingState: editingState)) }
    }

    func fetchIdentifiers<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, editingState: EditingState
    ) throws -> [PersistentIdentifier] {
        try serialized { try store.fetchIdentifiers(DataStoreFetchRequest(descriptor: descriptor, editingState: editingState)) }
    }

    func save(
        inserted: [any PersistentModel], updated: [any PersistentModel], deleted: [any PersistentModel],
        editingState: EditingState, conflictPolicy: ModelContext.ConflictPolicy, changedProperties: [PersistentIdentifier: Set<String>],
        readSnapshots: [PersistentIdentifier: DefaultSnapshot]
    ) throws -> ExternalSave {
        var related: [PersistentIdentifier: any BackingData] = [:]
        func snapshots(_ models: [any PersistentModel]) -> [S.Snapshot] {
            models.map { S.Snapshot(from: $0.anyBackingData, relatedBackingDatas: &related) }
        }
        let request = DataStoreSaveChangesRequest(
            editingState: editingState, inserted: snapshots(inserted), updated: snapshots(updated), deleted: snapshots(deleted),
            conflictPolicy: conflictPolicy, changedProperties: changedProperties, readSnapshots: readSnapshots)
        let result = try serialized { try store.save(request) }
        return ExternalSave(
            remapped: result.remappedIdentifiers, reregister: try result.snapshotsToReregister.mapValues(SnapshotReader.read),
            upserted: result.upsertedIdentifiers)
    }

    func cachedSnapshots(_ ids: [PersistentIdentifier], editingState: EditingState) throws -> [PersistentIdentifier: DefaultSnapshot] {
        try serialized { try store.cachedSnapshots(for: ids, editingState: editingState) }.mapValues(SnapshotReader.read)
    }

    func erase() throws { try serialized { try store.erase() } }

    func initializeState(for editingState: EditingState) { serialized { store.initializeState(for: editingState) } }

    func invalidateState(for editingState: EditingState) { serialized { store.invalidateState(for: editingState) } }

    // (Two near-copies: each needs the provider's `HistoryType` statically, which a
    // shared closure cannot take.)
    func fetchHistory<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>) throws -> [T] {
        guard let provider = store as? any HistoryProviding else { throw DataStoreError.unsupportedFeature }
        func run<P: HistoryProviding>(_ provider: P) throws -> [T] {
            try serialized { try provider.fetchHistory(Self.typed(descriptor, for: P.self)) }.map { $0 as! T }
        }
        return try run(provider)
    }

    func deleteHistory<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>) throws {
        guard let provider = store as? any HistoryProviding else { throw DataStoreError.unsupportedFeature }
        func run<P: HistoryProviding>(_ provider: P) throws {
            try serialized { try provider.deleteHistory(Self.typed(descriptor, for: P.self)) }
        }
        try run(provider)
    }

    var observesHistory: Bool { store is any HistoryObserving }

    /// Not serialized: a wait holds nothing that other calls need.
    func waitForHistory(after token: DefaultHistoryToken?) async {
        guard let observing = store as? any HistoryObserving else { return }
        await observing.waitForHistory(after: token)
    }

    /// `descriptor` as one of `P`'s transaction type, or `invalidTransactionFetchRequest`.
    private static func typed<T, P: HistoryProviding>(
        _ descriptor: HistoryDescriptor<T>, for _: P.Type
    ) throws -> HistoryDescriptor<P.HistoryType> {
        guard let typed = descriptor as? HistoryDescriptor<P.HistoryType> else {
            throw SwiftDataError(.invalidTransactionFetchRequest, "the store keeps \(P.HistoryType.self), not \(T.self)")
        }
        return typed
    }
}

/// The identifiers a custom store's relationships name, each given a row reference
/// once: models hold relationships as row references (`Value.reference`), and a
/// custom store's identifiers are not rows. Shared by the container's contexts.
final class ExternalReferences: Sendable {
    private struct Table {
        var identifiers: [PersistentIdentifier] = []
        var references: [PersistentIdentifier: RowID] = [:]
    }

    private let table = Mutex(Table())

    /// The reference standing for `identifier`, made on first use.
    /// - Complexity: O(1) expected
    func reference(for identifier: PersistentIdentifier) -> RowID {
        table.withLock { table in
            if let reference = table.references[identifier] { return reference }
            let reference = RowID(Int64(table.identifiers.count))
            table.identifiers.append(identifier)
            table.references[identifier] = reference
            return reference
        }
    }

    /// The identifier `reference` stands for.
    /// - Complexity: O(1)
    func identifier(for reference: RowID) -> PersistentIdentifier? {
        table.withLock { table in
            let i = Int(reference.rawValue)
            return table.identifiers.indices.contains(i) ? table.identifiers[i] : nil
        }
    }
}
