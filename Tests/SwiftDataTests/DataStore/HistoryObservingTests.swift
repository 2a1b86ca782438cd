import Foundation
import SwiftData
import Synchronization
import Testing

/// Issue #43: the change feed over a custom store. A `HistoryObserving` store is
/// followed (its history after the last token, then its wait once caught up); any
/// other custom store's feed yields nothing.
@Suite struct HistoryObservingTests {
    private static let start = Date(timeIntervalSinceReferenceDate: 800_000_000)

    private func container(observing: Bool, name: String = UUID().uuidString) throws -> ModelContainer {
        let inner = ModelConfiguration(isStoredInMemoryOnly: true)
        if observing {
            return try ModelContainer(
                for: Excursion.self, ExcursionStop.self, configurations: ObservedStoreConfiguration(name: name, inner: inner))
        }
        return try ModelContainer(
            for: Excursion.self, ExcursionStop.self,
            configurations: ForwardingStoreConfiguration(name: UUID().uuidString, inner: inner))
    }

    private func save(_ name: String, in container: ModelContainer) throws {
        let context = ModelContext(container)
        context.author = name
        context.insert(Excursion(name: name, destination: "Sintra", startDate: Self.start, price: 1))
        try context.save()
    }

    @Test func theFeedFollowsAnObservingStoreAndWaitsInIt() async throws {
        let name = UUID().uuidString
        let container = try container(observing: true, name: name)
        try save("before", in: container)
        let reader = Task {
            var authors: [String?] = []
            for try await transaction in container.historyTransactions() {
                authors.append(transaction.author)
                if authors.count == 3 { break }
            }
            return authors
        }
        // The feed has delivered "before" and waits in the store.
        let store = try #require(ObservedStore.opened.withLock { $0[name] })
        let deadline = ContinuousClock.now + .seconds(10)
        while store.waits == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(store.waits >= 1)
        try save("live 1", in: container)
        try save("live 2", in: container)
        #expect(try await reader.value == ["before", "live 1", "live 2"])
        // The store was asked to wait after the token of what the feed had delivered.
        #expect(store.waitedAfter.contains { $0 != nil })
    }

    @Test func aFeedAfterAnExpiredTokenThrows() async throws {
        let container = try container(observing: true)
        try save("a", in: container)
        try save("b", in: container)
        let context = ModelContext(container)
        let first = try #require(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).first?.token)
        try context.deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        var iterator = container.historyTransactions(after: first).makeAsyncIterator()
        await #expect(throws: SwiftDataError.historyTokenExpired) { _ = try await iterator.next() }
    }

    @Test func aFeedOverAStoreThatDoesNotObserveYieldsNothing() async throws {
        let container = try container(observing: false)
        try save("a", in: container)
        var iterator = container.historyTransactions().makeAsyncIterator()
        #expect(try await iterator.next() == nil)
    }
}

/// `ForwardingStore`'s configuration, for a store that also observes its history.
final class ObservedStoreConfiguration: DataStoreConfiguration {
    typealias Store = ObservedStore

    var name: String
    var schema: Schema?
    let inner: ModelConfiguration

    init(name: String, inner: ModelConfiguration) {
        self.name = name
        self.inner = inner
    }

    static func == (lhs: ObservedStoreConfiguration, rhs: ObservedStoreConfiguration) -> Bool { lhs.name == rhs.name }
    func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

/// A store over the built-in one whose wait looks at its history every 5 ms: as a
/// server's store would wait for a notification, counted so a test sees the feed wait.
final class ObservedStore: DataStore, HistoryObserving, @unchecked Sendable {
    typealias Configuration = ObservedStoreConfiguration
    typealias Snapshot = DefaultSnapshot

    let configuration: ObservedStoreConfiguration
    let inner: DefaultStore
    var schema: Schema { inner.schema }
    var identifier: String { inner.identifier }
    private let log = Mutex<(waits: Int, after: [DefaultHistoryToken?])>((0, []))
    var waits: Int { log.withLock { $0.waits } }
    var waitedAfter: [DefaultHistoryToken?] { log.withLock { $0.after } }

    /// The stores opened, by configuration name, for the tests that opened them.
    static let opened = Mutex<[String: ObservedStore]>([:])

    init(_ configuration: ObservedStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        self.configuration = configuration
        var inner = configuration.inner
        inner.schema = configuration.schema
        self.inner = try DefaultStore(inner, migrationPlan: migrationPlan)
        Self.opened.withLock { $0[configuration.name] = self }
    }

    func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchResult<T, DefaultSnapshot> {
        try inner.fetch(request)
    }

    func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        try inner.save(request)
    }

    static var historyType: DefaultHistoryTransaction.Type { DefaultHistoryTransaction.self }

    func fetchHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws -> [DefaultHistoryTransaction] {
        try inner.fetchHistory(descriptor)
    }

    func deleteHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws {
        try inner.deleteHistory(descriptor)
    }

    func waitForHistory(after token: DefaultHistoryToken?) async {
        log.withLock {
            $0.waits += 1
            $0.after.append(token)
        }
        let descriptor = HistoryDescriptor<DefaultHistoryTransaction>(predicate: token.map { token in
            #Predicate<DefaultHistoryTransaction> { $0.token > token }
        })
        while !Task.isCancelled, (try? inner.fetchHistory(descriptor).isEmpty) ?? false {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }
}
