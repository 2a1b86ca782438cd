// W7–W9 of BENCHMARKS.md: documents (files), with their peers and limit. Registered by
// `Workload.all` (Workloads.swift) between W6 and W10, named like the others.
//
// Every file lives in a scratch folder under the system's temporary directory, one per
// benchmark process, which the workload's teardown removes. Durability is the default on
// both sides: ours `.full` (fsync on every save), the peer `PRAGMA synchronous = FULL`
// in WAL mode (SQLite syncs the WAL on every commit).
//
// Environment: BENCH_W7_SAVES (default 1,000; `Scripts/bench.sh --quick` sets 250) saves
// per W7 benchmark. When BENCH_N ≠ 10,000, "W7 10k ours" measures our save at N = 10,000 in
// the same run, for W7's second goal (p50 at N within 1.5× of p50 at 10k).
import CZstdBench
import Foundation
import GRDB
import OpenSwiftDataStore
import SwiftData
import TripData

extension Workload {
    /// W7, W8, W9, in table order.
    static func documentWorkloads() -> [Workload] {
        var all: [Workload] = []
        let n = Env.n
        func add(
            _ name: String, warmup: Int, iterations: Int, seconds: Int, metrics: [String] = [],
            _ iteration: @escaping @Sendable (Probe) async throws -> Void,
            setup: @escaping @Sendable () throws -> Void
        ) {
            all.append(Workload(
                name: name, warmupIterations: warmup, maxIterations: iterations, maxSeconds: seconds,
                customMetrics: metrics, setup: setup, iteration: iteration, teardown: { Scratch.remove() }))
        }

        // MARK: W1 document — W1's insert of N trips, saved into a new document

        // The save's journal frame holds every new row: what building the commit record
        // from the rows the commit holds (one pass, #40) spares. (No peer: W1 sqlite is
        // in memory.)
        add("W1 document ours", warmup: 1, iterations: 10, seconds: 60) { probe in
            let rows = Fixture.trips
            let url = Scratch.folder.appendingPathComponent("w1-\(UUID().uuidString).store")
            let container = try DocumentFixture.container(url)
            let context = ModelContext(container)
            try probe.measured {
                Ours.insert(rows, into: context)
                try context.save()
            }
            try check(ModelContext(try DocumentFixture.container(url, readOnly: true)).fetchCount(FetchDescriptor<Trip>()) == n,
                      "W1 document ours stored every trip")
            // (One new document per iteration: each goes at once, not at the teardown.)
            try? FileManager.default.removeItem(at: url)
            try? FileManager.default.removeItem(atPath: url.path + ".blobs")
        } setup: { _ = Fixture.trips }

        // MARK: W7 — a document of N trips: change 1 trip, save(); p50 of 1,000 saves

        // Each package-benchmark iteration is one save, so its p50 is the p50 of the saves.
        // The time budget covers the untimed read-back checks (a reopen of the whole
        // document) as well.
        // Ours records the resident set its container holds on the document (`rssHeldGrowth`,
        // measured when it opened) and how much each save grew it at its peak.
        let saves = Env.w7Saves
        add("W7 ours", warmup: 10, iterations: saves, seconds: 600, metrics: [RSS.peakGrowth, RSS.heldGrowth]) { probe in
            try SaveLoop.ours.save(probe, label: "W7 ours")
        } setup: { _ = SaveLoop.ours }

        if n != 10_000 {
            add("W7 10k ours", warmup: 10, iterations: saves, seconds: 600, metrics: [RSS.peakGrowth, RSS.heldGrowth]) { probe in
                try SaveLoop.oursAt10k.save(probe, label: "W7 10k ours")
            } setup: { _ = SaveLoop.oursAt10k }
        }

        add("W7 sqlite", warmup: 10, iterations: saves, seconds: 600) { probe in
            try SQLiteSaveLoop.shared.save(probe)
        } setup: { _ = SQLiteSaveLoop.shared }

        let compactions = "compactions"

        // MARK: W8 — open a document of N trips, then fetchCount; file size

        // Both sides record how much the open grew the resident set at its peak and how
        // much it holds after (`RSS.Growth`): the previous iteration's store is gone and
        // the heap's free pages are returned before the mark.
        let fileBytes = "fileBytes"
        add("W8 ours", warmup: 1, iterations: 10, seconds: 60, metrics: [fileBytes, RSS.peakGrowth, RSS.heldGrowth]) { probe in
            let url = DocumentFixture.document
            var container: ModelContainer?
            var count = 0
            let growth = RSS.Growth()
            try probe.measured {
                let opened = try ModelContainer(
                    for: Trip.self, BucketListItem.self, configurations: ModelConfiguration(url: url))
                count = try ModelContext(opened).fetchCount(FetchDescriptor<Trip>())
                container = opened
            }
            try check(count == n, "W8 ours counted every trip")
            probe.record(RSS.peakGrowth, growth.peak)
            probe.record(RSS.heldGrowth, growth.held())
            // Closed outside the measurement, before the next iteration opens it again.
            blackHole(container)
            container = nil
            probe.record(fileBytes, Files.documentBytes(url))
        } setup: { _ = DocumentFixture.document }

        add("W8 sqlite", warmup: 1, iterations: 10, seconds: 60, metrics: [fileBytes, RSS.peakGrowth, RSS.heldGrowth]) { probe in
            let path = DocumentFixture.sqliteFile
            var queue: DatabaseQueue?
            var trips: [TripRow] = []
            let growth = RSS.Growth()
            try probe.measured {
                let opened = try DatabaseQueue(path: path, configuration: SQLiteFile.configuration())
                trips = try opened.read { db in
                    let statement = try db.makeStatement(sql: "SELECT \(SQLitePeer.columns) FROM trip")
                    var trips: [TripRow] = []
                    let rows = try GRDB.Row.fetchCursor(statement)
                    while let row = try rows.next() { trips.append(SQLitePeer.trip(row)) }
                    return trips
                }
                queue = opened
            }
            try check(trips.count == n, "W8 sqlite read every trip")
            probe.record(RSS.peakGrowth, growth.peak)
            probe.record(RSS.heldGrowth, growth.held())
            try queue?.close()
            queue = nil
            probe.record(fileBytes, Files.sqliteBytes(path))
        } setup: { _ = DocumentFixture.sqliteFile }

        // MARK: W9 saves — W7's save, 10,000 times, while compactions run in the background

        // Each iteration is one save; the document compacts every 256 KiB of journal, so
        // several compactions of the whole document overlap the saves. The goal is on the
        // spread: max ≤ 10× p50 (no save waits for a whole rewrite).
        add("W9 saves ours", warmup: 10, iterations: Env.w7Saves * 10, seconds: 900, metrics: [compactions]) { probe in
            try CompactingSaveLoop.shared.save(probe)
        } setup: { _ = CompactingSaveLoop.shared }

        // The same saves with compaction off: this disk's own tail in the same run. A
        // virtual disk's fsync alone has outliers of 10–30× p50 now and then, so
        // whether compaction adds to the tail is read against this row.
        add("W9 saves limit", warmup: 10, iterations: Env.w7Saves * 10, seconds: 900, metrics: [compactions]) { probe in
            try CompactingSaveLoop.uncompacted.save(probe)
        } setup: { _ = CompactingSaveLoop.uncompacted }

        // MARK: W9 — full save / compaction of N trips; limit: raw zstd on the same bytes

        let snapshotBytes = "snapshotBytes"
        let compressedBytes = "compressedBytes"
        // Ours also records the resident set its container holds (as W7) and how much each
        // compaction grew it at its peak.
        add(
            "W9 ours", warmup: 1, iterations: 10, seconds: 90,
            metrics: [snapshotBytes, compressedBytes, RSS.peakGrowth, RSS.heldGrowth]
        ) { probe in
            try Compaction.shared.compact(probe)
            probe.record(snapshotBytes, Compaction.uncompressedBytes)
            probe.record(compressedBytes, Files.documentBytes(Compaction.shared.url))
        } setup: { _ = (Compaction.shared, Compaction.uncompressedBytes) }

        add("W9 limit", warmup: 1, iterations: 10, seconds: 60, metrics: [snapshotBytes, compressedBytes]) { probe in
            let source = Compaction.uncompressedSnapshot
            let bound = ZSTD_compressBound(source.count)
            // The output is allocated (and its pages touched) outside the measurement.
            var output = [UInt8](repeating: 0, count: bound)
            var written = 0
            probe.measured {
                written = source.withUnsafeBytes { input in
                    output.withUnsafeMutableBytes { out in
                        ZSTD_compress(out.baseAddress, bound, input.baseAddress, input.count, 3)
                    }
                }
            }
            try check(ZSTD_isError(written) == 0, "W9 limit compressed")
            // Round trip, untimed: the bytes decompress to the snapshot.
            var back = [UInt8](repeating: 0, count: source.count)
            let size = back.withUnsafeMutableBytes { out in
                output.withUnsafeBytes { ZSTD_decompress(out.baseAddress, source.count, $0.baseAddress, written) }
            }
            try check(ZSTD_isError(size) == 0 && size == source.count && back == source, "W9 limit round trip")
            probe.record(snapshotBytes, source.count)
            probe.record(compressedBytes, written)
        } setup: { _ = Compaction.uncompressedSnapshot }

        return all
    }
}

extension Env {
    /// W7's saves per benchmark (package-benchmark iterations, after 10 warm-up saves).
    static let w7Saves = int("BENCH_W7_SAVES") ?? 1_000
}

/// The process's scratch folder for W7–W9 (created on first use, removed by teardown).
enum Scratch {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var created: URL?

    static var folder: URL {
        lock.withLock {
            if let created { return created }
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("osd-bench-\(UUID().uuidString)")
            try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            created = url
            return url
        }
    }

    static func remove() {
        lock.withLock {
            if let created { try? FileManager.default.removeItem(at: created) }
            created = nil
        }
    }
}

enum Files {
    static func size(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }

    static func inode(_ path: String) -> UInt64 {
        var info = stat()
        return stat(path, &info) == 0 ? UInt64(info.st_ino) : 0
    }

    /// Our document: the file and its `.blobs` folder, if any.
    static func documentBytes(_ url: URL) -> Int {
        var total = size(url.path)
        let blobs = url.path + ".blobs"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: blobs)) ?? [] {
            total += size(blobs + "/" + name)
        }
        return total
    }

    /// SQLite's database file and its WAL.
    static func sqliteBytes(_ path: String) -> Int { size(path) + size(path + "-wal") }
}

/// The SQLite files of W7 / W8: WAL mode, `synchronous = FULL`, the schema and indexes of
/// the in-memory peer.
enum SQLiteFile {
    /// Not `configuration.journalMode = .wal`: with it GRDB sets `synchronous = NORMAL`
    /// after `prepareDatabase` runs, and NORMAL does not sync the WAL on commit.
    static func configuration(readonly: Bool = false) -> GRDB.Configuration {
        var configuration = GRDB.Configuration()
        configuration.readonly = readonly
        if !readonly {
            configuration.prepareDatabase { db in
                try db.execute(sql: "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL")
            }
        }
        return configuration
    }

    /// Throws unless the connection has WAL mode and `synchronous = FULL` (2).
    static func checkDurability(_ queue: DatabaseQueue) throws {
        let (mode, synchronous) = try queue.read { db in
            (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA synchronous"))
        }
        try check(mode == "wal" && synchronous == 2, "the SQLite file is in WAL mode with synchronous = FULL")
    }

    /// Writes `rows` to a new database at `path` in one transaction, then VACUUMs it and
    /// checkpoints the WAL away: the peer at its most compact, like our compacted document.
    static func build(_ rows: [TripRow], at path: String) throws {
        let queue = try DatabaseQueue(path: path, configuration: configuration())
        try queue.write { db in
            try SQLitePeer.createSchema(db)
            try SQLitePeer.insert(rows, into: db)
        }
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "VACUUM")
            try db.checkpoint(.truncate)
        }
        try queue.close()
    }
}

/// The documents (and SQLite files) W7–W9 start from, built once per process.
enum DocumentFixture {
    /// A document of N trips, compacted (a snapshot, no journal), and closed.
    static let document: URL = try! build(count: Env.n, name: "trips")
    /// The same at N = 10,000 ("W7 10k ours").
    static let documentAt10k: URL = try! build(count: 10_000, name: "trips-10k")
    /// A SQLite database of N trips.
    static let sqliteFile: String = {
        let path = Scratch.folder.appendingPathComponent("trips.sqlite").path
        try! SQLiteFile.build(TripData.trips(0..<Env.n), at: path)
        return path
    }()

    static func build(count: Int, name: String) throws -> URL {
        let url = Scratch.folder.appendingPathComponent("\(name).store")
        try write(TripData.trips(0..<count), to: url)
        return url
    }

    /// Inserts `rows` into a new document at `url` with one save, compacts it, and closes
    /// it (the container and its context go out of scope, which releases the file's lock).
    static func write(_ rows: [TripRow], to url: URL) throws {
        let container = try ModelContainer(
            for: Trip.self, BucketListItem.self, configurations: ModelConfiguration(url: url))
        let context = ModelContext(container)
        Ours.insert(rows, into: context)
        try context.save()
        try container.compactDocument()
    }

    static func container(_ url: URL, readOnly: Bool = false) throws -> ModelContainer {
        try ModelContainer(
            for: Trip.self, BucketListItem.self, configurations: ModelConfiguration(url: url, allowsSave: !readOnly))
    }
}

/// The price W7's k-th save writes: never a generated price (those are below 10,000).
private func w7Price(_ k: Int) -> Double { 1_000_000 + Double(k) }

/// How often W7 reopens the file to read the changed trip back (untimed): after the first
/// save and every 250th.
private func w7ReadsBack(_ k: Int) -> Bool { k == 1 || k % 250 == 0 }

/// W7 ours: one container on the document, as an app holds it; each iteration changes one
/// trip (looked up by its unique name, untimed) and saves.
final class SaveLoop: @unchecked Sendable {
    static let ours = try! SaveLoop(DocumentFixture.document, n: Env.n)
    static let oursAt10k = try! SaveLoop(DocumentFixture.documentAt10k, n: 10_000)

    let url: URL
    let container: ModelContainer
    let context: ModelContext
    let keys: [Int]
    var saves = 0
    /// The resident set the open container holds (its growth from before the open).
    let held: Int

    init(_ url: URL, n: Int) throws {
        self.url = url
        let growth = RSS.Growth()
        container = try DocumentFixture.container(url)
        context = ModelContext(container)
        held = growth.held()
        keys = TripData.keys(1_000, of: n, seed: 7)
    }

    func save(_ probe: Probe, label: String) throws {
        saves += 1
        let key = TripData.name(keys[saves % keys.count])
        let price = w7Price(saves)
        let trip = try Self.trip(named: key, in: context)
        let (before, inode) = (Files.size(url.path), Files.inode(url.path))
        // (No trim before a save: it would move the save's own page faults.)
        let growth = RSS.Growth(trimming: false)
        try probe.measured {
            trip.price = price
            try context.save()
        }
        probe.record(RSS.peakGrowth, growth.peak)
        probe.record(RSS.heldGrowth, held)
        // A save appends a frame, unless the journal outgrew the snapshot and the save
        // compacted (a new file; not with W7's default sizes).
        try check(Files.size(url.path) > before || Files.inode(url.path) != inode, "\(label) wrote the change")
        if w7ReadsBack(saves) {
            let reader = try DocumentFixture.container(url, readOnly: true)
            try check(Self.trip(named: key, in: ModelContext(reader)).price == price, "\(label) reads the change back after reopen")
        }
    }

    static func trip(named key: String, in context: ModelContext) throws -> Trip {
        var descriptor = FetchDescriptor<Trip>(predicate: #Predicate { $0.name == key })
        descriptor.fetchLimit = 1
        guard let trip = try context.fetch(descriptor).first else {
            throw CheckFailed(description: "check failed: trip \(key) exists")
        }
        return trip
    }
}

/// W7 sqlite: one connection on the database; each iteration updates one row in its own
/// transaction.
final class SQLiteSaveLoop: @unchecked Sendable {
    static let shared = try! SQLiteSaveLoop()

    let path: String
    let queue: DatabaseQueue
    let keys = TripData.keys(1_000, of: Env.n, seed: 7)
    var saves = 0

    init() throws {
        path = DocumentFixture.sqliteFile
        queue = try DatabaseQueue(path: path, configuration: SQLiteFile.configuration())
        try SQLiteFile.checkDurability(queue)
    }

    func save(_ probe: Probe) throws {
        saves += 1
        let id = keys[saves % keys.count] + 1
        let price = w7Price(saves)
        var changes = 0
        try probe.measured {
            try queue.write { db in
                try db.cachedStatement(sql: "UPDATE trip SET price = ? WHERE id = ?").execute(arguments: [price, id])
                changes = db.changesCount
            }
        }
        try check(changes == 1, "W7 sqlite updated one row")
        if w7ReadsBack(saves) {
            let reader = try DatabaseQueue(path: path, configuration: SQLiteFile.configuration(readonly: true))
            let back = try reader.read { try Double.fetchOne($0, sql: "SELECT price FROM trip WHERE id = ?", arguments: [id]) }
            try reader.close()
            try check(back == price, "W7 sqlite reads the change back after reopen")
        }
    }
}

/// W9 saves: W7's save on a copy of the document whose journal is compacted every
/// 256 KiB (64 KiB in quick mode), so compactions of the whole document run beside the saves.
final class CompactingSaveLoop: @unchecked Sendable {
    static let shared = try! CompactingSaveLoop(DocumentFixture.document)
    /// The limit: the same saves on a copy that never compacts.
    static let uncompacted = try! CompactingSaveLoop(DocumentFixture.document, compacting: false)

    let url: URL
    let container: ModelContainer
    let context: ModelContext
    let keys: [Int]
    var saves = 0
    var lastInode: UInt64
    var compactions = 0

    /// Whether the document compacts (every 256 KiB of journal) while saving.
    let compacting: Bool

    init(_ original: URL, compacting: Bool = true) throws {
        self.compacting = compacting
        url = original.deletingLastPathComponent().appendingPathComponent(compacting ? "w9-saves.store" : "w9-saves-limit.store")
        try? FileManager.default.removeItem(at: url)
        try FileManager.default.copyItem(at: original, to: url)
        container = try DocumentFixture.container(url)
        // Quick mode's 2,500 saves write about 300 KiB of journal: a smaller step there
        // still gives several compactions.
        container.documentCompactionPolicy = compacting
            ? .init(ratio: 0, minimumJournalBytes: Env.w7Saves >= 1_000 ? 256 << 10 : 64 << 10)
            : .init(ratio: .infinity, minimumJournalBytes: .max)
        context = ModelContext(container)
        keys = TripData.keys(1_000, of: Env.n, seed: 11)
        lastInode = Files.inode(url.path)
    }

    func save(_ probe: Probe) throws {
        saves += 1
        let key = TripData.name(keys[saves % keys.count])
        let price = w7Price(saves)
        let trip = try SaveLoop.trip(named: key, in: context)
        try probe.measured {
            trip.price = price
            try context.save()
        }
        // A finished compaction renamed a new file over the document.
        let inode = Files.inode(url.path)
        if inode != lastInode {
            compactions += 1
            lastInode = inode
        }
        probe.record("compactions", compactions)
        if saves % 2_500 == 0 {
            container.waitForDocumentCompaction()
            if Files.inode(url.path) != lastInode {
                compactions += 1
                lastInode = Files.inode(url.path)
            }
            let reader = try DocumentFixture.container(url, readOnly: true)
            try check(SaveLoop.trip(named: key, in: ModelContext(reader)).price == price, "W9 saves reads the change back after reopen")
            try check(compacting ? compactions > 0 : compactions == 0, "W9 saves compacted while saving, its limit did not")
        }
    }
}

/// W9: a container on a document of N trips; each iteration compacts it.
final class Compaction: @unchecked Sendable {
    static let shared = try! Compaction(DocumentFixture.document)

    /// The snapshot of the document with every frame stored uncompressed: the bytes
    /// compaction hands to zstd (the limit compresses exactly these).
    static let uncompressedSnapshot: [UInt8] = try! uncompressed(DocumentFixture.document)

    /// Its size (W9 ours records it; the bytes themselves are not kept).
    static let uncompressedBytes: Int = try! uncompressed(DocumentFixture.document).count

    static func uncompressed(_ url: URL) throws -> [UInt8] {
        try Document.uncompressedSnapshot(of: DocumentReader.read(path: url.path).version)
    }

    let url: URL
    let container: ModelContainer
    var compactions = 0
    /// The resident set the open container holds (its growth from before the open).
    let held: Int

    init(_ url: URL) throws {
        self.url = url
        let growth = RSS.Growth()
        container = try DocumentFixture.container(url)
        held = growth.held()
    }

    func compact(_ probe: Probe) throws {
        compactions += 1
        let before = Files.inode(url.path)
        // (No trim before: it would move the compaction's own page faults.)
        let growth = RSS.Growth(trimming: false)
        try probe.measured {
            try container.compactDocument()
        }
        probe.record(RSS.peakGrowth, growth.peak)
        probe.record(RSS.heldGrowth, held)
        // Compaction renames a fresh file over the document.
        try check(Files.inode(url.path) != before, "W9 ours wrote a new file")
        if compactions == 1 || compactions % 4 == 0 {
            let contents = try DocumentReader.read(path: url.path, blobs: .skip)
            let trips = contents.schema.entities.firstIndex { $0.name == "Trip" }
            try check(contents.journalFrames == 0, "W9 ours left no journal")
            try check(trips.map { contents.version.tables[$0].count } == Env.n, "W9 ours kept every trip")
        }
    }
}
