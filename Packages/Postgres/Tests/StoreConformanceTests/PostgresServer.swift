import Foundation
import Synchronization

/// The PostgreSQL server the PostgresStore cases run against: started once per test
/// process by `Scripts/postgres-test-server.sh` from the system's packages (or named
/// by `OSD_POSTGRES_URL`); the script's watcher stops it and deletes its folder when
/// this process ends, however it ends. Without server binaries the PostgresStore
/// cases are skipped, and `StoreKindTests` says so.
enum PostgresServer {
    struct Running: Sendable {
        let url: String
        let folder: String?
    }

    /// The server, or why there is none.
    static let shared: Result<Running, Failure> = start()

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static var url: String? { try? shared.get().url }

    /// The CA certificate that signed the server's (the script's FOLDER/tls/ca.crt, or
    /// `OSD_POSTGRES_CA` beside `OSD_POSTGRES_URL`): nil when the server has no TLS.
    static var caCertificate: String? {
        if let ca = ProcessInfo.processInfo.environment["OSD_POSTGRES_CA"], !ca.isEmpty { return ca }
        guard let folder = try? shared.get().folder else { return nil }
        let path = folder + "/tls/ca.crt"
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    /// One value of `sql`'s result, run by psql on the server's first database.
    static func query(_ sql: String) throws -> String {
        let base = try shared.get().url
        let (status, output) = shell([psql, base, "-v", "ON_ERROR_STOP=1", "-At", "-c", sql])
        guard status == 0 else { throw Failure(description: "\(sql) failed: \(output)") }
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Starts psql running `sql` on database `url` and returns at once: a session
    /// that holds locks while the tests go on (end it with `waitUntilExit()`).
    static func startQuery(_ sql: String, on url: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [psql, url, "-v", "ON_ERROR_STOP=1", "-q", "-c", sql]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// A turn for the tests that hold a transaction open for seconds, and those that
    /// time how soon history shows: such a transaction holds back what history every
    /// database on the server shows (the xmin rule, PostgresStore+History, is the
    /// server's), so they take this turn one at a time.
    static let slowTransactionTurn = Turn()

    final class Turn: Sendable {
        private let taken = Mutex(false)

        private func take() -> Bool {
            taken.withLock { taken in
                if taken { return false }
                taken = true
                return true
            }
        }

        /// Runs `body` in the turn, waiting for it on this thread.
        func run<R>(_ body: () throws -> R) rethrows -> R {
            while !take() { Thread.sleep(forTimeInterval: 0.01) }
            defer { taken.withLock { $0 = false } }
            return try body()
        }

        /// Runs `body` in the turn, waiting for it without holding a thread.
        func run<R>(_ body: () async throws -> R) async throws -> R {
            while !take() { try await Task.sleep(for: .milliseconds(10)) }
            defer { taken.withLock { $0 = false } }
            return try await body()
        }
    }

    /// The repository's script (this package sits at Packages/Postgres in it).
    private static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Scripts/postgres-test-server.sh").path

    private static func start() -> Result<Running, Failure> {
        if let url = ProcessInfo.processInfo.environment["OSD_POSTGRES_URL"], !url.isEmpty {
            return .success(Running(url: url, folder: nil))
        }
        let (status, output) = shell(["bash", script, "start", "--watch", String(ProcessInfo.processInfo.processIdentifier)])
        guard status == 0 else {
            return .failure(Failure(description: "no PostgreSQL server (\(output.trimmingCharacters(in: .whitespacesAndNewlines)))"))
        }
        let parts = output.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ").map(String.init)
        guard parts.count == 2 else { return .failure(Failure(description: "unexpected output of the server script: \(output)")) }
        return .success(Running(url: parts[0], folder: parts[1]))
    }

    /// A hot standby of the server (`postgres-test-server.sh replica`), started the
    /// first time a test asks, stopped with this process; nil with `OSD_POSTGRES_URL`
    /// (a server this process did not start) or when it could not start.
    static let replica: Result<Running, Failure> = startReplica()

    private static func startReplica() -> Result<Running, Failure> {
        guard case let .success(primary) = shared, primary.folder != nil else {
            return .failure(Failure(description: "no primary started by the test script"))
        }
        let (status, output) = shell(["bash", script, "replica", primary.url, "--watch", String(ProcessInfo.processInfo.processIdentifier)])
        guard status == 0 else { return .failure(Failure(description: "no standby (\(output))")) }
        let parts = output.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ").map(String.init)
        guard parts.count == 2 else { return .failure(Failure(description: "unexpected output of the server script: \(output)")) }
        return .success(Running(url: parts[0], folder: parts[1]))
    }

    /// The standby's URL for database `url` of the primary.
    static func replicaURL(of url: String) throws -> String {
        let standby = try replica.get().url
        return String(standby[..<standby.lastIndex(of: "/")!] + url[url.lastIndex(of: "/")!...])
    }

    /// Waits until the standby has replayed everything the primary has written so far.
    static func replicaCaughtUp() throws {
        let standby = try replica.get().url
        // The end of the last record: where the standby's replay stops. The insert
        // position is past the next page's header when a record ended a page (24
        // bytes, 40 at the start of a 16 MiB segment), and no replay reaches it until
        // more is written.
        let written = try query(
            "SELECT CASE WHEN (l - '0/0') % 16777216 = 40 THEN l - 40 WHEN (l - '0/0') % 8192 = 24 THEN l - 24 ELSE l END"
                + " FROM pg_current_wal_insert_lsn() AS l")
        let deadline = Date().addingTimeInterval(20)
        while try query("SELECT pg_last_wal_replay_lsn() >= '\(written)'::pg_lsn", on: standby) != "t" {
            guard Date() < deadline else { throw Failure(description: "the standby did not replay to \(written)") }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    /// One value of `sql`'s result, run by psql on database `url`.
    static func query(_ sql: String, on url: String) throws -> String {
        let (status, output) = shell([psql, url, "-v", "ON_ERROR_STOP=1", "-At", "-c", sql])
        guard status == 0 else { throw Failure(description: "\(sql) failed: \(output)") }
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A new, empty database on the server, for one test: its URL.
    static func makeDatabase() throws -> String {
        let base = try shared.get().url
        let name = "osd_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let (status, output) = shell([psql, base, "-v", "ON_ERROR_STOP=1", "-q", "-c", "CREATE DATABASE \(name)"])
        guard status == 0 else { throw Failure(description: "CREATE DATABASE failed: \(output)") }
        guard let slash = base.lastIndex(of: "/") else { throw Failure(description: "unexpected URL \(base)") }
        return base[..<slash] + "/" + name
    }

    /// The newest installed version's client (versions compare as numbers: 9.6 < 16).
    private static var psql: String {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        let newest = versions.max { ($0.split(separator: ".").compactMap { Int($0) }).lexicographicallyPrecedes($1.split(separator: ".").compactMap { Int($0) }) }
        return newest.map { "/usr/lib/postgresql/\($0)/bin/psql" } ?? "psql"
    }

    static func shell(_ arguments: [String]) -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        do {
            try process.run()
        } catch {
            return (-1, "\(error)")
        }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
