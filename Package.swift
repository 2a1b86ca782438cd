// swift-tools-version: 6.1
import CompilerPluginSupport
import PackageDescription

/// OpenSwiftData: Apple's SwiftData API on Linux, over an in-memory object-graph store.
///
/// The storage engine (`OpenSwiftDataStore`) never imports the API module and builds
/// without swift-syntax, so the CLI, the document format and the engine benchmarks
/// reuse it as it is.
let package = Package(
    name: "OpenSwiftData",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "OpenSwiftData", targets: ["OpenSwiftData"]),
        .library(name: "SwiftData", targets: ["SwiftData"]),
        .library(name: "OpenSwiftDataStore", targets: ["OpenSwiftDataStore"]),
        // The model-based graph test's harness, for the tests of any store: the core's
        // own, PostgresStore's (Packages/Postgres), a custom `DataStore`'s.
        .library(name: "GraphModelTesting", targets: ["GraphModelTesting"]),
        .executable(name: "osd", targets: ["osd"]),
    ],
    dependencies: [
        .package(url: "https://github.com/swiftlang/swift-syntax.git", "602.0.0"..<"604.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        // Counters and timers of saves, fetches, compactions and recoveries, to whatever
        // backend the app bootstraps (no dependencies of its own).
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.5.0"),
    ],
    targets: [
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        // The processor's CRC-32C instruction, for the checksum of every frame (`CRC32C`).
        .target(name: "CCRC32C"),
        .target(
            name: "OpenSwiftDataStore",
            // (SHA-256 of blobs is ours, `SHA256Hasher`: no swift-crypto, no BoringSSL.)
            dependencies: ["CZstd", "CCRC32C", .product(name: "CoreMetrics", package: "swift-metrics")]
        ),
        // The document CLI: depends on the engine alone, so it reads any document
        // without the application's model types and builds without swift-syntax.
        // Its commands live in a library so tests can run them in process.
        .target(
            name: "OpenSwiftDataTool",
            dependencies: [
                "OpenSwiftDataStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "osd",
            dependencies: ["OpenSwiftDataTool"]
        ),
        .macro(
            name: "OpenSwiftDataMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
            ]
        ),
        .target(
            name: "OpenSwiftData",
            dependencies: ["OpenSwiftDataStore", "OpenSwiftDataMacros"]
        ),
        .target(
            name: "SwiftData",
            dependencies: ["OpenSwiftData"]
        ),
        .executableTarget(
            name: "Trips",
            dependencies: ["SwiftData"],
            path: "Examples/Trips"
        ),
        .testTarget(
            name: "OpenSwiftDataStoreTests",
            dependencies: ["OpenSwiftDataStore", "DocumentTestSupport", "DocumentFuzzer"]
        ),
        // Document bytes built and edited by hand, for hostile-document tests and the fuzzer.
        .target(
            name: "DocumentTestSupport",
            dependencies: ["OpenSwiftDataStore", "CZstd"],
            path: "Tests/DocumentTestSupport"
        ),
        // A child process that feeds mutated documents to the reader for a set
        // time under a memory limit (the fuzz test runs it).
        .executableTarget(
            name: "DocumentFuzzer",
            dependencies: ["OpenSwiftDataStore", "DocumentTestSupport"],
            path: "Tests/DocumentFuzzer"
        ),
        // A child process the crash tests kill at random moments during saves.
        .executableTarget(
            name: "DocumentCrashProbe",
            dependencies: ["SwiftData"],
            path: "Tests/DocumentCrashProbe"
        ),
        .testTarget(
            name: "SwiftDataTests",
            dependencies: [
                "SwiftData", "DocumentCrashProbe", "GraphModelTesting", "osd",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        // The model-based test's harness (a reference graph, operations, shrinking),
        // run over every store: the embedded ones in SwiftDataTests, PostgresStore in
        // Packages/Postgres (a product for that, and for custom stores' tests).
        .target(
            name: "GraphModelTesting",
            dependencies: ["SwiftData", "OpenSwiftDataStore"],
            path: "Tests/GraphModelTesting"
        ),
        // Trips: Docs/CLI.md's examples run against the document the README's example writes.
        .testTarget(
            name: "OpenSwiftDataToolTests",
            dependencies: ["OpenSwiftDataTool", "osd", "Trips"]
        ),
        .testTarget(
            name: "OpenSwiftDataMacrosTests",
            dependencies: [
                "OpenSwiftDataMacros",
                .product(name: "SwiftSyntaxMacrosTestSupport", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
