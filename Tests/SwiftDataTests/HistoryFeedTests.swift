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

    @Test func cancellingTheTaskEndsTheFeed() async throws {
        let container = try container()
        let reader = Task {
            var count = 0
            for try await _ in container.historyTransactions() { count += 1 }
            return count
        }
        try await Task.sleep(for: .milliseconds(50))
        reader.cancel()
        #expect(try await reader.value == 0)
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
