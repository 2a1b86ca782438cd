// W11: group commit (#42). Registered by `Workload.all` (Workloads.swift) after W10.
//
// 64 concurrent writers each save one changed trip, over and over, with durability `.full`
// on a document of 100,000 trips (BENCH_N when smaller). Ours: 64 `@ModelActor`s on one
// container, each changing its own trip's price and calling `save()`; the saves share
// fsyncs (`Document+GroupCommit.swift`). The peer: a GRDB `DatabasePool` in WAL mode with
// `synchronous = FULL`, 64 threads each running the same UPDATE in its own write
// transaction (SQLite serializes them, one WAL fsync each). One iteration is the whole
// run: 64 × BENCH_W11_SAVES saves (default 1,000; `Scripts/bench.sh --quick` sets 20).
// Each save's latency is taken on its writer and the run's p50 and p99 recorded as custom
// metrics (`saveP50`, `saveP99`, ns). "W11 limit" is: one 4 KiB append and
// fsync of a file in the same folder, whose p50 the p99 goal is stated in (≤ 3 fsyncs).
import Foundation
import Synchronization
import GRDB
import SwiftData
import TripData

extension Workload {
    /// W11's benchmarks, in table order.
    static func groupCommitWorkloads() -> [Workload] {
        var all: [Workload] = []
        func add(
            _ name: String, iterations: Int, seconds: Int, metrics: [String] = [],
            _ iteration: @escaping @Sendable (Probe) async throws -> Void, setup: @escaping @Sendable () throws -> Void
        ) {
            all.append(Workload(
                name: name, warmupIterations: 0, maxIterations: iterations, maxSeconds: seconds, customMetrics: metrics,
                setup: setup, iteration: iteration, teardown: { Scratch.remove() }))
        }
        let latencies = ["saveP50", "saveP99"]
        add("W11 ours", iterations: 3, seconds: 300, metrics: latencies) { probe in
            try await GroupCommitRun.ours.run(probe)
        } setup: { _ = GroupCommitRun.ours }
        add("W11 sqlite", iterations: 1, seconds: 600, metrics: latencies) { probe in
            try await GroupCommitRun.sqlite.run(probe)
        } setup: { _ = GroupCommitRun.sqlite }
        add("W11 limit", iterations: 200, seconds: 60) { probe in
            try FsyncProbe.shared.append(probe)
        } setup: { _ = FsyncProbe.shared }
        return all
    }
}

extension Env {
    /// W11's writers.
    static let w11Writers = 64
    /// W11's saves per writer.
    static let w11Saves = int("BENCH_W11_SAVES") ?? 1_000
    /// W11's trips: 100,000, or N when smaller (quick mode).
    static let w11Trips = min(n, 100_000)
}

/// The price the k-th save of writer `w` writes: never a generated price.
private func w11Price(writer w: Int, save k: Int) -> Double { 2_000_000 + Double(w * 100_000 + k) }

/// One W11 run of ours or the peer: every writer's saves, timed whole, latencies recorded.
final class GroupCommitRun: @unchecked Sendable {
    static let ours = GroupCommitRun(sqlite: false)
    static let sqlite = GroupCommitRun(sqlite: true)

    let usesSQLite: Bool
    /// The trips the writers change: writer w changes trip `keys[w]`.
    let keys: [Int]
    var runs = 0
    let document: URL
    let sqlitePath: String

    init(sqlite: Bool) {
        usesSQLite = sqlite
        // (Spread evenly: one trip per writer, never the same.)
        keys = (0..<Env.w11Writers).map { $0 * (Env.w11Trips / Env.w11Writers) }
        document = Scratch.folder.appendingPathComponent("w11.store")
        sqlitePath = Scratch.folder.appendingPathComponent("w11.sqlite").path
        if sqlite {
            try! SQLiteFile.build(TripData.trips(0..<Env.w11Trips), at: sqlitePath)
        } else {
            try! DocumentFixture.write(TripData.trips(0..<Env.w11Trips), to: document)
        }
    }

    func run(_ probe: Probe) async throws {
        runs += 1
        let latencies = usesSQLite ? try runSQLite(probe) : try await runOurs(probe)
        let sorted = latencies.sorted()
        try check(sorted.count == Env.w11Writers * Env.w11Saves, "W11 made every save")
        probe.record("saveP50", Int(sorted[sorted.count / 2]))
        probe.record("saveP99", Int(sorted[min(sorted.count - 1, sorted.count * 99 / 100)]))
    }

    private func runOurs(_ probe: Probe) async throws -> [UInt64] {
        let container = try DocumentFixture.container(document)
        var savers: [W11Saver] = []
        for w in 0..<Env.w11Writers {
            let saver = W11Saver(modelContainer: container)
            try await saver.prepare(trip: TripData.name(keys[w]))
            savers.append(saver)
        }
        let run = runs
        var latencies: [UInt64] = []
        try await probe.measuredAsync {
            latencies = try await withThrowingTaskGroup(of: [UInt64].self) { group in
                for (w, saver) in savers.enumerated() {
                    group.addTask { try await saver.save(times: Env.w11Saves, price: { w11Price(writer: w, save: $0 + run) }) }
                }
                var all: [UInt64] = []
                for try await times in group { all += times }
                return all
            }
        }
        // Every writer's last save is in the document, read back by a new container.
        let reader = ModelContext(try DocumentFixture.container(document, readOnly: true))
        for w in [0, Env.w11Writers - 1] {
            let price = try SaveLoop.trip(named: TripData.name(keys[w]), in: reader).price
            try check(price == w11Price(writer: w, save: Env.w11Saves + run), "W11 ours reads writer \(w)'s last save back")
        }
        return latencies
    }

    private func runSQLite(_ probe: Probe) throws -> [UInt64] {
        let pool = try DatabasePool(path: sqlitePath, configuration: SQLiteFile.configuration())
        // A pool sets `synchronous = NORMAL` on its writer after `prepareDatabase`: FULL is
        // set on that one connection (every write goes through it) after it opened.
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        let (mode, synchronous) = try pool.write { db in
            (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA synchronous"))
        }
        try check(mode == "wal" && synchronous == 2, "W11 sqlite writes in WAL mode with synchronous = FULL")
        let run = runs
        let results = Mutex<[[UInt64]]>([])
        let failure = Mutex<String?>(nil)
        probe.measured {
            let done = DispatchGroup()
            for w in 0..<Env.w11Writers {
                done.enter()
                let id = keys[w] + 1
                Thread {
                    defer { done.leave() }
                    var times: [UInt64] = []
                    times.reserveCapacity(Env.w11Saves)
                    do {
                        for k in 1...Env.w11Saves {
                            let start = DispatchTime.now().uptimeNanoseconds
                            try pool.write { db in
                                try db.cachedStatement(sql: "UPDATE trip SET price = ? WHERE id = ?")
                                    .execute(arguments: [w11Price(writer: w, save: k + run), id])
                            }
                            times.append(DispatchTime.now().uptimeNanoseconds - start)
                        }
                    } catch {
                        let text = "W11 sqlite writer \(w): \(error)"
                        failure.withLock { $0 = text }
                    }
                    results.withLock { $0.append(times) }
                }.start()
            }
            done.wait()
        }
        if let text = failure.withLock({ $0 }) { throw CheckFailed(description: text) }
        let last = try pool.read { db in
            try Double.fetchOne(db, sql: "SELECT price FROM trip WHERE id = ?", arguments: [keys[0] + 1])
        }
        try check(last == w11Price(writer: 0, save: Env.w11Saves + run), "W11 sqlite reads writer 0's last save back")
        try pool.close()
        return results.withLock { $0.flatMap { $0 } }
    }
}

/// One W11 writer of ours: its own context (the actor's), changing one trip.
@ModelActor actor W11Saver {
    private var trip: Trip?

    func prepare(trip key: String) throws {
        trip = try SaveLoop.trip(named: key, in: modelContext)
    }

    /// Saves `times` times, the k-th setting the price `price(k)`; returns each save's
    /// latency in nanoseconds.
    func save(times: Int, price: @Sendable (Int) -> Double) throws -> [UInt64] {
        guard let trip else { throw CheckFailed(description: "check failed: W11 writer prepared") }
        var latencies: [UInt64] = []
        latencies.reserveCapacity(times)
        for k in 1...times {
            let start = DispatchTime.now().uptimeNanoseconds
            trip.price = price(k)
            try modelContext.save()
            latencies.append(DispatchTime.now().uptimeNanoseconds - start)
        }
        return latencies
    }
}

/// W11's limit: one fsync of a file on the same disk as the documents, after appending
/// 4 KiB (about what a journal frame and its metadata change cost the disk).
final class FsyncProbe: @unchecked Sendable {
    static let shared = try! FsyncProbe()
    let handle: FileHandle
    let block = Data(repeating: 0x5A, count: 4_096)

    init() throws {
        let url = Scratch.folder.appendingPathComponent("w11-fsync.bin")
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
        handle = try FileHandle(forWritingTo: url)
    }

    func append(_ probe: Probe) throws {
        try handle.seekToEnd()
        try probe.measured {
            try handle.write(contentsOf: block)
            try check(fsync(handle.fileDescriptor) == 0, "W11 fsync synced")
        }
    }
}
