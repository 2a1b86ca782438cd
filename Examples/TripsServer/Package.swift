// swift-tools-version: 6.1
import PackageDescription

/// A Hummingbird 2 HTTP JSON API over OpenSwiftData: trips kept in the embedded
/// document store or in PostgreSQL (`PostgresStore`), one `@ModelActor` per request.
/// Its own package, so the library's users never resolve Hummingbird.
///
/// `TripsAPI` holds the model, the routes and the application; `TripsServer` is the
/// command that runs it; `TripsAPITests` runs every route in process
/// (HummingbirdTesting, no socket).
let package = Package(
    name: "TripsServer",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "OpenSwiftData", path: "../.."),
        // PostgresStore: a package of its own beside the core.
        .package(path: "../../Packages/Postgres"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // `/metrics`: the store's and the HTTP server's swift-metrics, in Prometheus's text format.
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.1.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.5.0"),
    ],
    targets: [
        .target(
            name: "TripsAPI",
            dependencies: [
                .product(name: "SwiftData", package: "OpenSwiftData"),
                .product(name: "OpenSwiftDataPostgres", package: "Postgres"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .executableTarget(
            name: "TripsServer",
            dependencies: [
                "TripsAPI",
                .product(name: "SwiftData", package: "OpenSwiftData"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "TripsAPITests",
            dependencies: [
                "TripsAPI",
                // Built for the tests that run the command itself (its exit status and logs).
                "TripsServer",
                .product(name: "SwiftData", package: "OpenSwiftData"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
