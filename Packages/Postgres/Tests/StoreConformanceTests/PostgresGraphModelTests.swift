import Foundation
import GraphModelTesting
import OpenSwiftDataPostgres
import SwiftData
import Testing

/// The model-based test of the object graph (#39, point 7) over PostgresStore: the
/// same random operation sequences and reference graph as `GraphModelTests` runs
/// over the embedded stores, each run in a database of its own. Compaction and the
/// smaller-schema reopen are document operations, skipped here.
@Suite struct PostgresGraphModelTests {
    static let budget = GraphModelCheck.budget(operations: 300, seeds: 3)

    static let postgres: GraphStore = {
        let store = GraphStore(name: "postgres") { _ in
            let url = try PostgresServer.makeDatabase()
            return GraphStore.Place(open: {
                try ModelContainer(for: modelBasedSchema, configurations: [try PostgresStoreConfiguration(url: url)])
            })
        }
        return store
    }()

    @Test(.enabled(if: PostgresServer.url != nil, "no PostgreSQL server (StoreKindTests says why)"))
    func randomOperationsKeepTheGraph() async throws {
        var matched = 0
        if let failure = try await GraphModelCheck.run(
            Self.postgres, seeds: Self.budget.seeds, operations: Self.budget.operations, matched: &matched) {
            Issue.record(Comment(rawValue: failure))
            return
        }
        print("PostgresGraphModelTests: \(matched) operations over seeds \(Self.budget.seeds) matched the reference graph")
    }
}
