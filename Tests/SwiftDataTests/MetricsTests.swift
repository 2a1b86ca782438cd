import CoreMetrics
import Foundation
import MetricsTestKit
import SwiftData
import Testing

@Model final class MeteredTrip {
    var name: String
    var price: Double
    init(name: String, price: Double) {
        self.name = name
        self.price = price
    }
}

/// What an app that bootstrapped swift-metrics sees: saves, fetches, compactions
/// and recoveries counted and timed, labelled by store and configuration.
@Suite struct MetricsTests {
    /// Containers opened after this bootstrap report their metrics; the tests'
    /// configurations are named `metered-…`, and only theirs are recorded, so the
    /// other suites running beside these neither add to the counts nor fill memory.
    static let recorded: TestMetrics = {
        let recorded = TestMetrics()
        MetricsSystem.bootstrap(MeteredConfigurations(recorded: recorded))
        return recorded
    }()

    init() {
        _ = Self.recorded  // bootstrapped before any test's container opens
    }

    private func dimensions(_ configuration: String) -> [(String, String)] {
        [("store", "document"), ("configuration", configuration)]
    }

    private func counter(_ label: String, _ dimensions: [(String, String)]) -> Int64 {
        Self.recorded.counterTotal(label: label, dimensions: dimensions)
    }

    private func timings(_ label: String, _ dimensions: [(String, String)]) -> Int {
        Self.recorded.timers(label: label, dimensions: dimensions).reduce(0) { $0 + $1.values.count }
    }

    @Test func savesFetchesAndFailedSavesAreCountedAndTimed() throws {
        let recorded = Self.recorded
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let name = "metered-\(UUID().uuidString)"
        let container = try ModelContainer(
            for: MeteredTrip.self, configurations: ModelConfiguration(name, url: folder.file("trips.store")))
        let context = ModelContext(container)
        context.insert(MeteredTrip(name: "Lisbon", price: 420))
        try context.save()
        try context.save()  // nothing to write: not a save
        _ = try context.fetch(FetchDescriptor<MeteredTrip>())
        _ = try context.fetchCount(FetchDescriptor<MeteredTrip>())
        _ = try context.fetchIdentifiers(FetchDescriptor<MeteredTrip>(predicate: #Predicate { $0.price > 100 }))

        // A save another context's save made stale fails under failOnConflict.
        let mine = ModelContext(container), theirs = ModelContext(container)
        mine.conflictPolicy = .failOnConflict
        let trip = try #require(try mine.fetch(FetchDescriptor<MeteredTrip>()).first)
        try #require(try theirs.fetch(FetchDescriptor<MeteredTrip>()).first).price = 400
        try theirs.save()
        trip.price = 380
        #expect(throws: SaveConflictError.self) { try mine.save() }

        let labels = dimensions(name)
        #expect(counter("openswiftdata_saves_total", labels) == 2)
        #expect(counter("openswiftdata_save_failures_total", labels) == 1)
        #expect(timings("openswiftdata_save_duration", labels) == 3)
        #expect(counter("openswiftdata_fetches_total", labels) == 5)
        #expect(timings("openswiftdata_fetch_duration", labels) == 5)
        #expect(recorded.timers(label: "openswiftdata_save_duration", dimensions: labels).allSatisfy { $0.values.allSatisfy { $0 > 0 } })
    }

    @Test func compactionsAndRecoveriesAreCounted() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let name = "metered-\(UUID().uuidString)"
        let url = folder.file("trips.store")
        do {
            let container = try ModelContainer(for: MeteredTrip.self, configurations: ModelConfiguration(name, url: url))
            let context = ModelContext(container)
            context.insert(MeteredTrip(name: "Porto", price: 90))
            try context.save()
            try container.compactDocument()
            context.insert(MeteredTrip(name: "Faro", price: 120))
            try context.save()
        }
        let labels = dimensions(name)
        #expect(counter("openswiftdata_compactions_total", labels + [("mode", "explicit")]) == 1)
        #expect(timings("openswiftdata_compaction_duration", labels) == 1)
        #expect(counter("openswiftdata_recoveries_total", labels) == 0)

        // A crash mid-save leaves a torn last frame: the next open drops it, a recovery.
        let handle = try FileHandle(forUpdating: url)
        let length = try handle.seekToEnd()
        try handle.truncate(atOffset: length - 3)
        try handle.close()
        let reopened = try ModelContainer(for: MeteredTrip.self, configurations: ModelConfiguration(name, url: url))
        #expect(try ModelContext(reopened).fetch(FetchDescriptor<MeteredTrip>()).map(\.name) == ["Porto"])
        #expect(counter("openswiftdata_recoveries_total", labels) == 1)
    }

    /// Group commit through the public API: sixteen `@ModelActor`s save at once with
    /// the default durability (`.full`). Every save arrives, each actor reads its own
    /// saves at once, and the fsyncs that made them durable are counted: never more
    /// than the saves (how many fewer depends on how the saves overlap; the store
    /// tests hold an fsync to count exactly).
    @Test func concurrentSavesOfModelActorsAreCountedWithTheFsyncsTheyShared() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let name = "metered-\(UUID().uuidString)"
        let url = folder.file("concurrent.store")
        let actors = 16, saves = 20
        do {
            let container = try ModelContainer(for: MeteredTrip.self, configurations: ModelConfiguration(name, url: url))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for a in 0..<actors {
                    let saver = MeteredSaver(modelContainer: container)
                    group.addTask { try await saver.save(times: saves, as: "trip \(a)") }
                }
                try await group.waitForAll()
            }
        }
        let labels = dimensions(name)
        let saved = counter("openswiftdata_saves_total", labels)
        let syncs = counter("openswiftdata_journal_syncs_total", labels)
        #expect(saved == Int64(actors * (saves + 1)))
        #expect(syncs >= 1 && syncs <= saved)
        print("\(saved) concurrent saves, \(syncs) fsyncs")
        let reopened = ModelContext(try ModelContainer(for: MeteredTrip.self, configurations: ModelConfiguration(url: url)))
        let trips = try reopened.fetch(FetchDescriptor<MeteredTrip>(sortBy: [SortDescriptor(\.name)]))
        #expect(trips.count == actors)
        #expect(trips.allSatisfy { $0.price == Double(saves) })
    }

    @Test func anInMemoryStoreIsLabelledSo() throws {
        let name = "metered-\(UUID().uuidString)"
        let container = try ModelContainer(
            for: MeteredTrip.self, configurations: ModelConfiguration(name, isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        context.insert(MeteredTrip(name: "Braga", price: 60))
        try context.save()
        #expect(counter("openswiftdata_saves_total", [("store", "memory"), ("configuration", name)]) == 1)
        #expect(counter("openswiftdata_saves_total", dimensions(name)) == 0)
    }
}

/// Records the metrics of the tests' `metered-…` configurations in `recorded`, and
/// drops every other container's.
final class MeteredConfigurations: MetricsFactory {
    let recorded: TestMetrics
    private let dropped = NOOPMetricsHandler.instance

    init(recorded: TestMetrics) {
        self.recorded = recorded
    }

    private func isMetered(_ dimensions: [(String, String)]) -> Bool {
        dimensions.contains { $0.0 == "configuration" && $0.1.hasPrefix("metered-") }
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        isMetered(dimensions)
            ? recorded.makeCounter(label: label, dimensions: dimensions) : dropped.makeCounter(label: label, dimensions: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        isMetered(dimensions)
            ? recorded.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
            : dropped.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        isMetered(dimensions)
            ? recorded.makeTimer(label: label, dimensions: dimensions) : dropped.makeTimer(label: label, dimensions: dimensions)
    }

    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}
}

/// Saves one trip over and over: each save sets its price to the save's number.
@ModelActor actor MeteredSaver {
    func save(times: Int, as name: String) throws {
        let trip = MeteredTrip(name: name, price: 0)
        modelContext.insert(trip)
        try modelContext.save()
        for k in 1...times {
            trip.price = Double(k)
            try modelContext.save()
            // Its own save is published when the save returns.
            let fresh = ModelContext(modelContainer)
            let stored = try fresh.fetch(FetchDescriptor<MeteredTrip>(predicate: #Predicate { $0.name == name })).first
            guard stored?.price == Double(k) else { throw SaveNotSeen(name: name, save: k) }
        }
    }
}

struct SaveNotSeen: Error {
    var name: String
    var save: Int
}
