import ArgumentParser
import Foundation
import Logging
import SwiftData
import TripsAPI

/// `swift run TripsServer [--host 127.0.0.1] [--port 8080] [--store trips.store | --store postgres://user@host/db]`
///
/// SIGINT or SIGTERM stops it gracefully: requests in flight finish, then the
/// document is compacted (every request saved already).
@main
struct TripsServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "TripsServer",
        abstract: "A JSON API of trips over OpenSwiftData: a document file or PostgreSQL.",
        discussion: """
            Each option's default comes from its environment variable when that is set: \
            HOST, PORT, TRIPS_STORE. LOG_LEVEL (trace, debug, info, ...) sets the log level. \
            Exit status: 1 when the store cannot be opened, 64 for a wrong command line.
            """)

    private static let environment = ProcessInfo.processInfo.environment

    @Option(help: "The address to listen on (HOST).")
    var host = environment["HOST"] ?? "127.0.0.1"

    @Option(help: "The port to listen on (PORT).")
    var port = environment["PORT"].flatMap(Int.init) ?? 8080

    @Option(help: ArgumentHelp("A document file, or a postgres:// URL (TRIPS_STORE).", valueName: "path-or-url"))
    var store = environment["TRIPS_STORE"] ?? "trips.store"

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be in 0...65535, not \(port)") }
        guard !store.isEmpty else { throw ValidationError("--store must name a file or a postgres:// URL") }
    }

    func run() async throws {
        var logger = Logger(label: "TripsServer")
        logger.logLevel = Self.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
        // What the logs may say about the store: never a password.
        let shown = TripsApp.redacted(store)
        // Before the store opens: its container reports to the backend bootstrapped then.
        let metrics = TripsApp.bootstrapMetrics()
        let container: ModelContainer
        do {
            container = try TripsApp.openStore(store)
        } catch {
            // A clear line and exit status 1, not a trap with a backtrace.
            logger.critical("cannot open the store", metadata: ["store": "\(shown)", "error": "\(error)"])
            throw ExitCode.failure
        }
        logger.info(TripsApp.isPostgres(store) ? "trips in PostgreSQL" : "trips in a document", metadata: ["store": "\(shown)"])
        try await TripsApp.application(over: container, host: host, port: port, logger: logger, metrics: metrics).runService()
    }
}
