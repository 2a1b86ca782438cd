import Foundation
import Testing

/// The model-based test of the object graph (#39, point 7): random operation
/// sequences against the real container and a reference graph, compared whole after
/// every save, reopen and compaction; a failure is shrunk to the shortest sequence
/// that still fails, and reported with its seed.
///
/// CI runs a short budget: fixed seeds, plus one random seed printed for replay.
/// Long runs (Docs/Testing.md): `OSD_GRAPH_OPERATIONS=1000000 swift test --filter
/// GraphModelTests`, and `OSD_GRAPH_SEED=<seed>` to replay one seed.
@Suite struct GraphModelTests {
    /// Operations per seed, and how many seeds.
    static let budget: (operations: Int, seeds: Int) = {
        let total = ProcessInfo.processInfo.environment["OSD_GRAPH_OPERATIONS"].flatMap(Int.init) ?? 0
        return total > 0 ? (2_000, max(1, total / 2_000)) : (400, 4)
    }()

    static let seeds: [UInt64] = {
        if let seed = ProcessInfo.processInfo.environment["OSD_GRAPH_SEED"].flatMap(UInt64.init) { return [seed] }
        let fixed: [UInt64] = [1, 2, 3, 4].prefix(budget.seeds).map { $0 }
        let extra = (fixed.count..<budget.seeds).map { _ in UInt64.random(in: 1...UInt64.max) }
        return fixed + extra + [UInt64.random(in: 1...UInt64.max)]
    }()

    @Test(arguments: [GraphRun.Store.document, .twoFiles, .inMemory, .customStore])
    func randomOperationsKeepTheGraph(_ store: GraphRun.Store) async throws {
        var total = 0
        for seed in Self.seeds {
            var generator = GraphOperationGenerator(seed: seed, persists: store != .inMemory)
            let operations = (0..<Self.budget.operations).map { _ in generator.next() }
            // Half the seeds hold the models they find, as an app does; half fetch anew.
            let holds = seed % 2 == 0
            if let failure = try await Self.failure(of: operations, on: store, holdingModels: holds) {
                let shortest = try await Self.shrink(operations, on: store, holdingModels: holds)
                let replay = shortest.map { "    .\($0)," }.joined(separator: "\n")
                Issue.record("""
                    seed \(seed) (\(store), \(holds ? "holding models" : "fetching anew")): \(failure)
                    shortest failing sequence (\(shortest.count) of \(operations.count) operations):
                    \(replay)
                    \(try await Self.failure(of: shortest, on: store, holdingModels: holds).map(String.init(describing:)) ?? "")
                    """)
                return
            }
            total += operations.count
        }
        print("GraphModelTests (\(store)): \(total) operations over seeds \(Self.seeds) matched the reference graph")
    }

    /// Runs `operations` in a fresh folder; the failure, or nil when the graphs matched.
    static func failure(
        of operations: [GraphOperation], on store: GraphRun.Store, holdingModels: Bool
    ) async throws -> GraphRun.Failure? {
        let folder = try TemporaryFolder("osd-graph")
        defer { folder.remove() }
        do {
            try await GraphRun(store: store, folder: folder.url, holdsModels: holdingModels).run(operations)
            return nil
        } catch let failure as GraphRun.Failure {
            return failure
        }
    }

    /// The shortest subsequence found that still fails (delta debugging: drop chunks,
    /// halving their size down to single operations, while the run keeps failing).
    static func shrink(
        _ operations: [GraphOperation], on store: GraphRun.Store, holdingModels: Bool
    ) async throws -> [GraphOperation] {
        var current = operations
        if let failure = try await failure(of: current, on: store, holdingModels: holdingModels) {
            current = Array(current.prefix(failure.step + 1))
        }
        var chunk = max(1, current.count / 2)
        while chunk >= 1 {
            var start = 0
            var removed = false
            while start < current.count {
                var candidate = current
                candidate.removeSubrange(start..<min(current.count, start + chunk))
                if try await failure(of: candidate, on: store, holdingModels: holdingModels) != nil {
                    current = candidate
                    removed = true
                } else {
                    start += chunk
                }
            }
            if !removed { chunk /= 2 }
        }
        return current
    }
}
