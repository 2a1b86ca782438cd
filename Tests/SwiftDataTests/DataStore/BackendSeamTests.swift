import Foundation
import GraphModelTesting
@testable import OpenSwiftData
import Testing

/// The seam between a context and where its rows live (`ModelBackend`): a container
/// over a custom store builds no engine store, and the same calls through either
/// backend give the same answers.
@Suite struct BackendSeamTests {
    private static let start = Date(timeIntervalSinceReferenceDate: 800_000_000)

    private static func engine() throws -> ModelContainer {
        try ModelContainer(
            for: Excursion.self, ExcursionStop.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    }

    /// A custom store (`ForwardingStore`, which keeps its rows in a `DefaultStore`).
    private static func custom() throws -> ModelContainer {
        try ModelContainer(
            for: Excursion.self, ExcursionStop.self,
            configurations: ForwardingStoreConfiguration(name: UUID().uuidString, inner: ModelConfiguration(isStoredInMemoryOnly: true)))
    }

    @Test func aCustomStoreContainerBuildsNoEngineStore() throws {
        let custom = try Self.custom()
        #expect(custom.engineStore == nil)
        #expect(custom.backend is DataStoreBackend)
        let engine = try Self.engine()
        #expect(engine.engineStore != nil)
        #expect(engine.backend is EngineBackend)
        // What only the engine has does nothing, or throws, over the custom store.
        try custom.compactDocument()
        custom.waitForDocumentCompaction()
        #expect(throws: DataStoreError.unsupportedFeature) {
            try ModelContext(custom).explain(FetchDescriptor<Excursion>())
        }
    }

    /// `didSave` lists an insert that took over a stored row (an upsert) as updated,
    /// over either backend: a custom store says so in its save's result
    /// (`upsertedIdentifiers`, which `DefaultStore` fills).
    @Test(arguments: [true, false])
    func didSaveListsAnUpsertAsUpdated(custom: Bool) throws {
        let container = try custom ? Self.custom() : Self.engine()
        try {
            let context = ModelContext(container)
            context.insert(Excursion(name: "e1", destination: "Lisbon", startDate: Self.start, price: 1))
            try context.save()
        }()
        let context = ModelContext(container)
        let again = Excursion(name: "e1", destination: "Porto", startDate: Self.start, price: 2)
        let new = Excursion(name: "e2", destination: "Braga", startDate: Self.start, price: 3)
        context.insert(again)
        context.insert(new)
        let log = DidSaveLog(context)
        try context.save()
        #expect(log.updated == [again.persistentModelID])
        #expect(log.inserted == [new.persistentModelID])
        #expect(context.lastSavedChanges?.updatedIdentifiers == [again.persistentModelID])
        #expect(context.lastSavedChanges?.insertedIdentifiers == [new.persistentModelID])
        #expect(try ModelContext(container).fetch(FetchDescriptor<Excursion>(sortBy: [SortDescriptor(\.name)])).map(\.destination)
            == ["Porto", "Braga"])
    }

    /// Everything a context reads, as plain values, after the same operations.
    private struct Answers: Equatable {
        var names: [String]
        var count: Int
        var windowed: [String]
        var batched: [String]
        var enumerated: [String]
        var stopsOfFirst: [String]
        var excursionOfStop: String?
        var deletedLooksDeleted: Bool
        var reread: [String]
    }

    private static func run(_ container: ModelContainer) throws -> Answers {
        let context = ModelContext(container)
        var excursions: [Excursion] = []
        for i in 0..<6 {
            let excursion = Excursion(
                name: "e\(i)", destination: i.isMultiple(of: 2) ? "Lisbon" : "Porto",
                startDate: start.addingTimeInterval(Double(i) * 86_400), price: Double(6 - i))
            context.insert(excursion)
            excursion.stops = [ExcursionStop(title: "s\(i)a"), ExcursionStop(title: "s\(i)b")]
            excursions.append(excursion)
        }
        try context.save()
        let doomed = excursions[5].persistentModelID
        context.delete(excursions[5])
        excursions[0].price = 100
        try context.save()

        let reader = ModelContext(container)
        let byPrice = FetchDescriptor<Excursion>(sortBy: [SortDescriptor(\.price)])
        var window = FetchDescriptor<Excursion>(
            predicate: #Predicate { $0.destination == "Lisbon" }, sortBy: [SortDescriptor(\.name, order: .reverse)])
        window.fetchLimit = 2
        var enumerated: [String] = []
        try reader.enumerate(byPrice) { enumerated.append($0.name) }
        let first = try #require(try reader.fetch(FetchDescriptor<Excursion>(predicate: #Predicate { $0.name == "e0" })).first)
        let stop = try #require(try reader.fetch(FetchDescriptor<ExcursionStop>(predicate: #Predicate { $0.title == "s3b" })).first)
        let ids = try reader.fetchIdentifiers(byPrice)
        let again = ModelContext(container)
        return Answers(
            names: try reader.fetch(byPrice).map(\.name),
            count: try reader.fetchCount(FetchDescriptor<ExcursionStop>()),
            windowed: try reader.fetch(window).map(\.name),
            batched: try reader.fetch(byPrice, batchSize: 2).map(\.name),
            enumerated: enumerated,
            stopsOfFirst: first.stops.map(\.title).sorted(),
            excursionOfStop: stop.excursion?.name,
            deletedLooksDeleted: again.model(for: doomed).isDeleted,
            reread: ids.compactMap { (again.model(for: $0) as? Excursion)?.name })
    }

    @Test func bothBackendsGiveTheSameAnswers() throws {
        let engine = try Self.run(try Self.engine())
        let custom = try Self.run(try Self.custom())
        #expect(engine == custom)
        // And the answers are the right ones, not merely equal.
        #expect(engine.names == ["e4", "e3", "e2", "e1", "e0"])
        #expect(engine.count == 10)
        #expect(engine.windowed == ["e4", "e2"])
        #expect(engine.batched == engine.names)
        #expect(engine.enumerated == engine.names)
        #expect(engine.stopsOfFirst == ["s0a", "s0b"])
        #expect(engine.excursionOfStop == "e3")
        #expect(engine.deletedLooksDeleted)
        #expect(engine.reread == engine.names)
    }
}
