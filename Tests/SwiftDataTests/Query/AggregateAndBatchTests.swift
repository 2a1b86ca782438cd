import SwiftData
import Testing

/// Issue #3, point 6: aggregates and batch operations (additive API).
@Suite struct AggregateAndBatchTests {
    let container: ModelContainer
    let context: ModelContext

    init() throws {
        container = try ModelContainer(for: Voyage.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        context = ModelContext(container)
        let ports = ["Oslo", "Lima", "Oslo", "Cork"]
        var voyages: [Voyage] = []
        for i in 0..<8 {
            let departure = Date(timeIntervalSince1970: Double(i) * 86_400)
            let fare = Double(i * 10)
            voyages.append(Voyage(code: "v\(i)", port: ports[i % 4], departure: departure, fare: fare, isFull: i % 2 == 0))
        }
        try context.insert(contentsOf: voyages)
    }

    @Test func aggregatesMatchAComputationOverModels() throws {
        let all = try context.fetch(FetchDescriptor<Voyage>())
        #expect(try context.sum(of: \Voyage.fare) == all.map(\.fare).reduce(0, +))
        #expect(try context.min(of: \Voyage.fare) == 0)
        #expect(try context.max(of: \Voyage.code) == "v7")
        #expect(try context.average(of: \Voyage.fare) == 35)
        let full = FetchDescriptor<Voyage>(predicate: #Predicate { $0.isFull })
        #expect(try context.sum(of: \Voyage.fare, in: full) == 0 + 20 + 40 + 60)
        #expect(try context.countsGrouped(by: \Voyage.port) == ["Oslo": 4, "Lima": 2, "Cork": 2])
        let none = FetchDescriptor<Voyage>(predicate: #Predicate { $0.port == "Nowhere" })
        #expect(try context.average(of: \Voyage.fare, in: none) == nil)
        #expect(try context.min(of: \Voyage.fare, in: none) == nil)
        var cheapest = FetchDescriptor<Voyage>(sortBy: [SortDescriptor(\.fare)])
        cheapest.fetchLimit = 3
        #expect(try context.sum(of: \Voyage.fare, in: cheapest) == 0 + 10 + 20)
    }

    @Test func aggregatesSeePendingChanges() throws {
        let first = try #require(try context.fetch(FetchDescriptor<Voyage>(predicate: #Predicate { $0.code == "v0" })).first)
        first.fare = 1_000
        context.insert(Voyage(code: "pending", port: "Oslo", departure: .now, fare: 5, isFull: false))
        #expect(try context.max(of: \Voyage.fare) == 1_000)
        #expect(try context.countsGrouped(by: \Voyage.port)["Oslo"] == 5)
    }

    @Test func insertManyIsOneCommitAndUpserts() throws {
        let before = try ModelContext(container).fetchCount(FetchDescriptor<Voyage>())
        #expect(before == 8)
        nonisolated(unsafe) var saves = 0
        let observer = NotificationCenter.default.addObserver(forName: ModelContext.didSave, object: context, queue: nil) { _ in saves += 1 }
        defer { NotificationCenter.default.removeObserver(observer) }
        try context.upsert([
            Voyage(code: "v1", port: "Nice", departure: .now, fare: 99, isFull: true),
            Voyage(code: "v100", port: "Nice", departure: .now, fare: 1, isFull: false),
        ])
        #expect(saves == 1)
        let reader = ModelContext(container)
        #expect(try reader.fetchCount(FetchDescriptor<Voyage>()) == 9)
        #expect(try reader.fetch(FetchDescriptor<Voyage>(predicate: #Predicate { $0.code == "v1" })).first?.port == "Nice")
    }

    @Test func updateManyByPredicate() throws {
        let registered = try #require(try context.fetch(FetchDescriptor<Voyage>(predicate: #Predicate { $0.code == "v3" })).first)
        let changed = try context.update(\Voyage.isFull, to: true, where: #Predicate { $0.port == "Oslo" || $0.code == "v3" })
        #expect(changed == 5)
        #expect(registered.isFull)
        #expect(context.lastSavedChanges?.updatedIdentifiers.count == 5)
        #expect(context.lastSavedChanges?.updatedIdentifiers.contains(registered.persistentModelID) == true)
        let reader = ModelContext(container)
        #expect(try reader.fetchCount(FetchDescriptor<Voyage>(predicate: #Predicate { $0.isFull })) == 5)
        #expect(throws: SwiftDataError.uniqueConstraintViolation) {
            try context.update(\Voyage.code, to: "same")
        }
        #expect(try reader.fetchCount(FetchDescriptor<Voyage>(predicate: #Predicate { $0.code == "same" })) == 0)
    }
}
