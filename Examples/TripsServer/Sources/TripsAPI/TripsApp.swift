import Foundation
import Hummingbird
import Logging
import Metrics
import OpenSwiftDataPostgres
import Prometheus
import ServiceLifecycle
import SwiftData

/// The server as a value: the store it opens and the application over it. The
/// `TripsServer` command runs it on a socket; the route tests run the same
/// application in process (HummingbirdTesting), with no socket.
public enum TripsApp {
    /// The schema every store of the example holds.
    public static let schema = Schema([Trip.self])

    /// Whether `store` names a PostgreSQL database rather than a document file.
    public static func isPostgres(_ store: String) -> Bool {
        store.hasPrefix("postgres://") || store.hasPrefix("postgresql://")
    }

    /// Opens the store `store` names: a document at a file path, or a PostgreSQL
    /// database at a `postgres://` URL.
    public static func openStore(_ store: String) throws -> ModelContainer {
        if isPostgres(store) {
            return try ModelContainer(for: schema, configurations: [try PostgresStoreConfiguration(url: store)])
        }
        return try ModelContainer(for: schema, configurations: [ModelConfiguration(url: URL(fileURLWithPath: store))])
    }

    /// What logs may say of `store`: a PostgreSQL URL with its password replaced by
    /// `***`, a file path made absolute. Never a secret.
    public static func redacted(_ store: String) -> String {
        isPostgres(store) ? PostgresStoreConfiguration.redacted(store) : URL(fileURLWithPath: store).path
    }

    /// The routes over `container`, with request logging at debug level. With
    /// `metrics` (the registry the app bootstrapped swift-metrics with, before opening
    /// `container`), requests are counted and timed too, and `GET /metrics` answers
    /// the registry in Prometheus's text format: the store's saves, fetches,
    /// compactions and recoveries (`StoreMetrics`) and the HTTP requests.
    public static func router(
        over container: ModelContainer, metrics: PrometheusCollectorRegistry? = nil
    ) -> Router<BasicRequestContext> {
        let router = Router()
        router.middlewares.add(LogRequestsMiddleware(.debug))
        if let metrics {
            router.middlewares.add(MetricsMiddleware())
            router.get("metrics") { _, _ -> Response in
                Response(
                    status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                    body: .init(byteBuffer: ByteBuffer(bytes: metrics.emitToBuffer())))
            }
        }
        TripRoutes(container: container).add(to: router)
        return router
    }

    /// A registry for `router(over:metrics:)`, made the process's swift-metrics
    /// backend. Call it once, before opening the store: a container reports to the
    /// backend that was bootstrapped when it opened.
    public static func bootstrapMetrics() -> PrometheusCollectorRegistry {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return registry
    }

    /// The application: the routes on `host:port`, and a service that compacts the
    /// document when the server stops gracefully.
    public static func application(
        over container: ModelContainer, host: String = "127.0.0.1", port: Int = 8080, logger: Logger,
        metrics: PrometheusCollectorRegistry? = nil
    ) -> some ApplicationProtocol {
        Application(
            router: router(over: container, metrics: metrics),
            configuration: .init(address: .hostname(host, port: port), serverName: "TripsServer"),
            services: [StoreShutdown(container: container, logger: logger)],
            logger: logger)
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
