import Foundation
import GraphModelTesting
import SwiftData
import Testing

/// The model-based test of the object graph (#39, point 7): random operation
/// sequences against the real container and a reference graph, compared whole after
/// every save, reopen and compaction; a failure is shrunk to the shortest sequence
/// that still fails, and reported with its seed (`GraphModelTesting`).
///
/// CI runs a short budget: fixed seeds, plus one random seed printed for replay.
/// Long runs (Docs/Testing.md): `OSD_GRAPH_OPERATIONS=1000000 swift test --filter
/// GraphModelTests`, and `OSD_GRAPH_SEED=<seed>` to replay one seed. The
/// PostgresStore run is in Packages/Postgres (`PostgresGraphModelTests`).
@Suite struct GraphModelTests {
    static let budget = GraphModelCheck.budget(operations: 400, seeds: 4)

    /// A custom `DataStore` (the tests' `JSONStore`, written against the public
    /// protocol as Apple's sample is). It keeps no unique constraints, so upserts are
    /// skipped there.
    static let customStore: GraphStore = {
        var store = GraphStore(name: "customStore") { folder in
            let url = folder.appendingPathComponent("graph.json")
            return GraphStore.Place(open: {
                try ModelContainer(for: modelBasedSchema, configurations: [JSONStoreConfiguration(name: "graph", fileURL: url)])
            })
        }
        store.keepsUniqueConstraints = false
        return store
    }()

    @Test(arguments: [GraphStore.document, .twoFiles, .inMemory, customStore])
    func randomOperationsKeepTheGraph(_ store: GraphStore) async throws {
        var matched = 0
        if let failure = try await GraphModelCheck.run(
            store, seeds: Self.budget.seeds, operations: Self.budget.operations, matched: &matched) {
            Issue.record(Comment(rawValue: failure))
            return
        }
        print("GraphModelTests (\(store)): \(matched) operations over seeds \(Self.budget.seeds) matched the reference graph")
    }
}
