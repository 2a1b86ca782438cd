// Registers the workloads of WorkloadKit (BENCHMARKS.md's W1–W10, W12, M1; see
// Sources/WorkloadKit/Workloads.swift) with package-benchmark. Run with Scripts/bench.sh.
import Benchmark
import WorkloadKit

let benchmarks: @Sendable () -> Void = {
    // W12 starts this executable again as its other writer.
    OtherWriter.runIfAsked()
    for workload in Workload.all {
        let custom = workload.customMetrics.map {
            BenchmarkMetric.custom($0, polarity: .prefersSmaller, useScalingFactor: false)
        }
        let configuration = Benchmark.Configuration(
            metrics: [.wallClock, .peakMemoryResident] + custom,
            timeUnits: .automatic,
            // Whole bytes in the export, not rounded megabytes.
            units: Dictionary(uniqueKeysWithValues: ([.peakMemoryResident] + custom).map { ($0, .count) }),
            warmupIterations: workload.warmupIterations,
            maxDuration: .seconds(workload.maxSeconds),
            maxIterations: workload.maxIterations)
        Benchmark(workload.name, configuration: configuration) { benchmark async throws in
            let probe = Probe(
                start: { benchmark.startMeasurement() },
                stop: { benchmark.stopMeasurement() },
                record: { name, value in
                    benchmark.measurement(.custom(name, polarity: .prefersSmaller, useScalingFactor: false), value)
                })
            try await workload.iteration(probe)
        } setup: {
            try workload.setup()
        } teardown: {
            try workload.teardown()
        }
    }
}
