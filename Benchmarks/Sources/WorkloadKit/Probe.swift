/// What a workload sees of the harness: it wraps its timed part in `measured` and may
/// record custom metrics. package-benchmark's `Benchmark` drives it in the suite; the
/// `Profile` executable drives it under valgrind.
public final class Probe: @unchecked Sendable {
    let start: () -> Void
    let stop: () -> Void
    let recorder: (String, Int) -> Void

    public init(start: @escaping () -> Void, stop: @escaping () -> Void, record: @escaping (String, Int) -> Void) {
        self.start = start
        self.stop = stop
        self.recorder = record
    }

    /// Runs the timed part of one iteration.
    @inline(never)
    public func measured(_ body: () throws -> Void) rethrows {
        start()
        defer { stop() }
        try body()
    }

    /// Runs the timed part of one iteration (async workloads: W10).
    @inline(never)
    public func measuredAsync(_ body: () async throws -> Void) async rethrows {
        start()
        defer { stop() }
        try await body()
    }

    /// Records a value of a custom metric (bytes, for M1).
    public func record(_ metric: String, _ value: Int) { recorder(metric, value) }
}

/// Keeps a value alive and opaque to the optimizer.
@inline(never) @_optimize(none)
public func blackHole(_ value: some Any) {}

/// One benchmark of the suite: "<workload> <role>", role ∈ {ours, sqlite, limit}.
public struct Workload: Sendable {
    public let name: String
    public let warmupIterations: Int
    public let maxIterations: Int
    public let maxSeconds: Int
    /// Custom metrics (bytes) the workload records, beyond wall clock and peak RSS.
    public let customMetrics: [String]
    /// Builds the process-wide fixture (data, loaded stores); untimed, once per process.
    public let setup: @Sendable () throws -> Void
    /// One iteration: untimed preparation, `probe.measured { … }`, then a result check.
    public let iteration: @Sendable (Probe) async throws -> Void
    /// Runs once after the iterations, also when one threw: removes the files the
    /// document workloads (W7–W9) wrote.
    public let teardown: @Sendable () throws -> Void

    init(
        name: String, warmupIterations: Int, maxIterations: Int, maxSeconds: Int, customMetrics: [String],
        setup: @escaping @Sendable () throws -> Void, iteration: @escaping @Sendable (Probe) async throws -> Void,
        teardown: @escaping @Sendable () throws -> Void = {}
    ) {
        self.name = name
        self.warmupIterations = warmupIterations
        self.maxIterations = maxIterations
        self.maxSeconds = maxSeconds
        self.customMetrics = customMetrics
        self.setup = setup
        self.iteration = iteration
        self.teardown = teardown
    }
}

struct CheckFailed: Error, CustomStringConvertible {
    var description: String
}

/// A benchmark that silently did less work would be a lie: every workload checks its result.
func check(_ condition: @autoclosure () throws -> Bool, _ what: String) throws {
    guard try condition() else { throw CheckFailed(description: "check failed: \(what)") }
}
