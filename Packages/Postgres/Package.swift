// swift-tools-version: 6.1
import PackageDescription

/// `PostgresStore`: a `DataStore` over PostgreSQL (postgres-nio), in a package of its
/// own beside the core (as fluent-postgres-driver stands beside fluent-kit), so an app
/// that depends only on OpenSwiftData resolves no postgres-nio, NIO or swift-nio-ssl.
///
/// Its tests hold the core API's conformance suite, run over the embedded document
/// store and over PostgresStore (against a server `Scripts/postgres-test-server.sh`
/// starts), and the model-based graph test over PostgresStore. `Scripts/test.sh` runs
/// them after the core's tests, in the same build folder, so nothing is compiled twice.
let package = Package(
    name: "OpenSwiftDataPostgres",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "OpenSwiftDataPostgres", targets: ["OpenSwiftDataPostgres"]),
    ],
    dependencies: [
        .package(name: "OpenSwiftData", path: "../.."),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.81.0"),
        // TLS (PostgresStoreConfiguration.tls); postgres-nio depends on it already.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.27.0"),
        // (1.16: `LogHandler.log(event:)`, which the tests' handler implements.)
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
    ],
    targets: [
        .target(
            name: "OpenSwiftDataPostgres",
            dependencies: [
                .product(name: "OpenSwiftData", package: "OpenSwiftData"),
                .product(name: "OpenSwiftDataStore", package: "OpenSwiftData"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A second process for the change feed's tests: it saves while their feed waits.
        .executableTarget(
            name: "PostgresFeedProbe",
            dependencies: [
                "OpenSwiftDataPostgres",
                .product(name: "SwiftData", package: "OpenSwiftData"),
            ],
            path: "Tests/PostgresFeedProbe"
        ),
        // The core API's conformance suite over the embedded store and PostgresStore.
        .testTarget(
            name: "StoreConformanceTests",
            dependencies: [
                "OpenSwiftDataPostgres",
                "PostgresFeedProbe",
                .product(name: "SwiftData", package: "OpenSwiftData"),
                .product(name: "GraphModelTesting", package: "OpenSwiftData"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
