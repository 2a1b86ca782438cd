import SwiftData
import Testing

@ModelActor
actor GTripStore {
    func addTrip(name: String, destination: String) throws -> PersistentIdentifier {
        let trip = Trip(name: name, destination: destination)
        modelContext.insert(trip)
        try modelContext.save()
        return trip.persistentModelID
    }

    func addUnsaved(name: String) -> PersistentIdentifier {
        let trip = Trip(name: name, destination: "Draft")
        modelContext.insert(trip)
        return trip.persistentModelID
    }

    func save() throws {
        try modelContext.save()
    }

    func tripNames() throws -> [String] {
        try modelContext.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)])).map(\.name)
    }

    func tripCount() throws -> Int {
        try modelContext.fetchCount(FetchDescriptor<Trip>())
    }

    func destination(of id: PersistentIdentifier) -> String? {
        self[id, as: Trip.self]?.destination
    }

    func exists(_ id: PersistentIdentifier) -> Bool {
        self[id, as: Trip.self] != nil
    }

    func rename(_ id: PersistentIdentifier, to name: String) throws {
        guard let trip = self[id, as: Trip.self] else { return }
        trip.name = name
        try modelContext.save()
    }

    func delete(_ id: PersistentIdentifier) throws {
        guard let trip = self[id, as: Trip.self] else { return }
        modelContext.delete(trip)
        try modelContext.save()
    }

    func identifiers() throws -> [PersistentIdentifier] {
        try modelContext.fetchIdentifiers(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]))
    }

    func contextIdentity() -> ObjectIdentifier {
        ObjectIdentifier(modelContext)
    }

    func contextContainerIsMine() -> Bool {
        modelContext.container === modelContainer
    }

    func hasChanges() -> Bool {
        modelContext.hasChanges
    }
}

@ModelActor
actor GAnimalImporter {
    func importAnimals(_ names: [String], category: String) throws -> [PersistentIdentifier] {
        let group = AnimalCategory(name: category)
        modelContext.insert(group)
        for name in names {
            let animal = Animal(name: name, diet: .omnivorous)
            group.animals.append(animal)
        }
        try modelContext.save()
        return group.animals.map(\.persistentModelID)
    }

    func categoryName(ofAnimal id: PersistentIdentifier) -> String? {
        self[id, as: Animal.self]?.category?.name
    }
}

/// Model actors with an access level, as library packages declare them (#39, point 5):
/// the generated members must be as visible as the actor for these to compile.
@ModelActor
public actor GPublicDatabase {
    func count() throws -> Int { try modelContext.fetchCount(FetchDescriptor<Trip>()) }
}

@ModelActor
package actor GPackageDatabase {
    func insert(name: String) throws {
        modelContext.insert(Trip(name: name, destination: "Package"))
        try modelContext.save()
    }
}

@ModelActor
private actor GPrivateDatabase {
    func names() throws -> [String] { try modelContext.fetch(FetchDescriptor<Trip>()).map(\.name) }
}

/// A model actor written without the macro, as the protocol allows.
actor GManualTripActor: ModelActor {
    nonisolated let modelExecutor: any ModelExecutor
    nonisolated let modelContainer: ModelContainer

    init(container: ModelContainer) {
        let context = ModelContext(container)
        modelExecutor = DefaultSerialModelExecutor(modelContext: context)
        modelContainer = container
    }

    func insert(name: String) throws -> Int {
        modelContext.insert(Trip(name: name, destination: "Manual"))
        try modelContext.save()
        return try modelContext.fetchCount(FetchDescriptor<Trip>())
    }
}

@Suite struct ModelActorTests {
    private func makeContainer(_ types: any PersistentModel.Type...) throws -> ModelContainer {
        try ModelContainer(for: Schema(types), configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    }

    @Test func actorInsertsFetchesAndSaves() async throws {
        let container = try makeContainer(Trip.self)
        let store = GTripStore(modelContainer: container)
        _ = try await store.addTrip(name: "Berlin", destination: "Germany")
        _ = try await store.addTrip(name: "Athens", destination: "Greece")

        #expect(try await store.tripNames() == ["Athens", "Berlin"])
        #expect(try await store.tripCount() == 2)

        let context = ModelContext(container)
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 2)
    }

    @Test func actorsWithAnAccessLevelWork() async throws {
        let container = try makeContainer(Trip.self)
        try await GPackageDatabase(modelContainer: container).insert(name: "Oslo")
        #expect(try await GPublicDatabase(modelContainer: container).count() == 1)
        #expect(try await GPrivateDatabase(modelContainer: container).names() == ["Oslo"])
        let database: any ModelActor = GPublicDatabase(modelContainer: container)
        #expect(database.modelContainer === container)
    }

    @Test func unsavedActorChangesStayInTheActor() async throws {
        let container = try makeContainer(Trip.self)
        let store = GTripStore(modelContainer: container)
        _ = await store.addUnsaved(name: "Pending")
        #expect(await store.hasChanges())

        let context = ModelContext(container)
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 0)

        try await store.save()
        #expect(await store.hasChanges() == false)
        #expect(try context.fetch(FetchDescriptor<Trip>()).map(\.name) == ["Pending"])
    }

    @Test func twoActorsShareOneContainer() async throws {
        let container = try makeContainer(Trip.self)
        let writer = GTripStore(modelContainer: container)
        let reader = GTripStore(modelContainer: container)

        let id = try await writer.addTrip(name: "Dublin", destination: "Ireland")
        #expect(try await reader.tripNames() == ["Dublin"])
        #expect(await reader.destination(of: id) == "Ireland")

        try await reader.rename(id, to: "Cork")
        #expect(try await writer.tripNames() == ["Cork"])

        #expect(await writer.contextIdentity() != reader.contextIdentity())
    }

    @Test func concurrentActorsAllSave() async throws {
        let container = try makeContainer(Trip.self)
        let actors = (0..<4).map { _ in GTripStore(modelContainer: container) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (i, actor) in actors.enumerated() {
                group.addTask {
                    for j in 0..<10 {
                        _ = try await actor.addTrip(name: "Trip \(i)-\(j)", destination: "D\(i)")
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await actors[0].tripCount() == 40)
        let context = ModelContext(container)
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 40)
    }

    @Test func subscriptReturnsModelForIdentifier() async throws {
        let container = try makeContainer(Trip.self)
        let store = GTripStore(modelContainer: container)
        let id = try await store.addTrip(name: "Vienna", destination: "Austria")
        #expect(!id.isTemporary)
        #expect(await store.destination(of: id) == "Austria")
        #expect(await store.exists(id))
    }

    @Test func subscriptReturnsModelSavedElsewhere() async throws {
        let container = try makeContainer(Trip.self)
        let context = ModelContext(container)
        let trip = Trip(name: "Prague", destination: "Czechia")
        context.insert(trip)
        try context.save()

        let store = GTripStore(modelContainer: container)
        #expect(await store.destination(of: trip.persistentModelID) == "Czechia")
    }

    @Test func subscriptReturnsNilForDeletedRow() async throws {
        let container = try makeContainer(Trip.self)
        let writer = GTripStore(modelContainer: container)
        let reader = GTripStore(modelContainer: container)
        let id = try await writer.addTrip(name: "Gone", destination: "Nowhere")
        try await writer.delete(id)

        #expect(await writer.exists(id) == false)
        #expect(await reader.exists(id) == false)
        #expect(await reader.destination(of: id) == nil)
        #expect(try await reader.tripCount() == 0)
    }

    @Test func subscriptReturnsNilForRowDeletedByAnotherContext() async throws {
        let container = try makeContainer(Trip.self)
        let store = GTripStore(modelContainer: container)
        let id = try await store.addTrip(name: "Short", destination: "Lived")
        #expect(await store.exists(id))

        let context = ModelContext(container)
        let trip = try #require(context.model(for: id) as? Trip)
        context.delete(trip)
        try context.save()

        let fresh = GTripStore(modelContainer: container)
        #expect(await fresh.exists(id) == false)
    }

    @Test func subscriptFindsUnsavedModelInTheSameActor() async throws {
        let container = try makeContainer(Trip.self)
        let store = GTripStore(modelContainer: container)
        let id = await store.addUnsaved(name: "Draft")
        #expect(id.isTemporary)
        #expect(await store.destination(of: id) == "Draft")
        // Another actor's context never saw it.
        let other = GTripStore(modelContainer: container)
        #expect(await other.exists(id) == false)
    }

    @Test func subscriptWithWrongModelTypeReturnsNil() async throws {
        let container = try makeContainer(Trip.self, AnimalCategory.self)
        let importer = GAnimalImporter(modelContainer: container)
        let animalIDs = try await importer.importAnimals(["Yak"], category: "Bovine")
        let store = GTripStore(modelContainer: container)
        let animalID = try #require(animalIDs.first)
        #expect(await store.exists(animalID) == false)
        #expect(await importer.categoryName(ofAnimal: animalID) == "Bovine")
    }

    @Test func identifiersPassBetweenActors() async throws {
        let container = try makeContainer(AnimalCategory.self, Animal.self)
        let importer = GAnimalImporter(modelContainer: container)
        let other = GAnimalImporter(modelContainer: container)
        let ids = try await importer.importAnimals(["Lion", "Tiger"], category: "Cat")
        #expect(ids.count == 2)
        #expect(ids.allSatisfy { !$0.isTemporary })
        for id in ids {
            #expect(await other.categoryName(ofAnimal: id) == "Cat")
        }

        let trips = try makeContainer(Trip.self)
        let first = GTripStore(modelContainer: trips)
        let second = GTripStore(modelContainer: trips)
        _ = try await first.addTrip(name: "B", destination: "b")
        _ = try await first.addTrip(name: "A", destination: "a")
        let tripIDs = try await first.identifiers()
        #expect(tripIDs.count == 2)
        var destinations: [String] = []
        for id in tripIDs {
            if let destination = await second.destination(of: id) { destinations.append(destination) }
        }
        #expect(destinations == ["a", "b"])
    }

    @Test @MainActor func actorContextIsNotTheMainContext() async throws {
        let container = try makeContainer(Trip.self)
        let store = GTripStore(modelContainer: container)
        let main = container.mainContext
        let actorContext = await store.contextIdentity()
        #expect(actorContext != ObjectIdentifier(main))
        #expect(await store.contextContainerIsMine())

        // The actor's context is also stable: the same one on every call.
        #expect(await store.contextIdentity() == actorContext)
    }

    @Test func modelContainerPropertyIsTheGivenContainer() async throws {
        let container = try makeContainer(Trip.self)
        let store = GTripStore(modelContainer: container)
        #expect(store.modelContainer === container)
        #expect(store.modelContainer == container)
        #expect(await store.contextContainerIsMine())
    }

    @Test func defaultExecutorIsDefaultSerialModelExecutor() async throws {
        let container = try makeContainer(Trip.self)
        let store = GTripStore(modelContainer: container)
        #expect(store.modelExecutor is DefaultSerialModelExecutor)
        let executorContext = ObjectIdentifier(store.modelExecutor.modelContext)
        #expect(await store.contextIdentity() == executorContext)
    }

    @Test func handWrittenModelActorWithDefaultSerialModelExecutor() async throws {
        let container = try makeContainer(Trip.self)
        let manual = GManualTripActor(container: container)
        #expect(manual.modelExecutor is DefaultSerialModelExecutor)
        #expect(manual.modelContainer === container)
        #expect(try await manual.insert(name: "By hand") == 1)

        let context = ModelContext(container)
        #expect(try context.fetch(FetchDescriptor<Trip>()).map(\.name) == ["By hand"])
    }
}
