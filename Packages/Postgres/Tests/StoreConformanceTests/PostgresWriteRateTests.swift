import Foundation
import OpenSwiftDataPostgres
import SwiftData
import Synchronization
import Testing

/// PostgresStore's write rate: writer threads, each with its own context, insert one
/// voyage a save for a few seconds; prints saves per second. A measurement, not a
/// check, so it runs only when asked (`OSD_PG_WRITE_RATE=1`; not in CI):
///
/// ```sh
/// OSD_PG_WRITE_RATE=1 OSD_PG_WRITERS=16 OSD_PG_CONTAINERS=1 \
///     bash Scripts/swift-shared.sh Packages/Postgres test --filter PostgresWriteRateTests
/// ```
///
/// Threads rather than tasks: a store's calls are synchronous and block their
/// thread, so tasks on Swift's cooperative pool would keep at most one save in
/// flight per core. `OSD_PG_CONTAINERS` spreads the writers over that many
/// containers (processes of an app, as far as the database can tell). The test
/// server runs with `fsync = off`; `OSD_POSTGRES_FSYNC=on` asks
/// `Scripts/postgres-test-server.sh` for a durable one. The line printed names the
/// server's `fsync` setting.
@Suite(.enabled(
    if: PostgresServer.url != nil && ProcessInfo.processInfo.environment["OSD_PG_WRITE_RATE"] == "1",
    "a measurement: OSD_PG_WRITE_RATE=1 runs it"))
struct PostgresWriteRateTests {
    private static func setting(_ name: String, _ fallback: Int) -> Int {
        ProcessInfo.processInfo.environment[name].flatMap { Int($0) } ?? fallback
    }

    @Test func writesPerSecond() throws {
        let writers = Self.setting("OSD_PG_WRITERS", 16)
        let containerCount = Self.setting("OSD_PG_CONTAINERS", 1)
        let seconds = Double(Self.setting("OSD_PG_SECONDS", 5))
        let url = try PostgresServer.makeDatabase()
        let schema = Schema([Voyage.self, Leg.self, Traveller.self])
        let containers = try (0..<containerCount).map { _ in
            try ModelContainer(for: schema, configurations: [try PostgresStoreConfiguration(url: url)])
        }
        let saves = Counter()
        let failures = Counter()
        let done = DispatchGroup()
        let start = Date()
        let deadline = start.addingTimeInterval(seconds)
        for writer in 0..<writers {
            let container = containers[writer % containerCount]
            done.enter()
            Thread {
                defer { done.leave() }
                let context = ModelContext(container)
                var i = 0
                while Date() < deadline {
                    context.insert(Voyage(
                        code: "R\(writer)-\(i)", destination: "Porto", startDate: StoreConformanceTests.start, price: Double(i),
                        seats: writer))
                    do {
                        try context.save()
                        saves.add(1)
                    } catch {
                        failures.add(1)
                        context.rollback()
                    }
                    i += 1
                }
            }.start()
        }
        done.wait()
        let elapsed = Date().timeIntervalSince(start)
        let stored = try ModelContext(containers[0]).fetchCount(FetchDescriptor<Voyage>())
        let fsync = (try? PostgresServer.query("SHOW fsync")) ?? "?"
        let rate = Double(saves.value) / elapsed
        print(
            "PostgresStore write rate: \(Int(rate.rounded())) saves/s (\(saves.value) in \(String(format: "%.1f", elapsed)) s; "
                + "\(writers) writer threads over \(containerCount) container(s); fsync = \(fsync))")
        #expect(failures.value == 0)
        #expect(stored == saves.value)
    }
}

/// A count several threads add to.
private final class Counter: Sendable {
    private let count = Mutex(0)

    func add(_ n: Int) { count.withLock { $0 += n } }

    var value: Int { count.withLock { $0 } }
}
