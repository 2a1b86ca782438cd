import Foundation
import SwiftData
import Testing

@Model final class StressItem {
    @Attribute(.unique) var key: String
    var owner: Int
    var counter: Int
    init(key: String, owner: Int, counter: Int) {
        self.key = key
        self.owner = owner
        self.counter = counter
    }
}

/// What one worker did, for checking the document against it afterwards.
struct StressReport: Sendable {
    /// The worker's own rows as it left them: key → counter.
    var expected: [String: Int] = [:]
    /// For each shared key, every counter the worker upserted into it.
    var sharedWrites: [String: Set<Int>] = [:]
    var operations = 0
    var saves = 0
}

/// One of the stress test's actors: mixed operations on its own keys (where the
/// result is known exactly) and unique upserts on keys all workers share.
@ModelActor
actor StressWorker {
    func run(worker: Int, operations: Int, saveEvery: Int, seed: UInt64) throws -> StressReport {
        var random = StressRandom(state: seed | 1)
        var report = StressReport()
        var nextKey = 0
        func own(_ key: String) throws -> StressItem? {
            try modelContext.fetch(FetchDescriptor<StressItem>(predicate: #Predicate { $0.key == key })).first
        }
        for step in 1...operations {
            let existing = report.expected.keys.randomElement(using: &random)
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<25:
                let key = "w\(worker)-\(nextKey)"
                nextKey += 1
                modelContext.insert(StressItem(key: key, owner: worker, counter: 0))
                report.expected[key] = 0
            case 25..<55:
                guard let key = existing, let item = try own(key) else { break }
                item.counter += 1
                report.expected[key, default: 0] += 1
            case 55..<65:
                guard let key = existing, let item = try own(key) else { break }
                modelContext.delete(item)
                report.expected[key] = nil
            case 65..<85:
                guard let key = existing else { break }
                let item = try own(key)
                if item?.counter != report.expected[key] {
                    throw StressFailure(description: "worker \(worker) step \(step): \(key) reads \(String(describing: item?.counter)), expected \(report.expected[key]!)")
                }
            default:
                // An upsert: inserting an existing unique key updates that row.
                let key = "shared-\(Int.random(in: 0..<20, using: &random))"
                let counter = worker * 1_000_000 + step
                modelContext.insert(StressItem(key: key, owner: -1, counter: counter))
                report.sharedWrites[key, default: []].insert(counter)
            }
            report.operations += 1
            if step % saveEvery == 0 {
                try modelContext.save()
                report.saves += 1
                let mine = try modelContext.fetchCount(FetchDescriptor<StressItem>(predicate: #Predicate { $0.owner == worker }))
                if mine != report.expected.count {
                    throw StressFailure(description: "worker \(worker) after save \(report.saves): \(mine) rows, expected \(report.expected.count)")
                }
            }
        }
        try modelContext.save()
        report.saves += 1
        return report
    }
}

struct StressFailure: Error, CustomStringConvertible { var description: String }

struct StressRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}

/// Eight `@ModelActor`s on one document-backed container, each running mixed
/// inserts, updates, deletes, fetches and unique upserts with periodic saves. No
/// update may be lost: after reopening, every worker's own rows are exactly what
/// it expects, and every shared key holds one row with a value some worker wrote.
/// `OSD_STRESS_OPERATIONS` sets the operations per worker (2,000 by default; the
/// long run is 100,000, see Docs/Testing.md) and `OSD_STRESS_SEED` their sequence.
@Suite struct ConcurrencyStressTests {
    static let operations = ProcessInfo.processInfo.environment["OSD_STRESS_OPERATIONS"].flatMap(Int.init) ?? 2_000
    static let workers = 8

    @Test func eightActorsLoseNoUpdate() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = folder.file("stress.store")
        let seed = ProcessInfo.processInfo.environment["OSD_STRESS_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        let reports: [StressReport]
        do {
            let container = try ModelContainer(for: StressItem.self, configurations: ModelConfiguration(url: url))
            reports = try await withThrowingTaskGroup(of: (Int, StressReport).self) { group in
                for worker in 0..<Self.workers {
                    group.addTask {
                        let actor = StressWorker(modelContainer: container)
                        let report = try await actor.run(
                            worker: worker, operations: Self.operations, saveEvery: 100, seed: seed &+ UInt64(worker) &* 0x9E37_79B9)
                        return (worker, report)
                    }
                }
                var reports: [(Int, StressReport)] = []
                for try await report in group { reports.append(report) }
                return reports.sorted { $0.0 < $1.0 }.map(\.1)
            }
        }
        #expect(reports.map(\.operations) == Array(repeating: Self.operations, count: Self.workers), "seed \(seed)")

        // Reopen the document: what every worker saved, and nothing else.
        let reopened = try ModelContainer(for: StressItem.self, configurations: ModelConfiguration(url: url))
        let items = try ModelContext(reopened).fetch(FetchDescriptor<StressItem>())
        var byKey: [String: [StressItem]] = [:]
        for item in items { byKey[item.key, default: []].append(item) }
        #expect(byKey.values.allSatisfy { $0.count == 1 }, "a unique key held twice (seed \(seed))")
        for (worker, report) in reports.enumerated() {
            let stored = Dictionary(uniqueKeysWithValues: items.filter { $0.owner == worker }.map { ($0.key, $0.counter) })
            #expect(stored == report.expected, "worker \(worker) (seed \(seed))")
        }
        let written = reports.reduce(into: [String: Set<Int>]()) { all, report in
            all.merge(report.sharedWrites) { $0.union($1) }
        }
        for (key, counters) in written {
            let item = try #require(byKey[key]?.first, "\(key) missing (seed \(seed))")
            #expect(counters.contains(item.counter), "\(key) holds \(item.counter), which no worker wrote (seed \(seed))")
        }
        #expect(items.count == reports.reduce(0) { $0 + $1.expected.count } + written.count)
    }
}
