import SwiftData
import Testing

@Suite struct SeveralContextsTests {
    private func makeContainer(_ types: any PersistentModel.Type...) throws -> ModelContainer {
        try ModelContainer(for: Schema(types), configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    }

    // MARK: Visibility of saved changes

    @Test func savedInsertIsVisibleToAnotherContext() throws {
        let container = try makeContainer(Trip.self)
        let writer = ModelContext(container)
        let reader = ModelContext(container)
        #expect(try reader.fetchCount(FetchDescriptor<Trip>()) == 0)

        writer.insert(Trip(name: "Seoul", destination: "Korea"))
        try writer.save()

        let trips = try reader.fetch(FetchDescriptor<Trip>())
        #expect(trips.map(\.name) == ["Seoul"])
        #expect(trips.first?.destination == "Korea")
    }

    @Test func savedUpdateIsVisibleToAnotherContext() throws {
        let container = try makeContainer(Trip.self)
        let writer = ModelContext(container)
        let reader = ModelContext(container)
        let trip = Trip(name: "Quito", destination: "Ecuador")
        trip.price = 10
        writer.insert(trip)
        try writer.save()

        let seen = try #require(try reader.fetch(FetchDescriptor<Trip>()).first)
        #expect(seen.price == 10)

        trip.price = 99
        trip.notes = "updated"
        try writer.save()

        let again = try #require(try reader.fetch(FetchDescriptor<Trip>()).first)
        #expect(again === seen) // one object per row per context
        #expect(again.price == 99)
        #expect(again.notes == "updated")
        #expect(try reader.fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { $0.price == 99 })) == 1)
    }

    @Test func savedDeleteIsVisibleToAnotherContext() throws {
        let container = try makeContainer(Trip.self)
        let writer = ModelContext(container)
        let reader = ModelContext(container)
        let keep = Trip(name: "Keep", destination: "A")
        let drop = Trip(name: "Drop", destination: "B")
        writer.insert(keep)
        writer.insert(drop)
        try writer.save()
        #expect(try reader.fetchCount(FetchDescriptor<Trip>()) == 2)

        writer.delete(drop)
        try writer.save()

        #expect(try reader.fetch(FetchDescriptor<Trip>()).map(\.name) == ["Keep"])
        #expect(try reader.fetchCount(FetchDescriptor<Trip>()) == 1)
    }

    @Test func savedRelationshipChangeIsVisibleToAnotherContext() throws {
        let container = try makeContainer(AnimalCategory.self, Animal.self)
        let writer = ModelContext(container)
        let reader = ModelContext(container)
        let category = AnimalCategory(name: "Mammal")
        writer.insert(category)
        try writer.save()
        let seen = try #require(try reader.fetch(FetchDescriptor<AnimalCategory>()).first)
        #expect(seen.animals.isEmpty)

        category.animals.append(Animal(name: "Fox", diet: .omnivorous))
        try writer.save()

        let again = try #require(try reader.fetch(FetchDescriptor<AnimalCategory>()).first)
        #expect(again.animals.map(\.name) == ["Fox"])
    }

    // MARK: Unsaved changes stay private

    @Test func unsavedChangesAreInvisibleToAnotherContext() throws {
        let container = try makeContainer(Trip.self)
        let writer = ModelContext(container)
        let reader = ModelContext(container)
        let saved = Trip(name: "Saved", destination: "Here")
        saved.price = 1
        writer.insert(saved)
        try writer.save()

        // Pending insert, update and delete, never saved.
        writer.insert(Trip(name: "Pending", destination: "There"))
        saved.price = 2
        #expect(writer.hasChanges)

        let seen = try reader.fetch(FetchDescriptor<Trip>())
        #expect(seen.map(\.name) == ["Saved"])
        #expect(seen.first?.price == 1)

        writer.delete(saved)
        #expect(try reader.fetchCount(FetchDescriptor<Trip>()) == 1)
        #expect(reader.hasChanges == false)

        writer.rollback()
        #expect(try reader.fetch(FetchDescriptor<Trip>()).map(\.price) == [1])
    }

    @Test func pendingInsertIsVisibleOnlyToItsOwnContext() throws {
        let container = try makeContainer(Trip.self)
        let writer = ModelContext(container)
        let reader = ModelContext(container)
        writer.insert(Trip(name: "Draft", destination: "Nowhere"))

        #expect(try writer.fetchCount(FetchDescriptor<Trip>()) == 1)
        #expect(try reader.fetchCount(FetchDescriptor<Trip>()) == 0)
    }

    // MARK: Concurrency

    @Test func concurrentSavesFromManyTasksAllLand() async throws {
        let container = try makeContainer(GEvent.self)
        let tasks = 16
        let perTask = 25
        try await withThrowingTaskGroup(of: Void.self) { group in
            for batch in 0..<tasks {
                group.addTask {
                    let context = ModelContext(container)
                    for index in 0..<perTask {
                        context.insert(GEvent(batch: batch, index: index))
                        if index % 5 == 4 { try context.save() }
                    }
                    try context.save()
                }
            }
            try await group.waitForAll()
        }

        let context = ModelContext(container)
        #expect(try context.fetchCount(FetchDescriptor<GEvent>()) == tasks * perTask)
        for batch in [0, tasks / 2, tasks - 1] {
            let count = try context.fetchCount(FetchDescriptor<GEvent>(predicate: #Predicate { $0.batch == batch }))
            #expect(count == perTask)
        }
    }

    @Test func concurrentUpdatesFromManyTasksAllLand() async throws {
        let container = try makeContainer(GEvent.self)
        let setup = ModelContext(container)
        for batch in 0..<20 { setup.insert(GEvent(batch: batch, index: 0)) }
        try setup.save()

        try await withThrowingTaskGroup(of: Void.self) { group in
            for batch in 0..<20 {
                group.addTask {
                    let context = ModelContext(container)
                    let mine = try context.fetch(FetchDescriptor<GEvent>(predicate: #Predicate { $0.batch == batch }))
                    for event in mine { event.index = batch * 100 }
                    try context.save()
                }
            }
            try await group.waitForAll()
        }

        let check = ModelContext(container)
        let events = try check.fetch(FetchDescriptor<GEvent>(sortBy: [SortDescriptor(\.batch)]))
        #expect(events.count == 20)
        #expect(events.map(\.index) == (0..<20).map { $0 * 100 })
    }

    @Test func concurrentFetchSeesOnlyWholeCommits() async throws {
        let container = try makeContainer(GEvent.self)
        let commits = 60
        let rowsPerCommit = 10
        let total = commits * rowsPerCommit

        let observed = try await withThrowingTaskGroup(of: [Int].self) { group in
            group.addTask {
                let context = ModelContext(container)
                for batch in 0..<commits {
                    for index in 0..<rowsPerCommit {
                        context.insert(GEvent(batch: batch, index: index))
                    }
                    try context.save()
                    await Task.yield()
                }
                return []
            }
            group.addTask {
                var counts: [Int] = []
                var iterations = 0
                while iterations < 1_000_000 {
                    iterations += 1
                    // A fresh context each time: nothing is cached between reads.
                    let context = ModelContext(container)
                    let count = try context.fetchCount(FetchDescriptor<GEvent>())
                    counts.append(count)
                    if count >= total { break }
                    await Task.yield()
                }
                return counts
            }
            var all: [Int] = []
            for try await counts in group { all += counts }
            return all
        }

        #expect(!observed.isEmpty)
        #expect(observed.allSatisfy { $0 % rowsPerCommit == 0 }, "saw a partial commit: \(observed.filter { $0 % rowsPerCommit != 0 })")
        #expect(observed.last == total)
        #expect(observed == observed.sorted()) // counts never go backwards
        let final = ModelContext(container)
        #expect(try final.fetchCount(FetchDescriptor<GEvent>()) == total)
    }

    @Test func modelContainerIsSendable() async throws {
        func requireSendable<T: Sendable>(_ value: T) -> T { value }
        let container = requireSendable(try makeContainer(Trip.self))

        let saved = Task.detached {
            let context = ModelContext(container)
            context.insert(Trip(name: "Detached", destination: "Elsewhere"))
            try context.save()
            return try context.fetchCount(FetchDescriptor<Trip>())
        }
        #expect(try await saved.value == 1)

        let read = Task {
            let context = ModelContext(container)
            return try context.fetch(FetchDescriptor<Trip>()).map(\.name)
        }
        #expect(try await read.value == ["Detached"])
    }

    @Test func persistentIdentifierCrossesTasks() async throws {
        let container = try makeContainer(Trip.self)
        let id = try await Task.detached { () throws -> PersistentIdentifier in
            let context = ModelContext(container)
            let trip = Trip(name: "Crossing", destination: "Channel")
            context.insert(trip)
            try context.save()
            return trip.persistentModelID
        }.value

        let context = ModelContext(container)
        let model = context.model(for: id)
        let trip = try #require(model as? Trip)
        #expect(trip.name == "Crossing")
        #expect(trip.persistentModelID == id)
    }
}
