import CoreMetrics
import Dispatch

/// The counters and timers OpenSwiftData reports through swift-metrics, to the
/// backend the application bootstrapped (`MetricsSystem.bootstrap`: Prometheus,
/// StatsD, OpenTelemetry…):
///
/// | label | kind | counts |
/// | --- | --- | --- |
/// | `openswiftdata_saves_total` | counter | saves that wrote something |
/// | `openswiftdata_save_failures_total` | counter | saves that threw |
/// | `openswiftdata_save_duration` | timer | each save, the failed ones too |
/// | `openswiftdata_fetches_total` | counter | fetches, counts and identifier fetches |
/// | `openswiftdata_fetch_duration` | timer | each of them |
/// | `openswiftdata_compactions_total` | counter | snapshots rewritten (`mode`: `explicit` or `background`) |
/// | `openswiftdata_compaction_failures_total` | counter | compactions that failed (the journal stays whole) |
/// | `openswiftdata_compaction_duration` | timer | each compaction that finished |
/// | `openswiftdata_recoveries_total` | counter | opens that dropped a torn last save (a crash's) |
/// | `openswiftdata_journal_syncs_total` | counter | fsyncs that made saves durable: fewer than the saves when saves overlap (group commit) |
///
/// Every one carries the dimensions the container gives (`store`: `document`,
/// `memory` or the custom store's type; `configuration`: the configuration's name).
///
/// A container makes its metrics when it opens, after the app's bootstrap; when the
/// app bootstrapped none, `make` returns nil and saves and fetches pay one nil check.
public struct StoreMetrics: Sendable {
    private let saves: Counter
    private let saveFailures: Counter
    private let saveDuration: Timer
    private let fetches: Counter
    private let fetchDuration: Timer
    private let explicitCompactions: Counter
    private let backgroundCompactions: Counter
    private let compactionFailures: Counter
    private let compactionDuration: Timer
    private let recoveries: Counter
    private let journalSyncs: Counter

    /// The metrics of one container, or nil when no metrics backend is bootstrapped.
    public static func make(dimensions: [(String, String)]) -> StoreMetrics? {
        guard !(MetricsSystem.factory is NOOPMetricsHandler) else { return nil }
        return StoreMetrics(dimensions: dimensions)
    }

    private init(dimensions: [(String, String)]) {
        saves = Counter(label: "openswiftdata_saves_total", dimensions: dimensions)
        saveFailures = Counter(label: "openswiftdata_save_failures_total", dimensions: dimensions)
        saveDuration = Timer(label: "openswiftdata_save_duration", dimensions: dimensions)
        fetches = Counter(label: "openswiftdata_fetches_total", dimensions: dimensions)
        fetchDuration = Timer(label: "openswiftdata_fetch_duration", dimensions: dimensions)
        explicitCompactions = Counter(label: "openswiftdata_compactions_total", dimensions: dimensions + [("mode", "explicit")])
        backgroundCompactions = Counter(
            label: "openswiftdata_compactions_total", dimensions: dimensions + [("mode", "background")])
        compactionFailures = Counter(label: "openswiftdata_compaction_failures_total", dimensions: dimensions)
        compactionDuration = Timer(label: "openswiftdata_compaction_duration", dimensions: dimensions)
        recoveries = Counter(label: "openswiftdata_recoveries_total", dimensions: dimensions)
        journalSyncs = Counter(label: "openswiftdata_journal_syncs_total", dimensions: dimensions)
    }

    /// Runs a save, counting it (or its failure) and timing it.
    public func save<T>(_ body: () throws -> T) rethrows -> T {
        let start = DispatchTime.now().uptimeNanoseconds
        var succeeded = false
        defer {
            saveDuration.recordNanoseconds(Int64(DispatchTime.now().uptimeNanoseconds - start))
            (succeeded ? saves : saveFailures).increment()
        }
        let result = try body()
        succeeded = true
        return result
    }

    /// Runs a fetch, counting and timing it.
    public func fetch<T>(_ body: () throws -> T) rethrows -> T {
        let start = DispatchTime.now().uptimeNanoseconds
        defer {
            fetchDuration.recordNanoseconds(Int64(DispatchTime.now().uptimeNanoseconds - start))
            fetches.increment()
        }
        return try body()
    }

    /// A compaction that finished, in the background or asked for, and how long it took.
    func compacted(background: Bool, nanoseconds: UInt64) {
        (background ? backgroundCompactions : explicitCompactions).increment()
        compactionDuration.recordNanoseconds(Int64(nanoseconds))
    }

    func compactionFailed() {
        compactionFailures.increment()
    }

    func recovered() {
        recoveries.increment()
    }

    /// One fsync that acknowledged one or more saves (group commit).
    func journalSynced() {
        journalSyncs.increment()
    }
}
