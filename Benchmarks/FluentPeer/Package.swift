// swift-tools-version: 6.1
import PackageDescription

/// The server example's peer for #43: the same trip routes as Examples/TripsServer,
/// written the way a Vapor app writes them, with Fluent over PostgreSQL
/// (fluent-postgres-driver). `Scripts/server-load.sh --fluent` builds it and drives it
/// with the same wrk scripts as TripsServer, so the two are compared request for
/// request. A package of its own beside the benchmarks: neither the library's users
/// nor CI resolve Vapor.
let package = Package(
    name: "FluentPeer",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "https://github.com/vapor/vapor.git", from: "4.110.0"),
        .package(url: "https://github.com/vapor/fluent.git", from: "4.12.0"),
        .package(url: "https://github.com/vapor/fluent-postgres-driver.git", from: "2.10.0"),
    ],
    targets: [
        .executableTarget(
            name: "FluentTrips",
            dependencies: [
                .product(name: "Vapor", package: "vapor"),
                .product(name: "Fluent", package: "fluent"),
                .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
