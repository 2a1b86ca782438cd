import Foundation
import Logging
import OpenSwiftDataPostgres
import SwiftData
import Testing

/// What PostgresStore says about where it connects: errors name the server but never
/// the password, and an app's own logger receives the store's records.
@Suite struct PostgresConfigurationTests {
    @Test func passwordsNeverReachErrorsOrRedactedText() {
        #expect(PostgresStoreConfiguration.redacted("postgres://app:s3cret@db.example:6543/trips") == "postgres://app:***@db.example:6543/trips")
        #expect(PostgresStoreConfiguration.redacted("postgres://app@db.example/trips") == "postgres://app@db.example/trips")
        // Odd characters (a space, a second @) still leave no part of the password.
        for odd in ["postgres://app:s3 cret@db/x", "postgres://app:s3@cret@db/x", "postgres://app:s3%zzcret@db/x"] {
            let shown = PostgresStoreConfiguration.redacted(odd)
            #expect(!shown.contains("s3") && !shown.contains("cret"), "\(odd) → \(shown)")
            #expect(shown.hasSuffix("@db/x"), "\(odd) → \(shown)")
        }
        // No host: invalid, and the error names the URL without its password.
        #expect(throws: PostgresStoreError.invalidURL("postgres://app:***@/trips")) {
            try PostgresStoreConfiguration(url: "postgres://app:s3cret@/trips")
        }
    }

    /// `replica=host[:port]`, once per read replica; a wrong one is an invalid URL.
    @Test func replicaParametersNameReadReplicas() throws {
        let configuration = try PostgresStoreConfiguration(
            url: "postgres://app:pw@primary:5433/trips?replica=standby1:6432&sslmode=disable&replica=standby2")
        #expect(configuration.readReplicas == [.init(host: "standby1", port: 6432), .init(host: "standby2", port: 5432)])
        #expect(configuration.replicaConsistency == .store)
        // Replicas say how to reach the database, not which it is.
        #expect(configuration == (try PostgresStoreConfiguration(url: "postgres://app@primary:5433/trips")))
        #expect(try PostgresStoreConfiguration(url: "postgres://app@primary/trips").readReplicas.isEmpty)
        for wrong in ["replica=", "replica=:5432", "replica=standby:0", "replica=standby:x", "replica=a:1:2"] {
            #expect(throws: PostgresStoreError.self, "\(wrong)") {
                try PostgresStoreConfiguration(url: "postgres://app:pw@primary/trips?\(wrong)")
            }
        }
        #expect(throws: PostgresStoreError.invalidURL("postgres://app:***@primary/trips?replica=standby:99999 (replica port '99999' is not in 1...65535)")) {
            try PostgresStoreConfiguration(url: "postgres://app:pw@primary/trips?replica=standby:99999")
        }
    }

    /// A server that cannot be reached: the error names user, host, port and database.
    @Test func aConnectionErrorNamesTheServer() throws {
        let nowhere = PostgresStoreConfiguration(port: 1, username: "osd", password: "s3cret", database: "trips")
        #expect {
            try ModelContainer(for: Schema([Voyage.self, Leg.self, Traveller.self]), configurations: [nowhere])
        } throws: { error in
            let text = String(describing: error)
            return text.contains("osd@127.0.0.1:1/trips") && !text.contains("s3cret")
        }
    }

    @Test(.enabled(if: PostgresServer.url != nil, "no PostgreSQL server"))
    func theAppsLoggerReceivesTheStoresRecords() throws {
        let records = LogRecords()
        var logger = Logger(label: "app") { _ in RecordingHandler(records: records) }
        logger.logLevel = .trace
        let url = try PostgresServer.makeDatabase()
        let container = try ModelContainer(
            for: Schema([Voyage.self, Leg.self, Traveller.self]), configurations: [try PostgresStoreConfiguration(url: url, logger: logger)])
        let context = ModelContext(container)
        context.insert(Voyage(code: "L1", destination: "Lisbon", startDate: StoreConformanceTests.start, price: 1, seats: 1))
        try context.save()
        #expect(records.count > 0)
    }
}

/// Log records counted by a handler the test installs.
final class LogRecords: @unchecked Sendable {
    private let lock = NSLock()
    private var seen = 0
    var count: Int { lock.withLock { seen } }
    func add() { lock.withLock { seen += 1 } }
}

struct RecordingHandler: LogHandler {
    let records: LogRecords
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) { records.add() }
}
