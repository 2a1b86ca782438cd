// W12: a shared document (#41). Registered by `Workload.all` (Workloads.swift) after W10.
//
// W12 saves: two processes save single-row changes on one document at the same time,
// `.full` durability on both. This process saves once per package-benchmark iteration (W7's
// save, p50); the other writer is this same executable started again with
// `OtherWriter.kindVariable` set (`OtherWriter.runIfAsked`, which the benchmark and Profile
// call first), saving as fast as it can until its stdin closes. (A separate executable
// cost CI a second release build of the engine and its dependencies.) "W12 ours alone"
// and "W12 sqlite alone" are the same saves with no other writer: the one-writer baseline
// in the same run. The peer is SQLite in WAL mode with `synchronous = FULL`, each save a
// one-row UPDATE in a `BEGIN IMMEDIATE` transaction, the other writer a second SQLite
// process (both wait for the write lock with a busy timeout, as two SQLite writers must).
//
// W12 catch-up: what a fetch pays for sharing when nothing changed (one `fstat`,
// `Store.catchUp`): W2's lookups on a writable document container ("W12 fetch shared")
// against the same lookups on an in-memory container of the same trips ("W12 fetch alone").
//
// N is 10,000 trips for both, whatever BENCH_N: the saves and the lookups must stay quick,
// and W7 measures how a save grows with N. Saves per benchmark: BENCH_W7_SAVES (W7's).
import Foundation
import Synchronization
import GRDB
import SwiftData
import TripData

extension Workload {
    /// W12's benchmarks, in table order.
    static func sharedWorkloads() -> [Workload] {
        var all: [Workload] = []
        func add(
            _ name: String, warmup: Int, iterations: Int, seconds: Int, metrics: [String] = [],
            _ iteration: @escaping @Sendable (Probe) async throws -> Void,
            setup: @escaping @Sendable () throws -> Void
        ) {
            all.append(Workload(
                name: name, warmupIterations: warmup, maxIterations: iterations, maxSeconds: seconds,
                customMetrics: metrics, setup: setup, iteration: iteration,
                teardown: {
                    // The other writer first: it must not find its document gone.
                    try OtherWriterProcess.stopAll()
                    Scratch.remove()
                }))
        }

        // MARK: W12 — two processes save one changed trip each, on one document of 10,000 trips

        // Each iteration is one save of this process (its p50 is the p50 of the saves) while
        // the other writer saves in its own process; `otherSaves` counts the other writer's
        // saves so far (its max: all it made while this benchmark ran).
        let saves = Env.w7Saves
        let otherSaves = OtherWriterProcess.metric
        add("W12 ours", warmup: 10, iterations: saves, seconds: 600, metrics: [otherSaves]) { probe in
            try SharedSaveLoop.ours.save(probe)
        } setup: { _ = SharedSaveLoop.ours }

        add("W12 ours alone", warmup: 10, iterations: saves, seconds: 600) { probe in
            try SharedSaveLoop.oursAlone.save(probe)
        } setup: { _ = SharedSaveLoop.oursAlone }

        add("W12 sqlite", warmup: 10, iterations: saves, seconds: 600, metrics: [otherSaves]) { probe in
            try SharedSQLiteSaveLoop.shared.save(probe)
        } setup: { _ = SharedSQLiteSaveLoop.shared }

        add("W12 sqlite alone", warmup: 10, iterations: saves, seconds: 600) { probe in
            try SharedSQLiteSaveLoop.alone.save(probe)
        } setup: { _ = SharedSQLiteSaveLoop.alone }

        // MARK: W12 catch-up — 10,000 unique-key lookups, shared document vs in memory

        // W2's loop on 10,000 trips. Nobody else writes the document, so every fetch's
        // catch-up finds nothing: the difference per lookup is what sharing costs a fetch.
        // More iterations than W2: the difference is a few ms of about 20, and this
        // machine's noise moves a p50 of 20 iterations by as much.
        let lookups = (warmup: 3, iterations: 60, seconds: 15)
        add("W12 fetch shared", warmup: lookups.warmup, iterations: lookups.iterations, seconds: lookups.seconds) { probe in
            try SharedFixture.lookUp(in: SharedFixture.documentContainer, probe, label: "W12 fetch shared")
        } setup: { _ = (SharedFixture.documentContainer, SharedFixture.lookupKeys) }

        add("W12 fetch alone", warmup: lookups.warmup, iterations: lookups.iterations, seconds: lookups.seconds) { probe in
            try SharedFixture.lookUp(in: SharedFixture.memoryContainer, probe, label: "W12 fetch alone")
        } setup: { _ = (SharedFixture.memoryContainer, SharedFixture.lookupKeys) }

        return all
    }
}

/// W12's data: 10,000 trips; this process changes trips of the first half, the other
/// writer trips of the second, so each can read its own changes back whatever the other
/// saved.
enum SharedFixture {
    static let n = 10_000

    /// The 1,000 distinct trips this process changes (indexes below n / 2).
    static let ownTrips = TripData.sample(1_000, of: n / 2, seed: 7)
    /// The 1,000 distinct trips the other writer changes (indexes from n / 2).
    static let otherTrips = TripData.sample(1_000, of: n / 2, seed: 12).map { $0 + n / 2 }

    /// The price this process's k-th save writes (never a generated price: those are below 10,000).
    static func ownPrice(_ k: Int) -> Double { 1_000_000 + Double(k) }
    /// The price the other writer's k-th save writes.
    static func otherPrice(_ k: Int) -> Double { 2_000_000 + Double(k) }

    /// A compacted document of the 10,000 trips, in a scratch folder of this process.
    static func document(_ name: String) throws -> URL {
        let url = Scratch.folder.appendingPathComponent("\(name).store")
        try DocumentFixture.write(TripData.trips(0..<n), to: url)
        return url
    }

    /// A SQLite file of the 10,000 trips (VACUUMed, WAL checkpointed).
    static func sqliteFile(_ name: String) throws -> String {
        let path = Scratch.folder.appendingPathComponent("\(name).sqlite").path
        try SQLiteFile.build(TripData.trips(0..<n), at: path)
        return path
    }

    /// The trips `indexes` names, fetched once: each save then only sets a price, so the
    /// catch-up a fetch would do before it is left to the save itself.
    static func trips(_ indexes: [Int], in context: ModelContext) throws -> [Trip] {
        try indexes.map { try SaveLoop.trip(named: TripData.name($0), in: context) }
    }

    // MARK: W12 catch-up

    static let lookupKeys = TripData.keys(10_000, of: n, seed: 2).map(TripData.name)
    /// A writable container on a document: it shares the file, so every fetch catches up.
    static let documentContainer = try! DocumentFixture.container(try! document("fetch"))
    /// The same trips in memory: no file to look at.
    static let memoryContainer = try! Ours.loaded(TripData.trips(0..<n))

    static func lookUp(in container: ModelContainer, _ probe: Probe, label: String) throws {
        try probe.measured {
            let context = ModelContext(container)
            var found = 0
            for key in lookupKeys {
                var descriptor = FetchDescriptor<Trip>(predicate: #Predicate { $0.name == key })
                descriptor.fetchLimit = 1
                found += try context.fetch(descriptor).count
            }
            try check(found == lookupKeys.count, "\(label) found every key")
        }
    }
}

extension SQLiteFile {
    /// W12's connections: `configuration()` (WAL, `synchronous = FULL`), waiting up to 30 s
    /// for the other process's write lock instead of failing with SQLITE_BUSY at once.
    static func sharedConfiguration() -> GRDB.Configuration {
        var configuration = Self.configuration()
        configuration.busyMode = .timeout(30)
        return configuration
    }

    /// One W12 save: a one-row UPDATE in its own transaction, begun IMMEDIATE (it takes
    /// the write lock first, so it waits for the other writer in the busy handler rather
    /// than failing to upgrade a read); returns the rows changed.
    static func updatePrice(_ price: Double, ofTrip id: Int, in queue: DatabaseQueue) throws -> Int {
        var changes = 0
        try queue.inTransaction(.immediate) { db in
            try db.cachedStatement(sql: "UPDATE trip SET price = ? WHERE id = ?").execute(arguments: [price, id])
            changes = db.changesCount
            return .commit
        }
        return changes
    }
}

/// How often W12 reads back (untimed): after the first save and every 250th.
private func w12ReadsBack(_ k: Int) -> Bool { k == 1 || k % 250 == 0 }

/// W12 ours: one container on the document, the other writer (when there is one) in its
/// own process on the same file; each iteration sets one held trip's price and saves.
final class SharedSaveLoop: @unchecked Sendable {
    static let ours = try! SharedSaveLoop(withOtherWriter: true)
    static let oursAlone = try! SharedSaveLoop(withOtherWriter: false)

    let url: URL
    let container: ModelContainer
    let context: ModelContext
    let trips: [Trip]
    let other: OtherWriterProcess?
    let label: String
    var saves = 0
    var otherSavesSeen = 0

    init(withOtherWriter: Bool) throws {
        label = withOtherWriter ? "W12 ours" : "W12 ours alone"
        url = try SharedFixture.document(withOtherWriter ? "shared" : "alone")
        container = try DocumentFixture.container(url)
        context = ModelContext(container)
        trips = try SharedFixture.trips(SharedFixture.ownTrips, in: context)
        // Measuring starts once the other writer has opened the document: from then on it saves.
        other = withOtherWriter ? try OtherWriterProcess.start(.ours, path: url.path) : nil
    }

    func save(_ probe: Probe) throws {
        saves += 1
        let trip = trips[saves % trips.count]
        let price = SharedFixture.ownPrice(saves)
        try probe.measured {
            trip.price = price
            try context.save()
        }
        if let other { probe.record(OtherWriterProcess.metric, try other.saves()) }
        if w12ReadsBack(saves) {
            let reader = ModelContext(try DocumentFixture.container(url, readOnly: true))
            let name = TripData.name(SharedFixture.ownTrips[saves % trips.count])
            try check(SaveLoop.trip(named: name, in: reader).price == price, "\(label) reads the change back after reopen")
            if let other, saves > 1 {
                // The other writer's last reported save is in the file too, and it goes on saving.
                let theirs = try other.saves()
                try check(theirs > otherSavesSeen, "\(label): the other writer saved meanwhile")
                otherSavesSeen = theirs
                let index = SharedFixture.otherTrips[theirs % SharedFixture.otherTrips.count]
                let back = try SaveLoop.trip(named: TripData.name(index), in: reader).price
                try check(back >= SharedFixture.otherPrice(theirs) && back < 3_000_000,
                          "\(label) reads the other writer's save \(theirs) back")
            }
        }
    }
}

/// W12 sqlite: one connection on the database, the other writer (when there is one) a
/// second SQLite process on the same file; each iteration updates one row.
final class SharedSQLiteSaveLoop: @unchecked Sendable {
    static let shared = try! SharedSQLiteSaveLoop(withOtherWriter: true)
    static let alone = try! SharedSQLiteSaveLoop(withOtherWriter: false)

    let path: String
    let queue: DatabaseQueue
    let other: OtherWriterProcess?
    let label: String
    var saves = 0
    var otherSavesSeen = 0

    init(withOtherWriter: Bool) throws {
        label = withOtherWriter ? "W12 sqlite" : "W12 sqlite alone"
        path = try SharedFixture.sqliteFile(withOtherWriter ? "shared" : "alone")
        queue = try DatabaseQueue(path: path, configuration: SQLiteFile.sharedConfiguration())
        try SQLiteFile.checkDurability(queue)
        other = withOtherWriter ? try OtherWriterProcess.start(.sqlite, path: path) : nil
    }

    func save(_ probe: Probe) throws {
        saves += 1
        let id = SharedFixture.ownTrips[saves % SharedFixture.ownTrips.count] + 1
        let price = SharedFixture.ownPrice(saves)
        var changes = 0
        try probe.measured {
            changes = try SQLiteFile.updatePrice(price, ofTrip: id, in: queue)
        }
        try check(changes == 1, "\(label) updated one row")
        if let other { probe.record(OtherWriterProcess.metric, try other.saves()) }
        if w12ReadsBack(saves) {
            var configuration = SQLiteFile.configuration(readonly: true)
            configuration.busyMode = .timeout(30)
            let reader = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? reader.close() }
            func storedPrice(_ id: Int) throws -> Double? {
                try reader.read { try Double.fetchOne($0, sql: "SELECT price FROM trip WHERE id = ?", arguments: [id]) }
            }
            try check(storedPrice(id) == price, "\(label) reads the change back after reopen")
            // (SQLite's busy handler may starve either writer for a while: the other
            // writer's progress is recorded, not required, here.)
            if let other, saves > 1, case let theirs = try other.saves(), theirs > otherSavesSeen {
                otherSavesSeen = theirs
                let back = try storedPrice(SharedFixture.otherTrips[theirs % SharedFixture.otherTrips.count] + 1) ?? 0
                try check(back >= SharedFixture.otherPrice(theirs) && back < 3_000_000,
                          "\(label) reads the other writer's save \(theirs) back")
            }
        }
    }
}

/// W12's other writer, as `runIfAsked` runs it: opens the document (or
/// SQLite file) at `path`, then changes one trip's price and saves, again and again, until
/// `shouldStop`. It changes the trips of `SharedFixture.otherTrips`, the k-th save writing
/// `SharedFixture.otherPrice(k)`, so the benchmark can read its saves back.
public enum OtherWriter {
    public enum Kind: String, Sendable {
        /// A container on our document.
        case ours
        /// A SQLite connection (WAL, `synchronous = FULL`).
        case sqlite
    }

    /// How often `progress` is called: every this many saves.
    public static let progressInterval = 20

    /// The environment variables that make an executable of this package W12's other
    /// writer: the kind, and the file it saves on.
    static let kindVariable = "OSD_W12_OTHER_WRITER"
    static let pathVariable = "OSD_W12_FILE"

    /// Set when stdin reaches its end: the loop stops after the save under way.
    private static let inputClosed = Atomic<Bool>(false)

    /// When this process was started as W12's other writer (`OtherWriterProcess` starts
    /// its own executable again with `kindVariable` and `pathVariable` set), saves until
    /// its stdin closes, printing "opened", "saves K" every `progressInterval` saves and
    /// "stopped K", and exits; otherwise returns at once. What the benchmark and Profile
    /// do first.
    public static func runIfAsked() {
        let environment = ProcessInfo.processInfo.environment
        guard let requested = environment[kindVariable] else { return }
        func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
        guard let kind = Kind(rawValue: requested), let path = environment[pathVariable] else {
            FileHandle.standardError.write(Data("\(kindVariable) must be ours or sqlite, with \(pathVariable) the file\n".utf8))
            exit(2)
        }
        Thread.detachNewThread {
            while !FileHandle.standardInput.availableData.isEmpty {}
            inputClosed.store(true, ordering: .relaxed)
        }
        do {
            let saves = try run(
                kind, path: path, shouldStop: { inputClosed.load(ordering: .relaxed) },
                opened: { say("opened") }, progress: { say("saves \($0)") })
            say("stopped \(saves)")
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("W12's other writer: \(error)\n".utf8))
            exit(1)
        }
    }

    /// Calls `opened` once it can save, `progress(k)` after every `progressInterval`-th
    /// save k, and returns the saves it made.
    public static func run(
        _ kind: Kind, path: String, shouldStop: () -> Bool, opened: () -> Void, progress: (Int) -> Void
    ) throws -> Int {
        let keys = SharedFixture.otherTrips
        var saves = 0
        switch kind {
        case .ours:
            let container = try DocumentFixture.container(URL(fileURLWithPath: path))
            let context = ModelContext(container)
            let trips = try SharedFixture.trips(keys, in: context)
            opened()
            while !shouldStop() {
                saves += 1
                trips[saves % trips.count].price = SharedFixture.otherPrice(saves)
                try context.save()
                if saves % progressInterval == 0 { progress(saves) }
            }
        case .sqlite:
            let queue = try DatabaseQueue(path: path, configuration: SQLiteFile.sharedConfiguration())
            try SQLiteFile.checkDurability(queue)
            opened()
            while !shouldStop() {
                saves += 1
                let changes = try SQLiteFile.updatePrice(SharedFixture.otherPrice(saves), ofTrip: keys[saves % keys.count] + 1, in: queue)
                try check(changes == 1, "the other SQLite writer updated one row")
                if saves % progressInterval == 0 { progress(saves) }
            }
            try queue.close()
        }
        return saves
    }
}

/// W12's other writer, this executable started again (`OtherWriter.runIfAsked`): started on
/// a file, it says "opened" once it
/// can save, "saves K" as it goes, and "stopped K" when its stdin closes.
final class OtherWriterProcess: @unchecked Sendable {
    /// The custom metric W12 records: the other writer's saves so far.
    static let metric = "otherSaves"

    private static let lock = NSLock()
    nonisolated(unsafe) private static var running: [OtherWriterProcess] = []

    let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    /// What the reader thread saw: "opened", the last "saves K", "stopped K", and the end.
    private let state = NSCondition()
    private var opened = false
    private var reported = 0
    private var stopped: Int?
    private var ended = false

    /// Starts the helper on `path` and waits until it has opened the file.
    static func start(_ kind: OtherWriter.Kind, path: String) throws -> OtherWriterProcess {
        let writer = OtherWriterProcess()
        writer.process.executableURL = try executable()
        writer.process.arguments = []
        writer.process.environment = ProcessInfo.processInfo.environment.merging(
            [OtherWriter.kindVariable: kind.rawValue, OtherWriter.pathVariable: path]) { _, new in new }
        writer.process.standardInput = writer.input
        writer.process.standardOutput = writer.output
        try writer.process.run()
        lock.withLock { running.append(writer) }
        Thread.detachNewThread { writer.readLines() }
        writer.state.lock()
        defer { writer.state.unlock() }
        let deadline = Date().addingTimeInterval(60)
        while !writer.opened && !writer.ended {
            guard writer.state.wait(until: deadline) else { break }
        }
        try check(writer.opened, "the other writer (\(kind.rawValue)) opened \(path)")
        return writer
    }

    /// This executable (the benchmark's or Profile's). (`Bundle.main`, which reads
    /// /proc/self/exe: package-benchmark starts the benchmark with a bare name in `argv[0]`.)
    static func executable() throws -> URL {
        guard let own = Bundle.main.executableURL else {
            throw CheckFailed(description: "W12 cannot find its own executable to start the other writer")
        }
        return own
    }

    /// The saves the helper has reported so far; throws if it ended.
    func saves() throws -> Int {
        state.lock()
        defer { state.unlock() }
        try check(!ended, "the other writer is still saving")
        return reported
    }

    /// Closes the helper's stdin, waits for its "stopped K" and its exit; returns K.
    @discardableResult
    func stop() throws -> Int {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        state.lock()
        while !ended { state.wait() }
        let count = stopped
        state.unlock()
        try check(process.terminationStatus == 0 && count != nil, "the other writer stopped cleanly")
        return count ?? 0
    }

    /// Stops every helper this process started (the workload's teardown).
    static func stopAll() throws {
        let writers = lock.withLock {
            defer { running = [] }
            return running
        }
        for writer in writers { try writer.stop() }
    }

    private func readLines() {
        let handle = output.fileHandleForReading
        var buffer = Data()
        while true {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            buffer.append(chunk)
            while let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                state.lock()
                let words = line.split(separator: " ")
                switch (words.first, words.count > 1 ? Int(words[1]) : nil) {
                case ("opened", _): opened = true
                case let ("saves", count?): reported = count
                case let ("stopped", count?): stopped = count; reported = count
                default: break
                }
                state.broadcast()
                state.unlock()
            }
        }
        state.lock()
        ended = true
        state.broadcast()
        state.unlock()
    }
}
