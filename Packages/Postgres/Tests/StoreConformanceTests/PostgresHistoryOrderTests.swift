import Foundation
import OpenSwiftDataPostgres
import SwiftData
import Synchronization
import Testing

/// History under saves that run at once (PostgresStore+History): a reader following
/// `fetchHistory` after its last token gets every transaction exactly once, in token
/// order, never one below a token it already has, even when a save that began
/// earlier (an earlier transaction id) commits later; and saves that write the same
/// row appear in the order they wrote it.
@Suite(.enabled(if: PostgresServer.url != nil, "no PostgreSQL server: PostgresStore's history order tests are skipped"))
struct PostgresHistoryOrderTests {
    private let schema = Schema([Voyage.self, Leg.self, Traveller.self])

    private func container(_ url: String) throws -> ModelContainer {
        try ModelContainer(for: schema, configurations: [try PostgresStoreConfiguration(url: url)])
    }

    private func voyage(_ code: String) -> Voyage {
        Voyage(code: code, destination: "Faro", startDate: StoreConformanceTests.start, price: 1, seats: 1)
    }

    private func after(_ token: DefaultHistoryToken?) -> HistoryDescriptor<DefaultHistoryTransaction> {
        guard let token else { return HistoryDescriptor<DefaultHistoryTransaction>() }
        return HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > token })
    }

    /// Polls `condition` (psql's answer) until it holds, for up to 10 s.
    private func waitFor(_ sql: String, toBe expected: String) throws {
        let deadline = Date().addingTimeInterval(10)
        while try PostgresServer.query(sql) != expected {
            guard Date() < deadline else { throw PostgresServer.Failure(description: "\(sql) never gave \(expected)") }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    @Test func aSaveThatBeganEarlierAndCommitsLaterIsNotSkipped() throws {
        // (Its 3 s transaction would delay the change feed's timed tests.)
        try PostgresServer.slowTransactionTurn.run { try saveBeganEarlierCommitsLater() }
    }

    private func saveBeganEarlierCommitsLater() throws {
        let url = try PostgresServer.makeDatabase()
        let database = String(url[url.index(after: url.lastIndex(of: "/")!)...])
        let early = try container(url), late = try container(url)
        let seed = ModelContext(early)
        seed.insert(voyage("B"))
        try seed.save()
        let follower = ModelContext(try container(url))
        var token = try #require(try follower.fetchHistory(after(nil)).last?.token)

        // Another session holds voyage B's row for 3 s.
        let holder = try PostgresServer.startQuery(
            "BEGIN; SELECT 1 FROM \"Voyage\" WHERE code = 'B' FOR UPDATE; SELECT pg_sleep(3); COMMIT;", on: url)
        defer { holder.waitUntilExit() }
        try waitFor("SELECT count(*) FROM pg_stat_activity WHERE datname = '\(database)' AND wait_event = 'PgSleep'", toBe: "1")
        // The first save inserts (which gives its transaction its id), then waits for
        // B. (On a thread of its own: the test's tasks may have the cooperative pool's.)
        let first = Outcome()
        Thread {
            first.finish {
                let context = ModelContext(early)
                context.insert(Voyage(code: "N1", destination: "Faro", startDate: StoreConformanceTests.start, price: 1, seats: 1))
                let b = try #require(try context.fetch(FetchDescriptor<Voyage>(predicate: #Predicate { $0.code == "B" })).first)
                b.price = 99
                try context.save()
            }
        }.start()
        try waitFor(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = '\(database)' AND wait_event_type = 'Lock'", toBe: "1")
        // The second begins later and commits first.
        let second = ModelContext(late)
        second.insert(voyage("N2"))
        try second.save()

        // The follower reads on meanwhile, as a feed does, and moves its token on.
        var both = try follower.fetchHistory(after(token))
        token = both.last?.token ?? token
        try first.wait()
        both += try follower.fetchHistory(after(token))
        let codes = both.map { transaction in
            transaction.changes.compactMap { change -> String? in
                guard case let .insert(insert) = change else { return nil }
                return (follower.model(for: insert.changedPersistentIdentifier) as? Voyage)?.code
            }
        }
        // In token order: the earlier transaction's id first, though it committed last.
        #expect(codes == [["N1"], ["N2"]])
        #expect(both.map(\.token) == both.map(\.token).sorted())
        token = try #require(both.last?.token)
        #expect(try follower.fetchHistory(after(token)).isEmpty)
    }

    @Test func aFollowerGetsEveryConcurrentSaveOnceInAnOrderConsistentWithCommits() async throws {
        // (Its last read waits for history for 1 s at most: not while another test
        // holds it back for longer.)
        try await PostgresServer.slowTransactionTurn.run { try await followConcurrentSaves() }
    }

    private func followConcurrentSaves() async throws {
        let url = try PostgresServer.makeDatabase()
        let container = try container(url)
        let seed = ModelContext(container)
        seed.insert(voyage("HOT"))
        try seed.save()
        let follower = HistoryFollower(modelContainer: try self.container(url))
        let desks = (0..<8).map { _ in VoyageDesk(modelContainer: container) }
        let writing = Flag()
        let followed = try await withThrowingTaskGroup(of: [DefaultHistoryTransaction].self) { group in
            group.addTask {
                var got: [DefaultHistoryTransaction] = []
                while writing.isSet {
                    got += try await follower.next()
                    try await Task.sleep(for: .milliseconds(5))
                }
                return got + (try await follower.next())
            }
            try await withThrowingTaskGroup(of: Void.self) { writers in
                for (writer, desk) in desks.enumerated() {
                    // Each save inserts a voyage and adds a leg of its code to HOT.
                    writers.addTask { try await desk.bookAndMark((0..<6).map { "F\(writer)-\($0)" }, hot: "HOT") }
                }
                try await writers.waitForAll()
            }
            writing.clear()
            return try await group.reduce(into: []) { $0 += $1 }
        }

        let context = ModelContext(container)
        let all = try context.fetchHistory(after(nil))
        #expect(all.count == 1 + 8 * 6)
        // Exactly once each, none skipped, in token order.
        #expect(followed.map(\.token) == all.map(\.token))
        #expect(zip(followed, followed.dropFirst()).allSatisfy { $0.token < $1.token })
        // Saves that wrote one row appear in the order they wrote it: each appended
        // its leg to HOT's list, which holds them in the order of the writes.
        let hot = try #require(try context.fetch(FetchDescriptor<Voyage>(predicate: #Predicate { $0.code == "HOT" })).first)
        let legsInHistory = all.flatMap { transaction in
            transaction.changes.compactMap { change -> String? in
                guard case let .insert(insert) = change else { return nil }
                return (context.model(for: insert.changedPersistentIdentifier) as? Leg)?.title
            }
        }
        #expect(hot.legs.count == 8 * 6)
        #expect(legsInHistory == hot.legs.map(\.title))
    }
}

/// A flag one task clears and another reads.
private final class Flag: Sendable {
    private let state = Mutex(true)
    var isSet: Bool { state.withLock { $0 } }
    func clear() { state.withLock { $0 = false } }
}

/// How work on another thread ended, waited for.
private final class Outcome: Sendable {
    private let failure = Mutex<String?>(nil)
    private let done = DispatchSemaphore(value: 0)

    func finish(_ body: () throws -> Void) {
        do { try body() } catch { failure.withLock { $0 = "\(error)" } }
        done.signal()
    }

    func wait() throws {
        done.wait()
        if let failure = failure.withLock({ $0 }) { throw PostgresServer.Failure(description: failure) }
    }
}

/// A reader of history on an actor of its own, following it token by token.
@ModelActor
actor HistoryFollower {
    private var token: DefaultHistoryToken?

    /// The transactions after the last one it returned.
    func next() throws -> [DefaultHistoryTransaction] {
        var descriptor = HistoryDescriptor<DefaultHistoryTransaction>()
        if let token { descriptor.predicate = #Predicate { $0.token > token } }
        let transactions = try modelContext.fetchHistory(descriptor)
        if let last = transactions.last { token = last.token }
        return transactions
    }
}

extension VoyageDesk {
    /// Inserts a voyage of each code and a leg of it on voyage `hot`, one save each.
    func bookAndMark(_ codes: [String], hot: String) throws {
        for code in codes {
            modelContext.insert(Voyage(code: code, destination: "Porto", startDate: StoreConformanceTests.start, price: 1, seats: 0))
            let marked = try #require(try modelContext.fetch(FetchDescriptor<Voyage>(predicate: #Predicate { $0.code == hot })).first)
            let leg = Leg(title: code, order: 0)
            modelContext.insert(leg)
            leg.voyage = marked
            try modelContext.save()
        }
    }
}
