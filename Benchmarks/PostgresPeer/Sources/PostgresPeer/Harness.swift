import Foundation
import Logging
import PostgresNIO

/// What one run needs of the server: its address, and new databases on it.
struct Server {
    let host: String
    let port: Int
    let user: String
    let admin: PostgresClient
    let logger: Logger

    /// `url`: a `postgres://user@host:port/database` the benchmark may create databases from.
    init(url: String, logger: Logger) throws {
        guard let parts = URLComponents(string: url), let host = parts.host, let user = parts.user else {
            throw BenchmarkFailure("not a postgres:// URL: \(url)")
        }
        self.host = host
        port = parts.port ?? 5432
        self.user = user
        self.logger = logger
        let database = parts.path.isEmpty ? "postgres" : String(parts.path.dropFirst())
        admin = PostgresClient(
            configuration: .init(host: host, port: port, username: user, password: parts.password, database: database, tls: .disable),
            backgroundLogger: logger)
    }

    func url(_ database: String) -> String { "postgres://\(user)@\(host):\(port)/\(database)" }

    /// A new, empty database; its URL.
    func makeDatabase(_ name: String) async throws -> String {
        try await admin.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
        return url(name)
    }

    /// A client of database `name` (running: `run()` is in the task returned, cancel it to close).
    func client(_ name: String) -> (PostgresClient, Task<Void, Never>) {
        let client = PostgresClient(
            configuration: .init(host: host, port: port, username: user, password: nil, database: name, tls: .disable),
            backgroundLogger: logger)
        return (client, Task { await client.run() })
    }

    /// One value of `sql`, as text.
    func value(_ sql: String) async throws -> String {
        for try await text in try await admin.query(PostgresQuery(unsafeSQL: sql), logger: logger).decode(String.self) { return text }
        return ""
    }
}

/// Runs `body` on a thread of its own (PostgresStore's calls block their thread) and
/// returns its result and how long it took.
func onThread<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> (R, Duration) {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            let clock = ContinuousClock()
            let start = clock.now
            do {
                let result = try body()
                continuation.resume(returning: (result, clock.now - start))
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }
}

/// How long `body` took, and its result. It runs detached, on the cooperative pool as
/// a server's request handlers do, not on the main actor (whose thread every await
/// would hop back to).
func timed<R: Sendable>(_ body: @escaping @Sendable () async throws -> R) async throws -> (R, Duration) {
    try await Task.detached {
        let clock = ContinuousClock()
        let start = clock.now
        let result = try await body()
        return (result, clock.now - start)
    }.value
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }
}

/// The middle value (the lower of the two middle ones for an even count).
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[(sorted.count - 1) / 2]
}

/// A time per operation, in µs or ms.
func shown(_ seconds: Double) -> String {
    seconds < 1e-3 ? String(format: "%.1f µs", seconds * 1e6) : String(format: "%.2f ms", seconds * 1e3)
}
