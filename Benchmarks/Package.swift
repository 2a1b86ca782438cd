// swift-tools-version: 6.1
import PackageDescription

/// OpenSwiftData's benchmark suite: its own package, so the library's users never
/// resolve package-benchmark or GRDB. Run it with `Scripts/bench.sh` (see
/// Docs/Benchmarking.md).
let package = Package(
    name: "OpenSwiftDataBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "OpenSwiftData", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        // The shared data generator (fixed seed): plain values, no store.
        .target(name: "TripData"),
        // libzstd, for W9's limit (raw ZSTD_compress); a module of its own, since the
        // project's CZstd target is not a product.
        .systemLibrary(name: "CZstdBench", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        // The workloads (ours, the SQLite peer, the limit) as plain functions.
        .target(
            name: "WorkloadKit",
            dependencies: [
                "TripData",
                "CZstdBench",
                .product(name: "SwiftData", package: "OpenSwiftData"),
                // The engine, for W9: DocumentReader and Document.uncompressedSnapshot.
                .product(name: "OpenSwiftDataStore", package: "OpenSwiftData"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // The package-benchmark suite (Scripts/bench.sh runs it).
        .executableTarget(
            name: "Workloads",
            dependencies: [
                "WorkloadKit",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/Workloads",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // One workload without package-benchmark, for valgrind (Docs/Benchmarking.md).
        .executableTarget(
            name: "Profile",
            dependencies: ["WorkloadKit"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
