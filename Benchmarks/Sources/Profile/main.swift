// Runs one workload of the suite without package-benchmark (whose malloc interposer
// valgrind cannot run), for profiling:
//
//   BENCH_N=100000 valgrind --tool=callgrind --zero-before='*profileMeasureStart*' \
//       --dump-before='*profileMeasureStop*' Benchmarks/.build/release/Profile 'W2 ours'
//
// dumps, at the end of each iteration's measured part, its costs (zeroed at its start):
// the large callgrind.out.<pid>.<k> files, one per iteration (the small ones in between are
// the waiting main thread; callgrind.out.<pid> is what ran after the last iteration).
//
// Arguments: the workload's name (e.g. "W2 ours"), then the number of iterations (default 1).
// Prints the wall clock of each iteration's measured part.
import Foundation
import WorkloadKit

// W12 starts this executable again as its other writer.
OtherWriter.runIfAsked()
let arguments = CommandLine.arguments.dropFirst()
guard let name = arguments.first, let workload = Workload.all.first(where: { $0.name == name }) else {
    print("usage: Profile <workload> [iterations]; workloads:")
    for workload in Workload.all { print("  \(workload.name)") }
    exit(2)
}
let iterations = arguments.dropFirst().first.flatMap { Int($0) } ?? 1

let clock = ContinuousClock()
var started = clock.now
var times: [Duration] = []
/// Marks where an iteration's measured part starts: callgrind's `--zero-before` hook.
@inline(never) @_optimize(none)
func profileMeasureStart() {}

/// Marks where it ends: callgrind's `--dump-before` hook.
@inline(never) @_optimize(none)
func profileMeasureStop() {}

let probe = Probe(
    start: {
        profileMeasureStart()
        started = clock.now
    },
    stop: {
        let end = clock.now
        profileMeasureStop()
        times.append(end - started)
    },
    record: { metric, value in print("\(metric): \(value)") })

// A synchronous main (valgrind 3.19 crashes on an async main's dispatch_main): setup and
// iterations run on one task while the main thread waits, so under callgrind the costs
// before `profileMeasureStart` (setup) are zeroed on the same thread.
final class Outcome: @unchecked Sendable { var error: (any Error)? }
let outcome = Outcome()
let done = DispatchSemaphore(value: 0)
Task.detached {
    do {
        try workload.setup()
        for _ in 0..<iterations { try await workload.iteration(probe) }
    } catch {
        outcome.error = error
    }
    do {
        try workload.teardown()
    } catch {
        outcome.error = outcome.error ?? error
    }
    done.signal()
}
done.wait()
if let error = outcome.error {
    print("\(name) failed: \(error)")
    exit(1)
}
for (i, time) in times.enumerated() { print("\(name) iteration \(i + 1): \(time)") }
