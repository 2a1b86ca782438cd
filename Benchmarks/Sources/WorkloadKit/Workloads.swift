// The workloads of BENCHMARKS.md, as plain functions: the benchmark target registers each
// with package-benchmark, the Profile executable runs one under valgrind. Each workload
// registers ours, its SQLite peer and (where BENCHMARKS.md says so) the limit as separate
// benchmarks of the same run, named "<workload> <role>", role ∈ {ours, sqlite, limit};
// Scripts/bench.sh pairs them by name.
//
// Environment: BENCH_N (default 1,000,000) trips; BENCH_N_W6 (default min(BENCH_N, 100,000))
// trips with bucket lists for W6; BENCH_W7_SAVES (default 1,000) saves for W7. The document
// workloads W7–W9 are in DocumentWorkloads.swift, W5 (R-tree: window, build, search and
// nearest-neighbour queries) in SpatialWorkloads.swift, W11 (64 writers saving durably at
// once: group commit) in GroupCommitWorkloads.swift, W12 (a document shared by two
// writer processes, and what sharing costs a fetch) in SharedWorkloads.swift.
import CZstdBench
import Foundation
import GRDB
import SwiftData
import TripData
#if canImport(Glibc)
import Glibc
#endif

extension Workload {
    /// The suite, in table order.
    public static var all: [Workload] {
    var all: [Workload] = []
    let n = Env.n
    struct Config {
        var warmup: Int, iterations: Int, seconds: Int, extra: [String] = []
    }
    func config(warmup: Int, iterations: Int, seconds: Int, extra: [String] = []) -> Config {
        Config(warmup: warmup, iterations: iterations, seconds: seconds, extra: extra)
    }
    func add(
        _ name: String, configuration c: Config, _ iteration: @escaping @Sendable (Probe) async throws -> Void,
        setup: @escaping @Sendable () throws -> Void
    ) {
        all.append(Workload(
            name: name, warmupIterations: c.warmup, maxIterations: c.iterations, maxSeconds: c.seconds,
            customMetrics: c.extra, setup: setup, iteration: iteration))
    }

    // MARK: W1 — insert N trips, one save() (in memory)

    let heavy = config(warmup: 0, iterations: 5, seconds: 30)
    add("W1 ours", configuration: heavy) { probe in
        let rows = Fixture.trips
        let container = try Ours.container()
        let context = ModelContext(container)
        try probe.measured {
            Ours.insert(rows, into: context)
            try context.save()
        }
        try check(context.fetchCount(FetchDescriptor<Trip>()) == n, "W1 ours stored every trip")
    } setup: { _ = Fixture.trips }

    add("W1 sqlite", configuration: heavy) { probe in
        let rows = Fixture.trips
        let queue = try SQLitePeer.memory()
        try probe.measured {
            try queue.write { db in try SQLitePeer.insert(rows, into: db) }
        }
        try check(queue.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM trip") } == n, "W1 sqlite stored every trip")
    } setup: { _ = Fixture.trips }

    // MARK: W2 — 10,000 unique-key lookups, fetchLimit = 1

    let lookups = config(warmup: 1, iterations: 20, seconds: 15)
    add("W2 ours", configuration: lookups) { probe in
        try probe.measured {
            let context = ModelContext(Fixture.ours)
            var found = 0
            for key in Fixture.lookupKeys {
                var descriptor = FetchDescriptor<Trip>(predicate: #Predicate { $0.name == key })
                descriptor.fetchLimit = 1
                found += try context.fetch(descriptor).count
            }
            try check(found == Fixture.lookupKeys.count, "W2 ours found every key")
        }
    } setup: { _ = (Fixture.ours, Fixture.lookupKeys) }

    add("W2 sqlite", configuration: lookups) { probe in
        try probe.measured {
            let found = try Fixture.sqlite.read { db in
                let statement = try db.makeStatement(sql: "SELECT \(SQLitePeer.columns) FROM trip WHERE name = ? LIMIT 1")
                var found = 0
                for key in Fixture.lookupKeys {
                    statement.setUncheckedArguments([key])
                    let rows = try Row.fetchCursor(statement)
                    while let row = try rows.next() {
                        blackHole(SQLitePeer.trip(row))
                        found += 1
                    }
                }
                return found
            }
            try check(found == Fixture.lookupKeys.count, "W2 sqlite found every key")
        }
    } setup: { _ = (Fixture.sqlite, Fixture.lookupKeys) }

    // MARK: W3 — 1,000 range queries on startDate, sorted, fetchLimit = 50

    let ranges = config(warmup: 0, iterations: 10, seconds: 20)
    add("W3 ours", configuration: ranges) { probe in
        try probe.measured {
            let context = ModelContext(Fixture.ours)
            var found = 0
            for (lo, hi) in Fixture.dateWindows {
                var descriptor = FetchDescriptor<Trip>(
                predicate: #Predicate { $0.startDate >= lo && $0.startDate < hi },
                sortBy: [SortDescriptor(\.startDate)])
                descriptor.fetchLimit = 50
                found += try context.fetch(descriptor).count
            }
            try check(found == Fixture.expectedRangeHits, "W3 ours found the expected rows")
        }
    } setup: { _ = (Fixture.ours, Fixture.dateWindows, Fixture.expectedRangeHits) }

    add("W3 sqlite", configuration: ranges) { probe in
        try probe.measured {
            let found = try Fixture.sqlite.read { db in
                let statement = try db.makeStatement(sql: """
                SELECT \(SQLitePeer.columns) FROM trip WHERE startDate >= ? AND startDate < ?
                ORDER BY startDate LIMIT 50
                """)
                var found = 0
                for (lo, hi) in Fixture.dateWindows {
                    statement.setUncheckedArguments([lo.timeIntervalSinceReferenceDate, hi.timeIntervalSinceReferenceDate])
                    var page: [TripRow] = []
                    page.reserveCapacity(50)
                    let rows = try Row.fetchCursor(statement)
                    while let row = try rows.next() { page.append(SQLitePeer.trip(row)) }
                    found += page.count
                }
                return found
            }
            try check(found == Fixture.expectedRangeHits, "W3 sqlite found the expected rows")
        }
    } setup: { _ = (Fixture.sqlite, Fixture.dateWindows, Fixture.expectedRangeHits) }

    // MARK: W4 — unindexed scan `price > p && isFavorite`: fetchCount and fetch

    let scans = config(warmup: 1, iterations: 30, seconds: 10)
    let price = Fixture.scanPrice
    add("W4 count ours", configuration: scans) { probe in
        try probe.measured {
            let context = ModelContext(Fixture.ours)
            let count = try context.fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { $0.price > price && $0.isFavorite }))
            try check(count == Fixture.expectedScanHits, "W4 count ours")
        }
    } setup: { _ = (Fixture.ours, Fixture.expectedScanHits) }

    add("W4 count sqlite", configuration: scans) { probe in
        try probe.measured {
            let count = try Fixture.sqlite.read { db in
                try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM trip WHERE price > ? AND isFavorite"), arguments: [price])
            }
            try check(count == Fixture.expectedScanHits, "W4 count sqlite")
        }
    } setup: { _ = (Fixture.sqlite, Fixture.expectedScanHits) }

    add("W4 count limit", configuration: scans) { probe in
        try probe.measured {
            var count = 0
            for trip in Fixture.trips where trip.price > price && trip.isFavorite { count += 1 }
            try check(count == Fixture.expectedScanHits, "W4 count limit")
        }
    } setup: { _ = (Fixture.trips, Fixture.expectedScanHits) }

    add("W4 fetch ours", configuration: scans) { probe in
        try probe.measured {
            let context = ModelContext(Fixture.ours)
            let trips = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.price > price && $0.isFavorite }))
            try check(trips.count == Fixture.expectedScanHits, "W4 fetch ours")
        }
    } setup: { _ = (Fixture.ours, Fixture.expectedScanHits) }

    add("W4 fetch sqlite", configuration: scans) { probe in
        try probe.measured {
            let trips = try Fixture.sqlite.read { db in
                let statement = try db.cachedStatement(sql: "SELECT \(SQLitePeer.columns) FROM trip WHERE price > ? AND isFavorite")
                statement.setUncheckedArguments([price])
                var trips: [TripRow] = []
                let rows = try Row.fetchCursor(statement)
                while let row = try rows.next() { trips.append(SQLitePeer.trip(row)) }
                return trips
            }
            try check(trips.count == Fixture.expectedScanHits, "W4 fetch sqlite")
        }
    } setup: { _ = (Fixture.sqlite, Fixture.expectedScanHits) }

    add("W4 fetch limit", configuration: scans) { probe in
        try probe.measured {
            var trips: [TripRow] = []
            for trip in Fixture.trips where trip.price > price && trip.isFavorite { trips.append(trip) }
            try check(trips.count == Fixture.expectedScanHits, "W4 fetch limit")
        }
    } setup: { _ = (Fixture.trips, Fixture.expectedScanHits) }

    // MARK: W5 — 1,000 bounding-box queries through the R-tree (SpatialWorkloads.swift)

    all += spatialWorkloads()

    // MARK: W6 — fetch 1,000 trips and walk bucketList; cascade-delete 10,000 trips

    add("W6 walk ours", configuration: config(warmup: 1, iterations: 30, seconds: 10)) { probe in
        try probe.measured {
            let context = ModelContext(Fixture.oursWithItems)
            var descriptor = FetchDescriptor<Trip>()
            descriptor.fetchLimit = 1_000
            var items = 0, done = 0, bytes = 0
            for trip in try context.fetch(descriptor) {
                for item in trip.bucketList {
                    items += 1
                    if item.done { done += 1 }
                    bytes += item.title.utf8.count
                }
            }
            blackHole((done, bytes))
            try check(items == Fixture.expectedWalkItems, "W6 walk ours saw every item")
        }
    } setup: { _ = (Fixture.oursWithItems, Fixture.expectedWalkItems) }

    add("W6 walk sqlite", configuration: config(warmup: 1, iterations: 30, seconds: 10)) { probe in
        try probe.measured {
            let items = try Fixture.sqliteWithItems.read { db in
                let tripStatement = try db.cachedStatement(sql: "SELECT id, \(SQLitePeer.columns) FROM trip ORDER BY id LIMIT 1000")
                let itemStatement = try db.cachedStatement(sql: "SELECT title, done FROM item WHERE tripId = ?")
                var trips: [(Int64, TripRow)] = []
                trips.reserveCapacity(1_000)
                let rows = try Row.fetchCursor(tripStatement)
                while let row = try rows.next() { trips.append((row[0], SQLitePeer.trip(row, offset: 1))) }
                var items = 0, done = 0, bytes = 0
                for index in trips.indices {
                    itemStatement.setUncheckedArguments([trips[index].0])
                    let itemRows = try Row.fetchCursor(itemStatement)
                    while let row = try itemRows.next() {
                        trips[index].1.bucketList.append(BucketItemRow(title: row[0], done: row[1]))
                    }
                    for item in trips[index].1.bucketList {
                        items += 1
                        if item.done { done += 1 }
                        bytes += item.title.utf8.count
                    }
                }
                blackHole((done, bytes))
                return items
            }
            try check(items == Fixture.expectedWalkItems, "W6 walk sqlite saw every item")
        }
    } setup: { _ = (Fixture.sqliteWithItems, Fixture.expectedWalkItems) }

    let deletes = config(warmup: 0, iterations: 5, seconds: 20)
    add("W6 delete ours", configuration: deletes) { probe in
        let container = try Ours.loaded(Fixture.tripsWithItems, items: true)
        let context = ModelContext(container)
        var victims: [Trip] = []
        victims.reserveCapacity(Fixture.deleteVictims.count)
        for index in Fixture.deleteVictims {
            let key = TripData.name(index)
            var descriptor = FetchDescriptor<Trip>(predicate: #Predicate { $0.name == key })
            descriptor.fetchLimit = 1
            victims.append(contentsOf: try context.fetch(descriptor))
        }
        try probe.measured {
            for trip in victims { context.delete(trip) }
            try context.save()
        }
        let after = ModelContext(container)
        try check(after.fetchCount(FetchDescriptor<Trip>()) == Env.nW6 - victims.count, "W6 delete ours removed the trips")
        try check(after.fetchCount(FetchDescriptor<BucketListItem>()) == Fixture.itemsLeftAfterDelete, "W6 delete ours cascaded")
    } setup: { _ = (Fixture.tripsWithItems, Fixture.deleteVictims, Fixture.itemsLeftAfterDelete) }

    add("W6 delete sqlite", configuration: deletes) { probe in
        let queue = try SQLitePeer.loaded(Fixture.tripsWithItems, items: true)
        try probe.measured {
            try queue.write { db in
                let statement = try db.makeStatement(sql: "DELETE FROM trip WHERE id = ?")
                for index in Fixture.deleteVictims {
                    statement.setUncheckedArguments([index + 1])
                    try statement.execute()
                }
            }
        }
        try queue.read { db in
            try check(Int.fetchOne(db, sql: "SELECT COUNT(*) FROM trip") == Env.nW6 - Fixture.deleteVictims.count, "W6 delete sqlite removed the trips")
            try check(Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item") == Fixture.itemsLeftAfterDelete, "W6 delete sqlite cascaded")
        }
    } setup: { _ = (Fixture.tripsWithItems, Fixture.deleteVictims, Fixture.itemsLeftAfterDelete) }

    // MARK: W7, W8, W9 — documents (DocumentWorkloads.swift)

    all += documentWorkloads()

    // MARK: W10 — 8 writers each insert `perWriter` trips in saves of 1,000

    let writers = config(warmup: 0, iterations: 5, seconds: 30)
    add("W10 ours", configuration: writers) { probe in
        let container = try Ours.container()
        let slices = Fixture.writerSlices
        try await probe.measuredAsync {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for slice in slices {
                    group.addTask {
                        let writer = TripWriter(modelContainer: container)
                        try await writer.insert(slice, batch: 1_000)
                    }
                }
                try await group.waitForAll()
            }
        }
        try check(ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == Env.writers * Env.perWriter, "W10 ours stored every trip")
    } setup: { _ = Fixture.writerSlices }

    add("W10 sqlite", configuration: writers) { probe in
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("osd-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = Configuration()
        // Ours is in memory, so no fsync: the same policy for the peer.
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = OFF") }
        let pool = try DatabasePool(path: directory.appendingPathComponent("trips.sqlite").path, configuration: configuration)
        try await pool.write { try SQLitePeer.createSchema($0) }
        let slices = Fixture.writerSlices
        try await probe.measuredAsync {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (writer, slice) in slices.enumerated() {
                    group.addTask {
                        var start = 0
                        while start < slice.count {
                            let batch = start..<min(start + 1_000, slice.count)
                            let firstID = writer * Env.perWriter + start + 1
                            try await pool.write { db in try SQLitePeer.insert(slice[batch], firstID: firstID, into: db) }
                            start = batch.upperBound
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        let count = try await pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM trip") }
        try check(count == Env.writers * Env.perWriter, "W10 sqlite stored every trip")
        try pool.close()
    } setup: { _ = Fixture.writerSlices }

    // MARK: W11 — 64 writers saving at once, durably (GroupCommitWorkloads.swift)

    all += groupCommitWorkloads()

    // MARK: W12 — two processes saving on one document; a fetch's catch-up (SharedWorkloads.swift)

    all += sharedWorkloads()

    // MARK: M1 — RSS holding N trips with the indexes

    let memory = RSS.peakGrowth
    let held = RSS.heldGrowth
    let once = config(warmup: 0, iterations: 1, seconds: 1, extra: [memory, held])
    add("M1 ours", configuration: once) { probe in
        let rows = Fixture.trips
        let heapBefore = RSS.heapInUse()
        let before = RSS.reset()
        var container: ModelContainer? = try Ours.loaded(rows)
        probe.record(memory, RSS.peak() - before)
        RSS.trim()
        probe.record(held, RSS.current() - before)
        // BENCH_STORAGE=1: what each attribute's column takes a trip (indexes aside).
        if Env.int("BENCH_STORAGE") == 1, let container {
            let heap = "heap in use: \(RSS.heapInUse() - heapBefore) B more\n"
            FileHandle.standardError.write(Data((container._storageReport + "\n" + heap).utf8))
        }
        blackHole(container)
        container = nil
    } setup: { _ = Fixture.trips }

    add("M1 sqlite", configuration: once) { probe in
        let rows = Fixture.trips
        let before = RSS.reset()
        var queue: DatabaseQueue? = try SQLitePeer.loaded(rows)
        probe.record(memory, RSS.peak() - before)
        RSS.trim()
        probe.record(held, RSS.current() - before)
        blackHole(queue)
        queue = nil
    } setup: { _ = Fixture.trips }
    return all
    }
}

/// The run's sizes, from the environment.
enum Env {
    static let n = int("BENCH_N") ?? 1_000_000
    static let nW6 = int("BENCH_N_W6") ?? min(n, 100_000)
    static let writers = 8
    /// 50,000 per writer in the full run; N / 10 (at least 1,000) when N is smaller (quick mode).
    static let perWriter = min(50_000, max(1_000, n / 10))

    static func int(_ name: String) -> Int? {
        ProcessInfo.processInfo.environment[name].flatMap { Int($0.replacingOccurrences(of: "_", with: "")) }
    }
}

/// Data and loaded stores, built once per benchmark process (package-benchmark runs each
/// benchmark in its own process), outside the measurement.
enum Fixture {
    static let trips = TripData.trips(0..<Env.n)
    static let ours = try! Ours.loaded(trips)
    static let sqlite = try! SQLitePeer.loaded(trips)

    static let lookupKeys = TripData.keys(10_000, of: Env.n, seed: 2).map(TripData.name)

    static let dateWindows = TripData.dateWindows(1_000, days: 30, seed: 3)
    static let expectedRangeHits: Int = {
        let dates = trips.map(\.startDate).sorted()
        return dateWindows.reduce(0) { total, window in
            let lo = firstIndex(in: dates, notBelow: window.0)
            let hi = firstIndex(in: dates, notBelow: window.1)
            return total + min(50, hi - lo)
        }
    }()

    /// The first index of sorted `dates` whose date is ≥ `date`.
    static func firstIndex(in dates: [Date], notBelow date: Date) -> Int {
        var lo = 0, hi = dates.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if dates[mid] < date { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    static let scanPrice = 5_000.0
    static let expectedScanHits = trips.reduce(0) { $0 + ($1.price > scanPrice && $1.isFavorite ? 1 : 0) }

    static let tripsWithItems = TripData.trips(0..<Env.nW6, bucketLists: true)
    static let oursWithItems = try! Ours.loaded(tripsWithItems, items: true)
    static let sqliteWithItems = try! SQLitePeer.loaded(tripsWithItems, items: true)
    static let expectedWalkItems = tripsWithItems.prefix(1_000).reduce(0) { $0 + $1.bucketList.count }
    static let deleteVictims = TripData.sample(min(10_000, Env.nW6 / 2), of: Env.nW6, seed: 6)
    static let itemsLeftAfterDelete: Int = {
        let gone = Set(deleteVictims)
        return tripsWithItems.indices.reduce(0) { $0 + (gone.contains($1) ? 0 : tripsWithItems[$1].bucketList.count) }
    }()

    /// Writer w inserts trips w·perWriter ..< (w+1)·perWriter.
    static let writerSlices: [[TripRow]] = (0..<Env.writers).map {
        TripData.trips($0 * Env.perWriter..<($0 + 1) * Env.perWriter)
    }
}

/// The process's resident set (Linux /proc), for M1 and W7–W9.
enum RSS {
    /// The custom metrics of a growth: peak, and held after (bytes).
    static let peakGrowth = "rssPeakGrowth"
    static let heldGrowth = "rssHeldGrowth"

    /// Returns the heap's free pages to the system (glibc's `malloc_trim`), so a growth
    /// measured from here counts pages touched again, not pages freed earlier and still
    /// resident.
    static func trim() {
        _ = mallocTrim?(0)
    }

    /// glibc's `malloc_trim` (not in Swift's Glibc module: malloc.h is not part of it).
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        #if canImport(Glibc)
        guard let symbol = dlsym(nil, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
        #else
        return nil
        #endif
    }()

    /// Peak and held growth of the resident set from a mark: `peak` is the most the
    /// process held since (VmHWM, reset at the mark), `held()` what it holds now, with
    /// the heap's free pages returned first (what the work keeps, not what it freed).
    struct Growth {
        let before: Int

        /// A mark at the current resident set; `trimming` first returns free heap pages.
        init(trimming: Bool = true) {
            if trimming { RSS.trim() }
            before = RSS.reset()
        }

        var peak: Int { RSS.peak() - before }

        func held() -> Int {
            RSS.trim()
            return RSS.current() - before
        }
    }

    /// Resets the peak-RSS mark (VmHWM) to the current RSS; returns the current RSS.
    static func reset() -> Int {
        if let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") {
            handle.write(Data("5".utf8))
            try? handle.close()
        }
        return current()
    }

    static func current() -> Int { status("VmRSS:") }

    /// The bytes the heap hands out now (glibc's `mallinfo2`: chunks in use plus mapped
    /// ones), which, unlike the resident set, does not count pages that freed chunks
    /// leave partly used.
    static func heapInUse() -> Int { Int(bench_heap_in_use()) }

    static func peak() -> Int { status("VmHWM:") }

    private static func status(_ key: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(key) {
            let kilobytes = line.dropFirst(key.count).split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } ?? 0
            return kilobytes * 1_024
        }
        return 0
    }
}
