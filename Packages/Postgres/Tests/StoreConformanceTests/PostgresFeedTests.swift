import Foundation
import OpenSwiftDataPostgres
import SwiftData
import Synchronization
import Testing

/// The change feed across containers and processes (PostgresStore+Notifications): a
/// container's `historyTransactions(after:)` is woken by PostgreSQL's `NOTIFY` when
/// another container, or another process, saves, and delivers those saves in token
/// order, once each. While it listens the feed never polls, so a save reaches it only
/// through the notification.
@Suite(.enabled(if: PostgresServer.url != nil, "no PostgreSQL server: PostgresStore's change feed tests are skipped"))
struct PostgresFeedTests {
    private let schema = Schema([FeedNote.self])

    private func container(_ url: String) throws -> ModelContainer {
        try ModelContainer(for: schema, configurations: [try PostgresStoreConfiguration(url: url)])
    }

    private static func database(of url: String) -> String {
        String(url[url.index(after: url.lastIndex(of: "/")!)...])
    }

    /// The process ids of the sessions listening on database `url` (the feed's).
    private static func listeners(on url: String) throws -> Set<String> {
        let rows = try PostgresServer.query(
            "SELECT pid FROM pg_stat_activity WHERE datname = '\(database(of: url))' AND query LIKE 'LISTEN %'")
        return Set(rows.split(separator: "\n").map(String.init))
    }

    /// Waits up to 10 s for a listening session on `url` other than those of `old`.
    @discardableResult
    private static func waitForListener(on url: String, other old: Set<String> = []) async throws -> Set<String> {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            let now = try listeners(on: url)
            if !now.subtracting(old).isEmpty { return now }
            guard ContinuousClock.now < deadline else { throw PostgresServer.Failure(description: "the feed never listened") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// The numbers of the notes a transaction inserted, as `context` reads them.
    private static func numbers(in transaction: DefaultHistoryTransaction, _ context: ModelContext) -> [Int] {
        transaction.changes.compactMap { change -> Int? in
            guard case let .insert(insert) = change else { return nil }
            return (context.model(for: insert.changedPersistentIdentifier) as? FeedNote)?.number
        }
    }

    @Test func aFeedReceivesAnotherContainersSavesInOrderOnceEach() async throws {
        let url = try PostgresServer.makeDatabase()
        let reader = try container(url), writer = try container(url)
        let feed = Feed(reader)
        try await Self.waitForListener(on: url)
        // Three writers save at once, each note in a save of its own, pausing between
        // saves so the feed catches up and waits (on threads of their own: the feed's
        // task needs the cooperative pool).
        let writers = (0..<3).map { w in
            Saver {
                let context = ModelContext(writer)
                for i in 1...8 {
                    Thread.sleep(forTimeInterval: 0.03)
                    context.insert(FeedNote(number: w * 100 + i, text: "writer \(w)"))
                    try context.save()
                }
            }
        }
        let arrived = try await feed.wait(for: 24)
        for saver in writers { try saver.wait() }

        let tokens = arrived.map(\.transaction.token)
        #expect(tokens.count == 24)
        #expect(tokens == tokens.sorted() && Set(tokens).count == 24, "in token order, once each")
        // What the feed delivered is history as a fetch after the fact reads it.
        let context = ModelContext(reader)
        #expect(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).map(\.token) == tokens)
        let numbers = arrived.flatMap { Self.numbers(in: $0.transaction, context) }
        let expected: Set<Int> = Set((0..<3).flatMap { w -> [Int] in (1...8).map { i -> Int in w * 100 + i } })
        #expect(Set(numbers) == expected)
        // Each writer's notes come in the order it saved them.
        for w in 0..<3 {
            let own = numbers.filter { $0 / 100 == w }
            #expect(own == own.sorted())
        }
    }

    @Test func aFeedWakesOnAnotherProcesssSavesWithoutPolling() async throws {
        let url = try PostgresServer.makeDatabase()
        let reader = try container(url)
        let feed = Feed(reader)
        try await Self.waitForListener(on: url)
        // The probe saves five notes, 200 ms apart, while the feed waits (and no other
        // test holds history back meanwhile).
        let (probe, arrived, saved) = try await PostgresServer.slowTransactionTurn.run {
            let probe = try Probe(url: url, notes: 5, pauseMilliseconds: 200)
            let arrived = try await feed.wait(for: 5)
            return (probe, arrived, try probe.finish())
        }

        #expect(saved.count == 5)
        let context = ModelContext(reader)
        let delivered = arrived.flatMap { Self.numbers(in: $0.transaction, context) }
        #expect(delivered == [1, 2, 3, 4, 5], "in order, once each")
        #expect(arrived.allSatisfy { $0.transaction.author == "probe \(probe.processIdentifier)" })
        // Woken by the notification: while it listens the feed looks by itself only
        // every 30 s, and `wait(for:)` gives up after 15 s. The median allows 3 s, not
        // the few milliseconds measured alone: any transaction anywhere on the server (a
        // CREATE DATABASE of a test running beside this one) holds history back under
        // the xmin rule, a second at times on a loaded machine.
        let latencies = arrived.enumerated().compactMap { i, arrival in
            saved[i + 1].map { arrival.time.timeIntervalSince1970 - $0 }
        }
        try #require(latencies.count == 5)
        let median = latencies.sorted()[latencies.count / 2]
        #expect(median < 3, "median delivery \(median) s after the save returned")
        print("PostgresFeedTests: delivery across processes after the save returned, ms: "
            + latencies.map { String(format: "%.1f", $0 * 1000) }.joined(separator: ", "))
        // A context's next fetch sees the other process's rows.
        let notes = try context.fetch(FetchDescriptor<FeedNote>(sortBy: [SortDescriptor(\.number)]))
        #expect(notes.map(\.number) == [1, 2, 3, 4, 5])
        #expect(notes.allSatisfy { $0.text == "from another process" })
    }

    /// A save whose notification comes while an older transaction still runs is not
    /// visible yet: the feed looks again until it is, rather than waiting for the next
    /// notification.
    @Test func aNotificationThatComesBeforeItsTransactionIsVisibleIsNotLost() async throws {
        try await PostgresServer.slowTransactionTurn.run { try await notificationBeforeVisibility() }
    }

    private func notificationBeforeVisibility() async throws {
        let url = try PostgresServer.makeDatabase()
        let reader = try container(url), writer = try container(url)
        let feed = Feed(reader)
        try await Self.waitForListener(on: url)
        // Another session's transaction, older than the save, runs for 0.8 s.
        let holder = try PostgresServer.startQuery(
            "BEGIN; SELECT pg_current_xact_id(); SELECT pg_sleep(0.8); COMMIT;", on: url)
        defer { holder.waitUntilExit() }
        let sleeping = "SELECT count(*) FROM pg_stat_activity WHERE datname = '\(Self.database(of: url))' AND wait_event = 'PgSleep'"
        let deadline = Date().addingTimeInterval(10)
        while try PostgresServer.query(sleeping) != "1", Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
        let context = ModelContext(writer)
        context.insert(FeedNote(number: 1, text: "held back"))
        try context.save()
        let savedAt = Date()

        let arrived = try await feed.wait(for: 1)
        let arrival = try #require(arrived.first)
        #expect(arrived.count == 1)
        #expect(Self.numbers(in: arrival.transaction, ModelContext(reader)) == [1])
        // Delivered once the older transaction ended, not when the notification came.
        #expect(arrival.time.timeIntervalSince(savedAt) > 0.4)
    }

    /// The listening connection, terminated, is opened again, and the feed goes on.
    @Test func theFeedListensAgainWhenItsConnectionDrops() async throws {
        let url = try PostgresServer.makeDatabase()
        let reader = try container(url), writer = try container(url)
        let feed = Feed(reader)
        let first = try await Self.waitForListener(on: url)
        let context = ModelContext(writer)
        context.insert(FeedNote(number: 1, text: "before"))
        try context.save()
        _ = try await feed.wait(for: 1)

        _ = try PostgresServer.query(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE pid IN (\(first.joined(separator: ",")))")
        let second = try await Self.waitForListener(on: url, other: first)
        #expect(second.isDisjoint(with: first))
        context.insert(FeedNote(number: 2, text: "after"))
        try context.save()
        let arrived = try await feed.wait(for: 2)
        let numbers = arrived.flatMap { Self.numbers(in: $0.transaction, ModelContext(reader)) }
        #expect(numbers == [1, 2])
    }
}

/// A note; the probe process (Tests/PostgresFeedProbe) declares the same model.
@Model final class FeedNote {
    var number: Int
    var text: String

    init(number: Int, text: String) {
        self.number = number
        self.text = text
    }
}

/// A container's change feed followed in a task, and when each transaction came.
private final class Feed: Sendable {
    struct Arrival: Sendable {
        let transaction: DefaultHistoryTransaction
        let time: Date
    }

    private final class Log: Sendable {
        let arrivals = Mutex<[Arrival]>([])
    }

    private let log = Log()
    private let task: Task<Void, any Error>

    init(_ container: ModelContainer) {
        task = Task { [log] in
            for try await transaction in container.historyTransactions() {
                let now = Date()
                log.arrivals.withLock { $0.append(Arrival(transaction: transaction, time: now)) }
            }
        }
    }

    deinit { task.cancel() }

    /// The arrivals once there are `count`, waiting up to 15 s (then what came).
    func wait(for count: Int) async throws -> [Arrival] {
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            let now = log.arrivals.withLock { $0 }
            if now.count >= count { return now }
            try await Task.sleep(for: .milliseconds(5))
        }
        return log.arrivals.withLock { $0 }
    }
}

/// Saves on a thread of its own.
private final class Saver: Sendable {
    private let failure = Mutex<String?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(_ body: @escaping @Sendable () throws -> Void) {
        Thread {
            do { try body() } catch { self.failure.withLock { $0 = "\(error)" } }
            self.done.signal()
        }.start()
    }

    func wait() throws {
        done.wait()
        if let failure = failure.withLock({ $0 }) { throw PostgresServer.Failure(description: failure) }
    }
}

/// The probe process (Tests/PostgresFeedProbe) saving notes to a database.
private final class Probe {
    private let process: Process
    private let output = Pipe()
    private let errors = Pipe()

    var processIdentifier: Int32 { process.processIdentifier }

    init(url: String, notes: Int, pauseMilliseconds: Int) throws {
        let folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        guard let executable = [folder, folder.deletingLastPathComponent()]
            .map({ $0.appendingPathComponent("PostgresFeedProbe") })
            .first(where: { FileManager.default.isExecutableFile(atPath: $0.path) })
        else { throw PostgresServer.Failure(description: "no PostgresFeedProbe beside \(folder.path)") }
        process = Process()
        process.executableURL = executable
        process.arguments = [url, String(notes), String(pauseMilliseconds)]
        process.standardOutput = output
        process.standardError = errors
        try process.run()
    }

    /// Once the probe has ended: when each note's save returned (seconds since 1970), by number.
    func finish() throws -> [Int: Double] {
        let lines = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
        let failure = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw PostgresServer.Failure(description: "the probe failed (\(process.terminationStatus)): \(failure)")
        }
        var saved: [Int: Double] = [:]
        for line in lines where line.hasPrefix("saved ") {
            let parts = line.split(separator: " ")
            if parts.count == 3, let number = Int(parts[1]), let time = Double(parts[2]) { saved[number] = time }
        }
        return saved
    }
}
