import Foundation
import SwiftData

// A custom store as Apple's documentation (WWDC24, "Create a custom data store with
// SwiftData") writes one: an archival JSON file of `DefaultSnapshot`s, read and
// rewritten whole, which leaves filtering and sorting to the context. Written here
// against the public API only, as a user would.

final class JSONStoreConfiguration: DataStoreConfiguration {
    typealias Store = JSONStore

    var name: String
    var schema: Schema?
    var fileURL: URL

    init(name: String, schema: Schema? = nil, fileURL: URL) {
        self.name = name
        self.schema = schema
        self.fileURL = fileURL
    }

    static func == (lhs: JSONStoreConfiguration, rhs: JSONStoreConfiguration) -> Bool {
        lhs.name == rhs.name
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(name)
    }
}

final class JSONStore: DataStore {
    typealias Configuration = JSONStoreConfiguration
    typealias Snapshot = DefaultSnapshot

    var configuration: JSONStoreConfiguration
    var name: String
    var schema: Schema
    var identifier: String

    init(_ configuration: JSONStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        self.configuration = configuration
        self.name = configuration.name
        self.schema = configuration.schema!
        self.identifier = configuration.fileURL.lastPathComponent
    }

    func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        var remappedIdentifiers = [PersistentIdentifier: PersistentIdentifier]()
        var stored = try read()
        if request.conflictPolicy == .failOnConflict {
            // Optimistic concurrency: what the context read must still be what is stored.
            var changed: [PersistentIdentifier] = [], deleted: [PersistentIdentifier] = []
            for snapshot in request.updated + request.deleted {
                let id = snapshot.persistentIdentifier
                guard let now = stored[id] else {
                    if request.updated.contains(where: { $0.persistentIdentifier == id }) { deleted.append(id) }
                    continue
                }
                if let read = request.readSnapshots[id], read != now { changed.append(id) }
            }
            guard changed.isEmpty, deleted.isEmpty else { throw SaveConflictError(changed: changed, deleted: deleted) }
        }
        // Permanent identifiers first, so snapshots inserted together can name each other.
        for snapshot in request.inserted {
            remappedIdentifiers[snapshot.persistentIdentifier] = try PersistentIdentifier.identifier(
                for: identifier, entityName: snapshot.persistentIdentifier.entityName, primaryKey: UUID())
        }
        for snapshot in request.inserted {
            let permanent = remappedIdentifiers[snapshot.persistentIdentifier]!
            stored[permanent] = snapshot.copy(persistentIdentifier: permanent, remappedIdentifiers: remappedIdentifiers)
        }
        for snapshot in request.updated {
            stored[snapshot.persistentIdentifier] = snapshot.copy(
                persistentIdentifier: snapshot.persistentIdentifier, remappedIdentifiers: remappedIdentifiers)
        }
        for snapshot in request.deleted {
            stored[snapshot.persistentIdentifier] = nil
        }
        try write(stored)
        return DataStoreSaveChangesResult(for: identifier, remappedIdentifiers: remappedIdentifiers)
    }

    func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchResult<T, DefaultSnapshot> {
        if request.descriptor.predicate != nil {
            throw DataStoreError.preferInMemoryFilter
        } else if !request.descriptor.sortBy.isEmpty {
            throw DataStoreError.preferInMemorySort
        }
        let all = try read()
        let entity = String(describing: T.self)
        var snapshots = all.values.filter { $0.persistentIdentifier.entityName == entity }
            .sorted { $0.persistentIdentifier < $1.persistentIdentifier }
        let offset = min(request.descriptor.fetchOffset ?? 0, snapshots.count)
        snapshots = Array(snapshots.dropFirst(offset))
        if let limit = request.descriptor.fetchLimit, limit > 0 { snapshots = Array(snapshots.prefix(limit)) }
        return DataStoreFetchResult(descriptor: request.descriptor, fetchedSnapshots: snapshots, relatedSnapshots: all)
    }

    func read() throws -> [PersistentIdentifier: DefaultSnapshot] {
        guard FileManager.default.fileExists(atPath: configuration.fileURL.path) else { return [:] }
        let snapshots = try JSONDecoder().decode([DefaultSnapshot].self, from: Data(contentsOf: configuration.fileURL))
        return Dictionary(snapshots.map { ($0.persistentIdentifier, $0) }, uniquingKeysWith: { _, last in last })
    }

    func write(_ snapshots: [PersistentIdentifier: DefaultSnapshot]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(snapshots.values.sorted { $0.persistentIdentifier < $1.persistentIdentifier })
        try data.write(to: configuration.fileURL, options: .atomic)
    }
}

/// A custom store that hands every request to the built-in store (`DefaultStore`),
/// so the context's custom-store path runs against the engine, predicates included.
final class ForwardingStoreConfiguration: DataStoreConfiguration {
    typealias Store = ForwardingStore

    var name: String
    var schema: Schema?
    let inner: ModelConfiguration
    /// What the store does to each fetched snapshot before handing it back (another
    /// form of the same values, `OrderedSnapshotTests`); nil hands them back as they are.
    let reshape: (@Sendable (DefaultSnapshot) -> DefaultSnapshot)?

    init(name: String, inner: ModelConfiguration, reshape: (@Sendable (DefaultSnapshot) -> DefaultSnapshot)? = nil) {
        self.name = name
        self.inner = inner
        self.reshape = reshape
    }

    static func == (lhs: ForwardingStoreConfiguration, rhs: ForwardingStoreConfiguration) -> Bool { lhs.name == rhs.name }
    func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

final class ForwardingStore: DataStore {
    typealias Configuration = ForwardingStoreConfiguration
    typealias Snapshot = DefaultSnapshot

    let configuration: ForwardingStoreConfiguration
    let inner: DefaultStore
    var schema: Schema { inner.schema }
    var identifier: String { inner.identifier }
    /// What the store was asked, for tests to check what reached it.
    private(set) var authors: [String?] = []
    private(set) var states: [String] = []

    init(_ configuration: ForwardingStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        self.configuration = configuration
        var inner = configuration.inner
        inner.schema = configuration.schema
        self.inner = try DefaultStore(inner, migrationPlan: migrationPlan)
        Self.opened.withLock { $0.append(WeakStore(store: self)) }
    }

    /// Every store opened and alive, so a test can look at the one its container made.
    static let opened = LockedList<WeakStore>()

    struct WeakStore {
        weak var store: ForwardingStore?
    }

    func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchResult<T, DefaultSnapshot> {
        let result = try inner.fetch(request)
        guard let reshape = configuration.reshape else { return result }
        return DataStoreFetchResult(descriptor: request.descriptor, fetchedSnapshots: result.fetchedSnapshots.map(reshape))
    }

    func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Int { try inner.fetchCount(request) }

    func fetchIdentifiers<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> [PersistentIdentifier] {
        try inner.fetchIdentifiers(request)
    }

    func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        authors.append(request.editingState.author)
        return try inner.save(request)
    }

    func erase() throws { try inner.erase() }

    func initializeState(for editingState: EditingState) { states.append("begin \(editingState.id)") }

    func invalidateState(for editingState: EditingState) { states.append("end \(editingState.id)") }
}

extension ForwardingStore: HistoryProviding {
    typealias HistoryType = DefaultHistoryTransaction
    static var historyType: DefaultHistoryTransaction.Type { DefaultHistoryTransaction.self }
    func fetchHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws -> [DefaultHistoryTransaction] {
        try inner.fetchHistory(descriptor)
    }
    func deleteHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws {
        try inner.deleteHistory(descriptor)
    }
}

/// A list behind a lock, for test bookkeeping shared between tests running at once.
final class LockedList<Element>: @unchecked Sendable {
    private var elements: [Element] = []
    private let lock = NSLock()

    func withLock<R>(_ body: (inout [Element]) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&elements)
    }
}

@Model
final class Excursion {
    @Attribute(.unique) var name: String
    var destination: String
    var startDate: Date
    var price: Double
    var tags: [String] = []
    @Relationship(deleteRule: .cascade, inverse: \ExcursionStop.excursion)
    var stops: [ExcursionStop] = []

    init(name: String, destination: String, startDate: Date, price: Double) {
        self.name = name
        self.destination = destination
        self.startDate = startDate
        self.price = price
    }
}

@Model
final class ExcursionStop {
    var title: String
    var excursion: Excursion?

    init(title: String) {
        self.title = title
    }
}
