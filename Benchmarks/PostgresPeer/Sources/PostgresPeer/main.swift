import Foundation
import Logging
import PostgresNIO

// PostgresPeer URL [--rows N] [--inserts N] [--lookups N] [--ranges N] [--rounds N]
//
// PostgresStore (through ModelContainer and ModelContext) against hand-written
// postgres-nio on the same table, with named prepared statements and with the same
// SQL unnamed (parsed and planned each call): N trips inserted in one save / one transaction,
// unique-name lookups and price-range queries (sorted, limit 100) on a table of
// --rows trips. Rounds alternate which side goes first; each figure is the median
// round. Prints a Markdown table with ours / postgres-nio per operation (goal ≤ 1.3× prepared).
// URL: a server the benchmark may create databases on (Scripts/bench-postgres.sh
// starts a throwaway one).

var arguments = Array(CommandLine.arguments.dropFirst())
@MainActor func option(_ name: String, _ fallback: Int) -> Int {
    guard let at = arguments.firstIndex(of: name), at + 1 < arguments.count, let value = Int(arguments[at + 1]), value > 0 else {
        return fallback
    }
    arguments.removeSubrange(at...at + 1)
    return value
}
let rows = option("--rows", 100_000)
let insertCount = option("--inserts", 5_000)
let lookupCount = option("--lookups", 2_000)
let rangeCount = option("--ranges", 500)
let rounds = option("--rounds", 5)
guard let base = arguments.first else {
    FileHandle.standardError.write(Data("usage: PostgresPeer URL [--rows N] [--inserts N] [--lookups N] [--ranges N] [--rounds N]\n".utf8))
    exit(2)
}
var logger = Logger(label: "PostgresPeer")
logger.logLevel = .error

do {
    let server = try Server(url: base, logger: logger)
    let adminRun = Task { await server.admin.run() }
    defer { adminRun.cancel() }
    let run = String(UInt32.random(in: 0...UInt32.max), radix: 16)

    // The table both sides read: PostgresStore makes it, the hand-written side fills it.
    let readURL = try await server.makeDatabase("bench_read_\(run)")
    let ours = try StoreSide(url: readURL)
    let (client, clientRun) = server.client("bench_read_\(run)")
    defer { clientRun.cancel() }
    let peer = RawPeer(client: client, logger: logger, prepared: true)
    let table = TripRow.generate(rows, prefix: "trip")
    for start in stride(from: 0, to: rows, by: 10_000) {
        _ = try await peer.insert(Array(table[start..<min(rows, start + 10_000)]))
    }
    _ = try await client.query("VACUUM ANALYZE \"Trip\"", logger: logger)

    // Both sides must return the same trips.
    var random = SplitMix64(seed: 7)
    let width = max(1.0, 2_000 * 150 / Double(rows)) // about 150 trips a range: the limit of 100 fills
    func names(_ round: Int) -> [String] { (0..<lookupCount).map { _ in table[random.below(rows)].name } }
    func ranges() -> [ClosedRange<Double>] {
        (0..<rangeCount).map { _ in let low = 50 + random.unit() * (2_000 - width); return low...(low + width) }
    }
    let sampleRanges = ranges()
    let (ourRanges, _) = try await onThread { try ours.ranges(sampleRanges) }
    var peerRanges: [[String]] = []
    for range in sampleRanges { peerRanges.append(try await peer.trips(pricedFrom: range.lowerBound, to: range.upperBound).map(\.name)) }
    guard ourRanges == peerRanges, ourRanges.allSatisfy({ $0.count == 100 }) else {
        throw BenchmarkFailure("the sides' range queries differ, or one returned fewer than 100 trips")
    }

    let unnamed = RawPeer(client: client, logger: logger, prepared: false)
    var times: [String: [Double]] = [:]
    let sides = ["ours", "prepared", "unnamed"]
    /// One side's run of `lookups`: how long it took.
    func lookUp(_ side: String, _ lookups: [String]) async throws -> Duration {
        if side == "ours" {
            let (sum, time) = try await onThread { try ours.lookUp(lookups) }
            guard sum > 0 else { throw BenchmarkFailure("no prices") }
            return time
        }
        let reader = side == "prepared" ? peer : unnamed
        return try await timed {
            for name in lookups where try await reader.trip(named: name) == nil { throw BenchmarkFailure("no trip named \(name)") }
        }.1
    }
    /// One side's run of range queries `windows`: how long it took.
    func query(_ side: String, _ windows: [ClosedRange<Double>]) async throws -> Duration {
        if side == "ours" { return try await onThread { _ = try ours.ranges(windows) }.1 }
        let reader = side == "prepared" ? peer : unnamed
        return try await timed {
            for window in windows { _ = try await reader.trips(pricedFrom: window.lowerBound, to: window.upperBound) }
        }.1
    }

    for round in 0..<rounds {
        let inserts = TripRow.generate(insertCount, prefix: "new")
        // Each side goes first in turn.
        let order = sides[(round % 3)...] + sides[..<(round % 3)]
        for side in order {
            // A fresh database for the inserts, its table made (untimed) by opening PostgresStore.
            let database = "bench_ins_\(side)_\(run)_\(round)"
            let inserting = try StoreSide(url: try await server.makeDatabase(database))
            let insert: Duration
            if side == "ours" {
                (_, insert) = try await onThread { try inserting.insert(inserts) }
            } else {
                let (insertClient, insertRun) = server.client(database)
                defer { insertRun.cancel() }
                _ = try await insertClient.query("SELECT 1", logger: logger)
                let keys: [Int64]
                (keys, insert) = try await timed {
                    try await RawPeer(client: insertClient, logger: logger, prepared: side == "prepared").insert(inserts)
                }
                guard keys.count == insertCount else { throw BenchmarkFailure("the peer's inserts came short") }
            }
            times["insert \(side)", default: []].append(insert.seconds / Double(insertCount))
        }
        // Reads in slices of 50 lookups and 10 range queries, the sides taking turns on
        // each slice, so all three meet the same moments of a busy machine.
        var total: [String: Double] = [:]
        let lookups = names(round)
        for start in stride(from: 0, to: lookupCount, by: 50) {
            let slice = Array(lookups[start..<min(lookupCount, start + 50)])
            for side in order { total["lookup \(side)", default: 0] += try await lookUp(side, slice).seconds }
        }
        let windows = ranges()
        for start in stride(from: 0, to: rangeCount, by: 10) {
            let slice = Array(windows[start..<min(rangeCount, start + 10)])
            for side in order { total["range \(side)", default: 0] += try await query(side, slice).seconds }
        }
        for side in sides {
            times["lookup \(side)", default: []].append(total["lookup \(side)", default: 0] / Double(lookupCount))
            times["range \(side)", default: []].append(total["range \(side)", default: 0] / Double(rangeCount))
        }
    }

    let version = try await server.value("SHOW server_version")
    let fsync = try await server.value("SHOW fsync")
    let synchronous = try await server.value("SHOW synchronous_commit")
    print("PostgreSQL \(version), fsync = \(fsync), synchronous_commit = \(synchronous); \(rows) trips in the read table; "
        + "median of \(rounds) rounds (the sides taking turns to go first; reads in slices, the sides alternating)")
    print("")
    print("| operation | ours: PostgresStore | postgres-nio, prepared | postgres-nio, unnamed statements | ours / prepared (goal ≤ 1.3) | ours / unnamed |")
    print("| --- | --- | --- | --- | --- | --- |")
    let operations = [
        ("insert", "\(insertCount) trips inserted: one `save()` / one transaction of INSERTs; per trip"),
        ("lookup", "a trip by its unique name (`fetchLimit = 1` / SELECT … LIMIT 1), \(lookupCount) in a row"),
        ("range", "price range, sorted, `fetchLimit = 100` (about 150 match), \(rangeCount) in a row"),
    ]
    for (key, what) in operations {
        let ours = median(times["\(key) ours"] ?? [0])
        let prepared = median(times["\(key) prepared"] ?? [1]), plain = median(times["\(key) unnamed"] ?? [1])
        print("| \(what) | \(shown(ours)) | \(shown(prepared)) | \(shown(plain)) | "
            + "\(String(format: "%.2f", ours / prepared))\(ours / prepared <= 1.3 ? " (met)" : "") | \(String(format: "%.2f", ours / plain)) |")
    }
} catch {
    FileHandle.standardError.write(Data("PostgresPeer: \(error)\n".utf8))
    exit(1)
}
