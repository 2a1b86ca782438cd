import Foundation
import SwiftData
import Testing

/// A container over a custom store written as Apple's documentation writes one
/// (`JSONStore`): the context filters, sorts and windows, resolves relationships
/// from the store's snapshots, and saves through snapshots with remapped identifiers.
@Suite struct CustomStoreTests {
    private static let start = Date(timeIntervalSinceReferenceDate: 800_000_000)

    private func open(_ file: URL) throws -> ModelContainer {
        try ModelContainer(
            for: Excursion.self, ExcursionStop.self,
            configurations: JSONStoreConfiguration(name: "excursions", fileURL: file))
    }

    private func seed(_ context: ModelContext, count: Int) throws {
        for i in 0..<count {
            let excursion = Excursion(
                name: "excursion \(i)", destination: i.isMultiple(of: 2) ? "Lisbon" : "Porto",
                startDate: Self.start.addingTimeInterval(Double(i) * 86_400), price: Double((i * 37) % 11) * 10)
            excursion.tags = ["t\(i)"]
            context.insert(excursion)
            excursion.stops = [ExcursionStop(title: "stop \(i).a"), ExcursionStop(title: "stop \(i).b")]
        }
        try context.save()
    }

    @Test func savesThroughTheStoreAndReopens() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = folder.file("excursions.json")
        let first = ModelContext(try open(file))
        let lisbon = Excursion(name: "Lisbon weekend", destination: "Lisbon", startDate: Self.start, price: 420.5)
        lisbon.tags = ["food", "tiles"]
        first.insert(lisbon)
        lisbon.stops = [ExcursionStop(title: "Alfama"), ExcursionStop(title: "Belém")]
        #expect(lisbon.persistentModelID.isTemporary)
        try first.save()

        // The store chose the identifiers: UUID keys in its own name.
        let id = lisbon.persistentModelID
        #expect(!id.isTemporary)
        #expect(id.storeIdentifier == "excursions.json")
        #expect(lisbon.stops.allSatisfy { !$0.persistentModelID.isTemporary && $0.excursion === lisbon })
        #expect(!first.hasChanges)

        let reopened = ModelContext(try open(file))
        let fetched = try reopened.fetch(FetchDescriptor<Excursion>())
        try #require(fetched.count == 1)
        let trip = fetched[0]
        #expect(trip.persistentModelID == id)
        #expect(trip.name == "Lisbon weekend")
        #expect(trip.destination == "Lisbon")
        #expect(trip.startDate == Self.start)
        #expect(trip.price == 420.5)
        #expect(trip.tags == ["food", "tiles"])
        #expect(Set(trip.stops.map(\.title)) == ["Alfama", "Belém"])
        #expect(trip.stops.allSatisfy { $0.excursion === trip })
        // One object per identifier in a context.
        #expect(reopened.model(for: id) === trip)
    }

    @Test func filtersSortsAndWindowsWhatTheStoreLeavesToIt() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = folder.file("excursions.json")
        try seed(ModelContext(try open(file)), count: 20)

        let context = ModelContext(try open(file))
        let all = try context.fetch(FetchDescriptor<Excursion>())
        #expect(all.count == 20)
        let expected = all.filter { $0.destination == "Lisbon" && $0.price >= 30 }
            .sorted { ($0.price, $1.name) > ($1.price, $0.name) }
        var descriptor = FetchDescriptor<Excursion>(
            predicate: #Predicate { $0.destination == "Lisbon" && $0.price >= 30 },
            sortBy: [SortDescriptor(\.price, order: .reverse), SortDescriptor(\.name)])
        #expect(try context.fetch(descriptor).map(\.name) == expected.map(\.name))
        #expect(try context.fetchCount(descriptor) == expected.count)
        descriptor.fetchOffset = 1
        descriptor.fetchLimit = 3
        #expect(try context.fetch(descriptor).map(\.name) == expected.dropFirst(1).prefix(3).map(\.name))
        #expect(try context.fetchIdentifiers(descriptor) == expected.dropFirst(1).prefix(3).map(\.persistentModelID))

        // Sorted only: the store is asked again without the sort.
        let byDate = try context.fetch(FetchDescriptor<Excursion>(sortBy: [SortDescriptor(\.startDate, order: .reverse)]))
        #expect(byDate.map(\.startDate) == all.map(\.startDate).sorted(by: >))
        // A window without predicate or sort is the store's.
        var window = FetchDescriptor<Excursion>()
        window.fetchLimit = 5
        #expect(try context.fetch(window).count == 5)
        #expect(try context.fetchCount(FetchDescriptor<ExcursionStop>()) == 40)
    }

    @Test func pendingChangesTakePartInFetches() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = folder.file("excursions.json")
        try seed(ModelContext(try open(file)), count: 6)
        let context = ModelContext(try open(file))
        let lisbon = #Predicate<Excursion> { $0.destination == "Lisbon" }
        let before = try context.fetch(FetchDescriptor(predicate: lisbon, sortBy: [SortDescriptor(\.name)]))
        #expect(before.map(\.name) == ["excursion 0", "excursion 2", "excursion 4"])

        // An unsaved insert joins, a pending delete leaves, a changed model is tested on its new values.
        context.insert(Excursion(name: "excursion new", destination: "Lisbon", startDate: Self.start, price: 1))
        context.delete(before[0])
        before[1].destination = "Faro"
        let porto = try context.fetch(FetchDescriptor<Excursion>(
            predicate: #Predicate { $0.destination == "Porto" }, sortBy: [SortDescriptor(\.name)]))
        porto[0].destination = "Lisbon"
        let after = try context.fetch(FetchDescriptor(predicate: lisbon, sortBy: [SortDescriptor(\.name)]))
        #expect(after.map(\.name) == ["excursion 1", "excursion 4", "excursion new"].sorted())
        #expect(try context.fetchCount(FetchDescriptor(predicate: lisbon)) == 3)
        // Without pending changes, no insert joins; the store filters nothing here, so the
        // context tests the models as they are (OpenSwiftData.docc/CustomDataStores.md), and deletes never match.
        var excluded = FetchDescriptor(predicate: lisbon, sortBy: [SortDescriptor(\.name)])
        excluded.includePendingChanges = false
        #expect(try context.fetch(excluded).map(\.name) == ["excursion 1", "excursion 4"])

        context.rollback()
        #expect(try context.fetch(FetchDescriptor(predicate: lisbon, sortBy: [SortDescriptor(\.name)])).map(\.name)
            == ["excursion 0", "excursion 2", "excursion 4"])
        #expect(before[1].destination == "Lisbon")
    }

    @Test func updatesAndCascadingDeletesPersist() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = folder.file("excursions.json")
        try seed(ModelContext(try open(file)), count: 4)
        let context = ModelContext(try open(file))
        let trips = try context.fetch(FetchDescriptor<Excursion>(sortBy: [SortDescriptor(\.name)]))
        trips[0].price = 999
        trips[0].stops.append(ExcursionStop(title: "added"))
        context.delete(trips[1])
        try context.save()
        #expect(trips[1].modelContext == nil)

        let reopened = ModelContext(try open(file))
        let names = try reopened.fetch(FetchDescriptor<Excursion>(sortBy: [SortDescriptor(\.name)])).map(\.name)
        #expect(names == ["excursion 0", "excursion 2", "excursion 3"])
        let first = try #require(try reopened.fetch(FetchDescriptor<Excursion>(predicate: #Predicate { $0.name == "excursion 0" })).first)
        #expect(first.price == 999)
        #expect(Set(first.stops.map(\.title)) == ["stop 0.a", "stop 0.b", "added"])
        // The deleted excursion's stops went with it (cascade); the new stop was saved once.
        let stops = try reopened.fetch(FetchDescriptor<ExcursionStop>())
        #expect(stops.count == 7)
        #expect(!stops.contains { $0.title.hasPrefix("stop 1.") })
        #expect(stops.allSatisfy { $0.excursion != nil })
    }

    @Test func identifiersResolveInOtherContainers() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = folder.file("excursions.json")
        try seed(ModelContext(try open(file)), count: 3)
        let ids = try ModelContext(try open(file)).fetchIdentifiers(FetchDescriptor<Excursion>(sortBy: [SortDescriptor(\.name)]))
        #expect(ids.count == 3)
        // An identifier survives JSON, as an app would keep it.
        let encoded = try JSONEncoder().encode(ids[2])
        let decoded = try JSONDecoder().decode(PersistentIdentifier.self, from: encoded)
        #expect(decoded == ids[2])
        #expect(decoded.hashValue == ids[2].hashValue)
        let context = ModelContext(try open(file))
        let model = try #require(context.model(for: decoded) as? Excursion)
        #expect(model.name == "excursion 2")
        #expect(model.stops.count == 2)
        // Batched reads go through identifiers too.
        let batched = try context.fetch(FetchDescriptor<Excursion>(sortBy: [SortDescriptor(\.name)]), batchSize: 2)
        #expect(batched.map(\.name) == ["excursion 0", "excursion 1", "excursion 2"])
    }

    @Test func whatTheStoreCannotDoThrowsTypedErrors() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = folder.file("excursions.json")
        let container = try open(file)
        let context = ModelContext(container)
        try seed(context, count: 2)
        #expect(throws: DataStoreError.unsupportedFeature) { try context.explain(FetchDescriptor<Excursion>()) }
        #expect(throws: DataStoreError.unsupportedFeature) {
            try context.update(\Excursion.price, to: 1, where: nil)
        }
        #expect(throws: DataStoreError.unsupportedFeature) {
            try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        }
        // The JSON store does not implement erase(): the protocol's default refuses, and nothing is lost.
        #expect(throws: DataStoreError.unsupportedFeature) { try container.erase() }
        #expect(try ModelContext(try open(file)).fetchCount(FetchDescriptor<Excursion>()) == 2)
        // Deleting by predicate is fetch-and-delete here: delete rules run.
        try context.delete(model: Excursion.self, where: #Predicate { $0.name == "excursion 0" })
        try context.save()
        #expect(try ModelContext(try open(file)).fetchCount(FetchDescriptor<ExcursionStop>()) == 2)
    }

    @Test func containerRejectsConfigurationsItCannotOpen() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let json = JSONStoreConfiguration(name: "one", fileURL: folder.file("one.json"))
        let other = JSONStoreConfiguration(name: "two", fileURL: folder.file("two.json"))
        #expect(throws: SwiftDataError.loadIssueModelContainer) {
            try ModelContainer(for: Excursion.self, ExcursionStop.self, configurations: json, other)
        }
        #expect(throws: SwiftDataError.loadIssueModelContainer) {
            try ModelContainer(
                for: Excursion.self, ExcursionStop.self, configurations: json, ModelConfiguration(isStoredInMemoryOnly: true))
        }
        let foreign = JSONStoreConfiguration(name: "three", schema: Schema([Trip.self]), fileURL: folder.file("three.json"))
        #expect(throws: SwiftDataError.configurationSchemaNotFoundInContainerSchema) {
            try ModelContainer(for: Excursion.self, ExcursionStop.self, configurations: foreign)
        }
        // The container gave the configuration its schema; the store read it.
        let container = try ModelContainer(for: Excursion.self, ExcursionStop.self, configurations: json)
        #expect(container.configurations.isEmpty)
        #expect(container.schema.entities.map(\.name).sorted() == ["Excursion", "ExcursionStop"])
    }
}

/// Cases a review found: windows, upserts, predicates through related unsaved changes,
/// stores that do not remap.
@Suite struct CustomStoreEdgeTests {
    private static let start = Date(timeIntervalSinceReferenceDate: 800_000_000)

    private func forwarding() throws -> ModelContainer {
        try ModelContainer(
            for: Excursion.self, ExcursionStop.self,
            configurations: ForwardingStoreConfiguration(name: UUID().uuidString, inner: ModelConfiguration(isStoredInMemoryOnly: true)))
    }

    @Test func aHugeLimitDoesNotOverflowTheWindow() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let context = ModelContext(try ModelContainer(
            for: Excursion.self, ExcursionStop.self,
            configurations: JSONStoreConfiguration(name: "edge", fileURL: folder.file("edge.json"))))
        for i in 0..<3 { context.insert(Excursion(name: "e\(i)", destination: "x", startDate: Self.start, price: Double(i))) }
        try context.save()
        var descriptor = FetchDescriptor<Excursion>(predicate: #Predicate { $0.price >= 0 }, sortBy: [SortDescriptor(\.price)])
        descriptor.fetchOffset = 1
        descriptor.fetchLimit = .max
        #expect(try context.fetch(descriptor).map(\.name) == ["e1", "e2"])
        let batched = try context.fetch(descriptor, batchSize: 1)
        #expect(batched.map(\.name) == ["e1", "e2"])
        var seen: [String] = []
        try context.enumerate(descriptor) { seen.append($0.name) }
        #expect(seen == ["e1", "e2"])
    }

    @Test func anUpsertKeepsOneObjectPerIdentifier() throws {
        let context = ModelContext(try forwarding())
        context.insert(Excursion(name: "A", destination: "Lisbon", startDate: Self.start, price: 1))
        try context.save()
        let old = try #require(try context.fetch(FetchDescriptor<Excursion>()).first)
        let stop = ExcursionStop(title: "kept")
        old.stops = [stop]
        try context.save()
        let new = Excursion(name: "A", destination: "Porto", startDate: Self.start, price: 2)
        context.insert(new)
        try context.save()
        #expect(new.persistentModelID == old.persistentModelID)
        #expect(context.model(for: new.persistentModelID) === new)
        #expect(old.modelContext == nil)
        #expect(try context.fetch(FetchDescriptor<Excursion>()).count == 1)
        #expect(try context.fetch(FetchDescriptor<Excursion>()).first === new)
    }

    @Test func aPredicateSeesUnsavedChangesOfRelatedModels() throws {
        let context = ModelContext(try forwarding())
        let trip = Excursion(name: "A", destination: "Lisbon", startDate: Self.start, price: 1)
        context.insert(trip)
        trip.stops = [ExcursionStop(title: "s1"), ExcursionStop(title: "s2")]
        try context.save()
        trip.destination = "Faro"
        let stops = try context.fetch(FetchDescriptor<ExcursionStop>(predicate: #Predicate { $0.excursion?.destination == "Faro" }))
        #expect(stops.count == 2)
    }

    @Test func aStoreThatDoesNotRemapInsertsMakesSaveThrow() throws {
        let context = ModelContext(try ModelContainer(for: Memo.self, configurations: ForgetfulStoreConfiguration()))
        context.insert(Memo(text: "lost?", priority: 1))
        #expect(throws: SwiftDataError.modelValidationFailure) { try context.save() }
        // Nothing was taken for saved: the insert is still pending.
        #expect(context.insertedModelsArray.count == 1)
        #expect(context.hasChanges)
    }
}

final class ForgetfulStoreConfiguration: DataStoreConfiguration {
    typealias Store = ForgetfulStore
    var name = "forgetful"
    var schema: Schema?
    static func == (lhs: ForgetfulStoreConfiguration, rhs: ForgetfulStoreConfiguration) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// A store whose saves remap nothing.
final class ForgetfulStore: DataStore {
    typealias Configuration = ForgetfulStoreConfiguration
    typealias Snapshot = DefaultSnapshot
    let configuration: ForgetfulStoreConfiguration
    let schema: Schema
    let identifier = "forgetful"

    init(_ configuration: ForgetfulStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        self.configuration = configuration
        self.schema = configuration.schema!
    }

    func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchResult<T, DefaultSnapshot> {
        DataStoreFetchResult(descriptor: request.descriptor, fetchedSnapshots: [])
    }

    func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        DataStoreSaveChangesResult(for: identifier)
    }
}
