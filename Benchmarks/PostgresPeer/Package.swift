// swift-tools-version: 6.1
import PackageDescription

/// PostgresStore against hand-written postgres-nio (#43, 6(b)): the same inserts, key
/// lookups and range queries over the same table, as an app would write each. A
/// package of its own beside the suite, so the core's benchmark run (and CI) never
/// needs PostgreSQL or postgres-nio; `Scripts/bench-postgres.sh` builds and runs it in
/// the core's build folder, where the server example has compiled postgres-nio already.
let package = Package(
    name: "OpenSwiftDataPostgresBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "OpenSwiftData", path: "../.."),
        .package(path: "../../Packages/Postgres"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
    ],
    targets: [
        .executableTarget(
            name: "PostgresPeer",
            dependencies: [
                .product(name: "SwiftData", package: "OpenSwiftData"),
                .product(name: "OpenSwiftDataPostgres", package: "Postgres"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
