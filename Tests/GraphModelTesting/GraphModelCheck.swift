import Foundation

/// Runs seeded operation sequences against a store and the reference graph; a
/// failure is shrunk to the shortest sequence that still fails, and reported with
/// its seed, as Swift to paste into a test.
public enum GraphModelCheck {
    /// Operations per seed and the seeds of a run: `OSD_GRAPH_OPERATIONS` (seeds of
    /// 2,000 operations each) and `OSD_GRAPH_SEED` (one seed) for long runs and
    /// replays; else `operations` per seed over fixed seeds 1…`seeds`, plus one
    /// random seed (printed).
    public static func budget(operations: Int, seeds: Int) -> (operations: Int, seeds: [UInt64]) {
        let environment = ProcessInfo.processInfo.environment
        let total = environment["OSD_GRAPH_OPERATIONS"].flatMap(Int.init) ?? 0
        let (perSeed, count) = total > 0 ? (2_000, max(1, total / 2_000)) : (operations, seeds)
        if let seed = environment["OSD_GRAPH_SEED"].flatMap(UInt64.init) { return (perSeed, [seed]) }
        let fixed = (1...UInt64(max(1, min(count, 4)))).map { $0 }
        let extra = (fixed.count..<count).map { _ in UInt64.random(in: 1...UInt64.max) }
        return (perSeed, fixed + extra + [UInt64.random(in: 1...UInt64.max)])
    }

    /// Runs `operations` operations per seed on `store`; the report of the first
    /// failure, or nil when every run matched (`matched` counts the operations).
    public static func run(
        _ store: GraphStore, seeds: [UInt64], operations count: Int, matched: inout Int
    ) async throws -> String? {
        for seed in seeds {
            var generator = GraphOperationGenerator(seed: seed, persists: store.persists)
            let operations = (0..<count).map { _ in generator.next() }
            // Half the seeds hold the models they find, as an app does; half fetch anew.
            let holds = seed % 2 == 0
            if let failure = try await failure(of: operations, on: store, holdingModels: holds) {
                let shortest = try await shrink(operations, on: store, holdingModels: holds)
                let replay = shortest.map { "    .\($0)," }.joined(separator: "\n")
                return """
                    seed \(seed) (\(store), \(holds ? "holding models" : "fetching anew")): \(failure)
                    shortest failing sequence (\(shortest.count) of \(operations.count) operations):
                    \(replay)
                    \(try await Self.failure(of: shortest, on: store, holdingModels: holds).map(String.init(describing:)) ?? "")
                    """
            }
            matched += operations.count
        }
        return nil
    }

    /// Runs `operations` in a fresh place; the failure, or nil when the graphs matched.
    static func failure(
        of operations: [GraphOperation], on store: GraphStore, holdingModels: Bool
    ) async throws -> GraphRun.Failure? {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("osd-graph-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            try await GraphRun(store: store, folder: folder, holdsModels: holdingModels).run(operations)
            return nil
        } catch let failure as GraphRun.Failure {
            return failure
        }
    }

    /// The shortest subsequence found that still fails (delta debugging: drop chunks,
    /// halving their size down to single operations, while the run keeps failing).
    static func shrink(
        _ operations: [GraphOperation], on store: GraphStore, holdingModels: Bool
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
