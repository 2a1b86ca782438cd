import Foundation
import OpenSwiftDataPostgres
import SwiftData
import Testing

/// The stores the conformance suite runs over: each test takes every available kind
/// as an argument, so one suite runs over the embedded store and over PostgreSQL,
/// alone and with a read replica serving fetches.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case embedded
    case postgres
    /// PostgreSQL with a hot standby as read replica (`.store` consistency, the default).
    case postgresReplica

    var testDescription: String { rawValue }

    /// The kinds this machine can run: PostgreSQL when a server started, with a
    /// replica when the tests started that server (a standby streams from it).
    static var available: [StoreKind] {
        guard PostgresServer.url != nil else { return [.embedded] }
        guard (ProcessInfo.processInfo.environment["OSD_POSTGRES_URL"] ?? "").isEmpty else { return [.embedded, .postgres] }
        return [.embedded, .postgres, .postgresReplica]
    }

    /// A new, empty place to keep models, which `container(_:)` opens as often as asked.
    func makeLocation() throws -> StoreLocation {
        switch self {
        case .embedded:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("osd-conformance-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            return StoreLocation(kind: self, address: folder.appendingPathComponent("models.store").path)
        case .postgres:
            return StoreLocation(kind: self, address: try PostgresServer.makeDatabase())
        case .postgresReplica:
            let database = try PostgresServer.makeDatabase()
            let port = try #require(URLComponents(string: try PostgresServer.replicaURL(of: database))?.port)
            return StoreLocation(kind: self, address: database + "?replica=127.0.0.1:\(port)")
        }
    }
}

/// A document file or a database: where one test keeps its models.
struct StoreLocation {
    let kind: StoreKind
    let address: String

    /// A container over the location, as an app would open it.
    func container(_ types: any PersistentModel.Type...) throws -> ModelContainer {
        let schema = Schema(types)
        switch kind {
        case .embedded:
            return try ModelContainer(for: schema, configurations: [ModelConfiguration(url: URL(fileURLWithPath: address))])
        case .postgres:
            return try ModelContainer(for: schema, configurations: [try PostgresStoreConfiguration(url: address)])
        case .postgresReplica:
            // Another process opening the database later: the standby has replayed
            // what earlier containers saved (across processes, reads from a replica
            // are eventually consistent).
            try PostgresServer.replicaCaughtUp()
            return try ModelContainer(for: schema, configurations: [try PostgresStoreConfiguration(url: address)])
        }
    }

    func remove() {
        if kind == .embedded { try? FileManager.default.removeItem(at: URL(fileURLWithPath: address).deletingLastPathComponent()) }
    }
}

/// Says whether the PostgresStore cases ran, so a machine without a server shows a
/// skipped test with the reason rather than a suite that quietly ran less. With
/// `OSD_REQUIRE_POSTGRES=1` (CI sets it) a missing server fails instead.
@Suite struct StoreKindTests {
    static let postgresRequired = ProcessInfo.processInfo.environment["OSD_REQUIRE_POSTGRES"] == "1"

    @Test(.enabled(if: PostgresServer.url != nil || postgresRequired, "no PostgreSQL server: the PostgresStore cases of StoreConformanceTests are skipped (install Debian's postgresql, or set OSD_POSTGRES_URL)"))
    func postgresCasesRun() throws {
        if PostgresServer.url == nil, case let .failure(failure) = PostgresServer.shared {
            Issue.record("OSD_REQUIRE_POSTGRES is set and PostgreSQL could not be started: \(failure)")
        }
        let url = try #require(PostgresServer.url)
        #expect(url.hasPrefix("postgres://"))
        #expect(StoreKind.available.contains(.postgres))
    }
}
