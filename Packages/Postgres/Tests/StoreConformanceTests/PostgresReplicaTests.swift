import Foundation
import OpenSwiftDataPostgres
import SwiftData
import Testing

/// Fetches served by a hot standby (`PostgresStoreConfiguration.readReplicas`): what a
/// context reads while the standby lags (its replay paused), read-your-writes for the
/// context that saved (or the whole store), and a standby that is down.
///
/// The standby streams from the test server (`postgres-test-server.sh replica`), so
/// the suite needs a server the tests started, not one named by `OSD_POSTGRES_URL`.
@Suite(
    .enabled(
        if: PostgresServer.url != nil && (ProcessInfo.processInfo.environment["OSD_POSTGRES_URL"] ?? "").isEmpty,
        "no PostgreSQL server started by the tests: PostgresStore's replica tests are skipped"),
    // One standby for the suite, and pausing its replay is the standby's, not a database's.
    .serialized)
struct PostgresReplicaTests {
    private let schema = Schema([Voyage.self, Leg.self, Traveller.self])

    /// A new database, a container over it that reads from the standby, and the
    /// database's URL on the primary and on the standby.
    private func database(
        consistency: PostgresStoreConfiguration.ReplicaConsistency = .context
    ) throws -> (primary: String, standby: String, container: ModelContainer) {
        let primary = try PostgresServer.makeDatabase()
        let standby = try PostgresServer.replicaURL(of: primary)
        let port = try #require(URLComponents(string: standby)?.port)
        var configuration = try PostgresStoreConfiguration(url: primary + "?replica=127.0.0.1:\(port)")
        configuration.replicaConsistency = consistency
        let container = try ModelContainer(for: schema, configurations: [configuration])
        // The standby has the database and its tables before a test reads from it,
        // and a connection to it (opening one under load must not pass for a standby
        // that is down).
        try PostgresServer.replicaCaughtUp()
        _ = try ModelContext(container).fetchCount(FetchDescriptor<Voyage>())
        return (primary, standby, container)
    }

    /// Runs `body` with the standby's replay paused: it serves reads as of the pause.
    private func whileTheStandbyLags(_ body: () throws -> Void) throws {
        let standby = try PostgresServer.replica.get().url
        _ = try PostgresServer.query("SELECT pg_wal_replay_pause()", on: standby)
        defer { _ = try? PostgresServer.query("SELECT pg_wal_replay_resume()", on: standby) }
        try body()
    }

    private func voyage(_ code: String) -> Voyage {
        Voyage(code: code, destination: "Lisbon", startDate: Date(timeIntervalSinceReferenceDate: 0), price: 100, seats: 2)
    }

    /// Another app server: a container over the same database with no replicas.
    private func otherServer(_ url: String) throws -> ModelContainer {
        try ModelContainer(for: schema, configurations: [try PostgresStoreConfiguration(url: url)])
    }

    private func codes(in context: ModelContext) throws -> Set<String> {
        Set(try context.fetch(FetchDescriptor<Voyage>()).map(\.code))
    }

    @Test func aContextReadsItsOwnSavesWhileTheStandbyLagsAndOthersReadTheStandby() throws {
        let (url, _, container) = try database()
        let first = ModelContext(container)
        first.insert(voyage("A"))
        try first.save()
        try PostgresServer.replicaCaughtUp()
        try whileTheStandbyLags {
            // Another server's save: on the primary only, while the standby is paused.
            let other = ModelContext(try otherServer(url))
            other.insert(voyage("B"))
            try other.save()

            // A context that never saved reads the standby: A, not yet B.
            let reader = ModelContext(container)
            #expect(try codes(in: reader) == ["A"])
            #expect(try reader.fetchCount(FetchDescriptor<Voyage>()) == 1)

            // The context that saves C reads from the primary until the standby has
            // replayed its save: C and B with it.
            let writer = ModelContext(container)
            writer.insert(voyage("C"))
            try writer.save()
            #expect(try ModelContext(container).fetchCount(FetchDescriptor<Voyage>()) == 1)
            #expect(try writer.fetchCount(FetchDescriptor<Voyage>()) == 3)
            #expect(try writer.fetchIdentifiers(FetchDescriptor<Voyage>(predicate: #Predicate { $0.code == "C" })).count == 1)
            #expect(try codes(in: writer) == ["A", "B", "C"])
        }
        try PostgresServer.replicaCaughtUp()
        // Replayed: every context sees every save.
        #expect(try codes(in: ModelContext(container)) == ["A", "B", "C"])
    }

    /// `.store`: once any context of the container saved, no context reads a standby
    /// that has not replayed that save.
    @Test func storeConsistencyShowsEveryContextTheContainersSaves() throws {
        let (url, _, container) = try database(consistency: .store)
        try whileTheStandbyLags {
            let other = ModelContext(try otherServer(url))
            other.insert(voyage("B"))
            try other.save()
            // No save through this container since the pause: the standby serves.
            #expect(try codes(in: ModelContext(container)).isEmpty)

            let writer = ModelContext(container)
            writer.insert(voyage("X"))
            try writer.save()
            // Another context of the container: the primary serves it now.
            #expect(try codes(in: ModelContext(container)) == ["B", "X"])
        }
    }

    /// A standby that cannot be reached costs a fetch its patience (1 s), then it rests
    /// and the primary serves: nothing fails and nothing is missed.
    @Test func aStandbyThatIsDownLeavesFetchesToThePrimary() throws {
        let url = try PostgresServer.makeDatabase()
        // Port 1 on loopback: nothing listens, every connection is refused.
        let container = try ModelContainer(
            for: schema, configurations: [try PostgresStoreConfiguration(url: url + "?replica=127.0.0.1:1")])
        let context = ModelContext(container)
        context.insert(voyage("A"))
        try context.save()
        #expect(try codes(in: ModelContext(container)) == ["A"])
        #expect(try codes(in: context) == ["A"])
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Voyage>()) == 1)
    }
}
