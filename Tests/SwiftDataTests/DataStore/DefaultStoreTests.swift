import Foundation
import SwiftData
import Testing

/// The built-in store through the `DataStore` protocol: driven directly in
/// snapshots, and behind a custom store (`ForwardingStore`) whose container runs the
/// context's custom-store path against the engine, with predicates, sorts and
/// windows done by the store.
@Suite struct DefaultStoreTests {
    private static let start = Date(timeIntervalSinceReferenceDate: 800_000_000)
    private let schema = Schema([Excursion.self, ExcursionStop.self])

    private func forwarding(_ inner: ModelConfiguration, name: String = UUID().uuidString) throws -> (ModelContainer, ForwardingStore) {
        let configuration = ForwardingStoreConfiguration(name: name, inner: inner)
        let container = try ModelContainer(for: Excursion.self, ExcursionStop.self, configurations: configuration)
        let store = try #require(ForwardingStore.opened.withLock { $0.compactMap(\.store).last { $0.configuration === configuration } })
        return (container, store)
    }

    @Test func snapshotsRoundTripThroughTheStore() throws {
        let store = try DefaultStore(ModelConfiguration(schema: schema, isStoredInMemoryOnly: true))
        let state = EditingState(author: "importer")
        // A snapshot of a model no context holds yet: a temporary identifier, as a context sends it.
        let excursion = Excursion(name: "Porto", destination: "Porto", startDate: Self.start, price: 80)
        var related: [PersistentIdentifier: any BackingData] = [:]
        let snapshot = DefaultSnapshot(from: excursion.persistentBackingData, relatedBackingDatas: &related)
        #expect(snapshot.persistentIdentifier.isTemporary)
        #expect(snapshot.value(forKey: "price", as: Double.self) == 80)

        let saved = try store.save(DataStoreSaveChangesRequest(editingState: state, inserted: [snapshot]))
        let permanent = try #require(saved.remappedIdentifiers[snapshot.persistentIdentifier])
        #expect(!permanent.isTemporary)
        #expect(permanent.storeIdentifier == store.identifier)
        #expect(saved.snapshotsToReregister[snapshot.persistentIdentifier]?.value(forKey: "name", as: String.self) == "Porto")

        let request = DataStoreFetchRequest(
            descriptor: FetchDescriptor<Excursion>(predicate: #Predicate { $0.price > 50 }), editingState: state)
        let fetched = try store.fetch(request).fetchedSnapshots
        #expect(fetched.map(\.persistentIdentifier) == [permanent])
        #expect(fetched.first?.value(forKey: "startDate", as: Date.self) == Self.start)
        #expect(try store.fetchCount(request) == 1)
        #expect(try store.fetchIdentifiers(request) == [permanent])

        // An update names the stored model and the values it changes.
        let update = DefaultSnapshot(persistentIdentifier: permanent, values: ["price": 40.0, "destination": "Braga"])
        _ = try store.save(DataStoreSaveChangesRequest(editingState: state, updated: [update]))
        #expect(try store.fetchCount(request) == 0)
        let reread = try store.fetch(DataStoreFetchRequest(descriptor: FetchDescriptor<Excursion>(), editingState: state))
        #expect(reread.fetchedSnapshots.first?.value(forKey: "destination", as: String.self) == "Braga")
        #expect(reread.fetchedSnapshots.first?.value(forKey: "name", as: String.self) == "Porto")

        // History records who saved.
        let history = try store.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        #expect(history.count == 2)
        #expect(history.allSatisfy { $0.author == "importer" })

        try store.delete(DataStoreBatchDeleteRequest<Excursion>(editingState: state, predicate: nil))
        #expect(try store.fetchCount(DataStoreFetchRequest(descriptor: FetchDescriptor<Excursion>(), editingState: state)) == 0)
    }

    @Test func aContainerOverAForwardingStoreBehavesAsOverTheEngine() throws {
        let (container, store) = try forwarding(ModelConfiguration(schema: schema, isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        context.author = "app"
        for i in 0..<12 {
            let excursion = Excursion(
                name: "e\(i)", destination: i < 6 ? "Lisbon" : "Porto", startDate: Self.start.addingTimeInterval(Double(i)),
                price: Double(i))
            context.insert(excursion)
            excursion.stops = (0..<(i % 3)).map { ExcursionStop(title: "e\(i) stop \($0)") }
        }
        try context.save()
        #expect(store.authors == ["app"])
        #expect(!context.insertedModelsArray.contains { _ in true })

        var descriptor = FetchDescriptor<Excursion>(
            predicate: #Predicate { $0.destination == "Lisbon" && $0.price >= 1 }, sortBy: [SortDescriptor(\.price, order: .reverse)])
        descriptor.fetchLimit = 2
        #expect(try context.fetch(descriptor).map(\.name) == ["e5", "e4"])
        #expect(try context.fetchCount(FetchDescriptor<ExcursionStop>()) == 12)

        // A new context reads what was saved, relationships resolved through the store.
        let other = ModelContext(container)
        let e5 = try #require(try other.fetch(FetchDescriptor<Excursion>(predicate: #Predicate { $0.name == "e5" })).first)
        #expect(Set(e5.stops.map(\.title)) == ["e5 stop 0", "e5 stop 1"])
        #expect(e5.stops.allSatisfy { $0.excursion === e5 })
        e5.stops.removeAll()
        try other.save()
        let orphans = try ModelContext(container).fetch(FetchDescriptor<ExcursionStop>(predicate: #Predicate { $0.excursion == nil }))
        #expect(orphans.count == 2)

        // A unique key inserted again updates the stored model: the store remaps the insert onto it.
        let again = Excursion(name: "e0", destination: "Faro", startDate: Self.start, price: 100)
        context.insert(again)
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Excursion>()) == 12)
        let e0 = try #require(try ModelContext(container).fetch(FetchDescriptor<Excursion>(predicate: #Predicate { $0.name == "e0" })).first)
        #expect(e0.destination == "Faro")
        #expect(again.persistentModelID == e0.persistentModelID)

        let history = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        #expect(history.count == 3)

        // Erasing the container erases through the store.
        try container.erase()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Excursion>()) == 0)
    }

    @Test func aForwardingStoreKeepsItsDocument() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = folder.file("forwarded.store")
        do {
            let (container, _) = try forwarding(ModelConfiguration(schema: schema, url: url))
            let context = ModelContext(container)
            let trip = Excursion(name: "kept", destination: "Évora", startDate: Self.start, price: 12.5)
            context.insert(trip)
            trip.stops = [ExcursionStop(title: "Temple")]
            try context.save()
        }
        // The document opens as any other, with or without the forwarding store in front.
        let direct = ModelContext(try ModelContainer(for: Excursion.self, ExcursionStop.self, configurations: ModelConfiguration(url: url)))
        let trip = try #require(try direct.fetch(FetchDescriptor<Excursion>()).first)
        #expect(trip.destination == "Évora")
        #expect(trip.stops.map(\.title) == ["Temple"])
    }

    @Test func contextsReportTheirEditingStateToTheStore() throws {
        let (container, store) = try forwarding(ModelConfiguration(schema: schema, isStoredInMemoryOnly: true))
        var id: UUID?
        do {
            let context = ModelContext(container)
            context.author = "writer"
            #expect(context.editingState.author == "writer")
            #expect(context.editingState.id == context.editingState.id)
            id = context.editingState.id
        }
        let expected = try #require(id)
        #expect(store.states == ["begin \(expected)", "end \(expected)"])
    }

    /// The concurrency contract through a custom store: saves of two contexts merge
    /// property by property; `failOnConflict` reaches `DefaultStore`, which cannot keep
    /// it (it knows no context's reads) and says so rather than let a conflict through.
    @Test func savesThroughAForwardingStoreMergeByPropertyAndRefuseFailOnConflict() throws {
        let (container, _) = try forwarding(ModelConfiguration(schema: schema, isStoredInMemoryOnly: true))
        let seed = ModelContext(container)
        seed.insert(Excursion(name: "Sintra", destination: "Sintra", startDate: Self.start, price: 30))
        try seed.save()
        let a = ModelContext(container), b = ModelContext(container)
        let mine = try #require(try a.fetch(FetchDescriptor<Excursion>()).first)
        let theirs = try #require(try b.fetch(FetchDescriptor<Excursion>()).first)
        mine.price = 35
        theirs.destination = "Cascais"
        try a.save()
        try b.save()
        let check = try #require(try ModelContext(container).fetch(FetchDescriptor<Excursion>()).first)
        #expect(check.price == 35)
        #expect(check.destination == "Cascais")
        // Stops added by both contexts both land: the list merges by its changes.
        let first = ExcursionStop(title: "Palácio"), second = ExcursionStop(title: "Castelo")
        a.insert(first)
        mine.stops.append(first)
        b.insert(second)
        theirs.stops.append(second)
        try a.save()
        try b.save()
        let reader = ModelContext(container)
        let stored = try #require(try reader.fetch(FetchDescriptor<Excursion>()).first)
        #expect(Set(stored.stops.map(\.title)) == ["Palácio", "Castelo"])

        b.conflictPolicy = .failOnConflict
        theirs.price = 36
        #expect(throws: DataStoreError.unsupportedFeature) { try b.save() }
        #expect(b.hasChanges)
    }
}
