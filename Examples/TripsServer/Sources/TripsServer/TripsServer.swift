import Foundation
import Hummingbird
import Logging
import OpenSwiftDataPostgres
import ServiceLifecycle
import SwiftData

/// `swift run TripsServer [--port 8080] [--store trips.store | --store postgres://user@host/db]`
///
/// The store is the embedded document (a file path, the default `trips.store`) or
/// PostgreSQL (a `postgres://` URL); `TRIPS_STORE` and `PORT` set them too. SIGINT or
/// SIGTERM stops it gracefully: requests in flight finish, then the document is
/// compacted (every request saved already).
@main
struct TripsServer {
    static func main() async throws {
        var logger = Logger(label: "TripsServer")
        logger.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
        let arguments = Arguments(CommandLine.arguments.dropFirst(), environment: ProcessInfo.processInfo.environment)
        let schema = Schema([Trip.self])
        let container: ModelContainer
        let isPostgres = arguments.store.hasPrefix("postgres://") || arguments.store.hasPrefix("postgresql://")
        // What the logs may say about the store: never a password.
        let store = isPostgres ? Self.redacted(arguments.store) : URL(fileURLWithPath: arguments.store).path
        do {
            if isPostgres {
                container = try ModelContainer(for: schema, configurations: [try PostgresStoreConfiguration(url: arguments.store)])
                logger.info("trips in PostgreSQL", metadata: ["database": "\(store)"])
            } else {
                container = try ModelContainer(for: schema, configurations: [ModelConfiguration(url: URL(fileURLWithPath: store))])
                logger.info("trips in a document", metadata: ["path": "\(store)"])
            }
        } catch {
            // A clear line and exit status 1, not a trap with a backtrace.
            logger.critical("cannot open the store", metadata: ["store": "\(store)", "error": "\(error)"])
            exit(1)
        }
        let router = Router()
        router.middlewares.add(LogRequestsMiddleware(.debug))
        TripRoutes(container: container).add(to: router)
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(arguments.host, port: arguments.port), serverName: "TripsServer"),
            services: [StoreShutdown(container: container, logger: logger)],
            logger: logger)
        try await app.runService()
    }
}

extension TripsServer {
    /// `url` with its password replaced by `***`, for logs.
    static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else { return url }
        components.password = "***"
        return components.string ?? url
    }
}

/// Saves what remains when the server stops: waits for the graceful shutdown the
/// service group starts on SIGINT/SIGTERM, then compacts the document.
struct StoreShutdown: Service {
    let container: ModelContainer
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        do {
            try container.compactDocument()
            logger.info("store saved; stopping")
        } catch {
            logger.error("saving the store at shutdown failed", metadata: ["error": "\(error)"])
            throw error
        }
    }
}

/// `--host`, `--port` and `--store`, or `HOST`, `PORT` and `TRIPS_STORE`.
struct Arguments {
    var host = "127.0.0.1"
    var port = 8080
    var store = "trips.store"

    init(_ arguments: ArraySlice<String>, environment: [String: String]) {
        if let host = environment["HOST"] { self.host = host }
        if let port = environment["PORT"].flatMap(Int.init) { self.port = port }
        if let store = environment["TRIPS_STORE"] { self.store = store }
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { break }
            switch flag {
            case "--host": host = value
            case "--port": port = Int(value) ?? port
            case "--store": store = value
            default: continue
            }
        }
    }
}
