import Foundation
import SwiftData
import Testing

/// Issue #14, point 3: the change feed, beyond SwiftData.
@Suite struct HistoryFeedTests {
    private func container() throws -> ModelContainer {
        try ModelContainer(for: Flight.self, Leg.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    }

    /// Saves one flight through a context of its own, as another task would.
    private func save(_ ref: String, in container: ModelContainer) throws {
        let context = ModelContext(container)
        context.author = ref
        context.insert(Flight(airlineBookingRef: ref, destination: "Oslo", flightTime: 60))
        try context.save()
    }

    @Test func theFeedDeliversWhatFollowsTheTokenThenEachNewCommit() async throws {
        let container = try container()
        try save("before", in: container)
        let token = try #require(try ModelContext(container).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).last?.token)
        try save("after the token", in: container)

        let reader = Task {
            var authors: [String?] = []
            for try await transaction in container.historyTransactions(after: token) {
                authors.append(transaction.author)
                #expect(transaction.changes.count == 1)
                if authors.count == 3 { break }
            }
            return authors
        }
        // Commits while the reader waits, from another task.
        try await Task.sleep(for: .milliseconds(50))
        try await Task.detached { try save("live 1", in: container) }.value
        try save("live 2", in: container)
        #expect(try await reader.value == ["after the token", "live 1", "live 2"])
    }

    @Test func withoutATokenTheFeedStartsAtTheOldestTransaction() async throws {
        let container = try container()
        for ref in ["a", "b"] { try save(ref, in: container) }
        var iterator = container.historyTransactions().makeAsyncIterator()
        #expect(try await iterator.next()?.author == "a")
        #expect(try await iterator.next()?.author == "b")
    }

    @Test func theFeedWaitsForCommitsUntilItsTaskIsCancelled() async throws {
        let container = try container()
        try save("a", in: container)
        let delivered = Delivered()
        let reader = Task {
            for try await transaction in container.historyTransactions() { delivered.add(transaction.author) }
            return delivered.authors
        }
        try await delivered.wait(for: 1)
        // The reader is waiting now: a later commit reaches it.
        try save("b", in: container)
        try await delivered.wait(for: 2)
        reader.cancel()
        #expect(try await reader.value == ["a", "b"])
    }

    /// What a reader task delivered, for the test to wait on.
    private final class Delivered: @unchecked Sendable {
        private let lock = NSLock()
        private var seen: [String?] = []

        func add(_ author: String?) { lock.withLock { seen.append(author) } }
        var authors: [String?] { lock.withLock { seen } }

        /// Waits (up to 10 s) until `count` transactions arrived.
        func wait(for count: Int) async throws {
            for _ in 0..<1_000 where authors.count < count { try await Task.sleep(for: .milliseconds(10)) }
            #expect(authors.count == count)
        }
    }

    @Test func historyDeletedBeforeItWasDeliveredExpiresTheFeed() async throws {
        let container = try container()
        try save("a", in: container)
        let context = ModelContext(container)
        let first = try #require(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).first?.token)
        try save("b", in: container)
        try save("c", in: container)

        // Deleting what the feed delivered already costs it nothing.
        var keepsUp = container.historyTransactions(after: first).makeAsyncIterator()
        #expect(try await keepsUp.next()?.author == "b")
        try context.deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.author == "a" }))
        #expect(try await keepsUp.next()?.author == "c")

        // Deleting what it has not read yet expires it.
        var behind = container.historyTransactions(after: first).makeAsyncIterator()
        try context.deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.author == "b" }))
        await #expect(throws: SwiftDataError.historyTokenExpired) { _ = try await behind.next() }
    }
}
