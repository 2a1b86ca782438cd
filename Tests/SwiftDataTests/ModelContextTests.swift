import SwiftData
import Testing

/// Point 6: the model context.
@Suite struct ModelContextTests {
    let container: ModelContainer
    let context: ModelContext

    init() throws {
        container = try ModelContainer(for: Trip.self, AnimalCategory.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        context = ModelContext(container)
    }

    private func count<T: PersistentModel>(_ type: T.Type, in other: ModelContext? = nil) throws -> Int {
        try (other ?? ModelContext(container)).fetchCount(FetchDescriptor<T>())
    }

    @Test func insertingARootInsertsTheReachableGraph() throws {
        let trip = Trip(name: "A", destination: "B")
        let item = BucketListItem(title: "See")
        trip.bucketList = [item]
        trip.livingAccommodation = LivingAccommodation(address: "1 St", placeName: "Inn")
        context.insert(trip)
        #expect(context.insertedModelsArray.count == 3)
        #expect(item.modelContext === context)
        #expect(item.trip === trip)
        try context.save()
        #expect(try count(BucketListItem.self) == 1)
        #expect(try count(LivingAccommodation.self) == 1)
    }

    @Test func trackedArraysAndHasChanges() throws {
        #expect(!context.hasChanges)
        let a = Trip(name: "A", destination: "X"), b = Trip(name: "B", destination: "X")
        context.insert(a)
        context.insert(b)
        #expect(context.hasChanges)
        #expect(context.insertedModelsArray.map(\.persistentModelID) == [a.persistentModelID, b.persistentModelID])
        try context.save()
        #expect(!context.hasChanges)
        #expect(context.insertedModelsArray.isEmpty)
        a.destination = "Y"
        #expect(context.changedModelsArray.map(\.persistentModelID) == [a.persistentModelID])
        context.delete(b)
        #expect(context.deletedModelsArray.map(\.persistentModelID) == [b.persistentModelID])
        try context.save()
        #expect(context.changedModelsArray.isEmpty && context.deletedModelsArray.isEmpty)
        #expect(try ModelContext(container).fetch(FetchDescriptor<Trip>()).map(\.destination) == ["Y"])
    }

    @Test func deletingAnUnsavedModelForgetsIt() throws {
        let trip = Trip(name: "A", destination: "X")
        context.insert(trip)
        context.delete(trip)
        #expect(!context.hasChanges)
        try context.save()
        #expect(try count(Trip.self) == 0)
    }

    @Test func deleteWherePredicate() throws {
        for i in 0..<10 {
            let trip = Trip(name: "\(i)", destination: i % 2 == 0 ? "Even" : "Odd")
            trip.isFavorite = i < 3
            context.insert(trip)
        }
        try context.save()
        try context.delete(model: Trip.self, where: #Predicate { $0.destination == "Even" })
        try context.save()
        #expect(try count(Trip.self) == 5)
        try context.delete(model: Trip.self, where: #Predicate { $0.isFavorite == false })
        try context.save()
        #expect(try ModelContext(container).fetch(FetchDescriptor<Trip>()).map(\.name) == ["1"])
        try context.delete(model: Trip.self)
        try context.save()
        #expect(try count(Trip.self) == 0)
    }

    @Test func rollbackRestoresSavedState() throws {
        let kept = Trip(name: "kept", destination: "Before")
        let gone = Trip(name: "gone", destination: "X")
        context.insert(kept)
        context.insert(gone)
        try context.save()
        kept.destination = "After"
        context.delete(gone)
        let fresh = Trip(name: "fresh", destination: "X")
        context.insert(fresh)
        context.rollback()
        #expect(!context.hasChanges)
        #expect(kept.destination == "Before")
        #expect(!gone.isDeleted)
        #expect(fresh.modelContext == nil)
        try context.save()
        #expect(try count(Trip.self) == 2)
    }

    @Test func transactionSavesOrRollsBack() throws {
        try context.transaction {
            context.insert(Trip(name: "in", destination: "tx"))
        }
        #expect(!context.hasChanges)
        #expect(try count(Trip.self) == 1)
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try context.transaction {
                context.insert(Trip(name: "never", destination: "tx"))
                throw Abort()
            }
        }
        #expect(!context.hasChanges)
        #expect(try count(Trip.self) == 1)
    }

    @Test func batchedFetchesCountsAndIdentifiers() throws {
        for i in 0..<25 { context.insert(Trip(name: String(format: "%02d", i), destination: "X")) }
        try context.save()
        let descriptor = FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)])
        let batched = try context.fetch(descriptor, batchSize: 10)
        #expect(batched.count == 25)
        #expect(batched.map(\.name) == (0..<25).map { String(format: "%02d", $0) })
        #expect(try context.fetchCount(descriptor) == 25)
        let ids = try context.fetchIdentifiers(descriptor)
        #expect(ids.count == 25)
        let batchedIDs = try context.fetchIdentifiers(descriptor, batchSize: 7)
        #expect(Array(batchedIDs) == ids)
        #expect((context.model(for: ids[3]) as? Trip)?.name == "03")
    }

    @Test func enumerateVisitsEveryMatchInBatches() throws {
        for i in 0..<12 { context.insert(Trip(name: "\(i)", destination: "X")) }
        try context.save()
        let reader = ModelContext(container)
        var names: [String] = []
        try reader.enumerate(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]), batchSize: 5) { trip in
            names.append(trip.name)
            trip.isFavorite = true
        }
        #expect(names.count == 12)
        #expect(reader.hasChanges)
        try reader.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { $0.isFavorite })) == 12)
    }

    @Test func processPendingChangesInsertsNewlyReachableModels() throws {
        let category = AnimalCategory(name: "Mammal")
        context.insert(category)
        try context.save()
        let cow = Animal(name: "Cow", diet: .herbivorous)
        category.animals.append(cow)
        #expect(cow.category === category)
        context.processPendingChanges()
        #expect(cow.modelContext === context)
        try context.save()
        let other = ModelContext(container)
        let categories = try other.fetch(FetchDescriptor<AnimalCategory>())
        #expect(categories.first?.animals.map(\.name) == ["Cow"])
    }

    @Test func modelsLinkedToAPendingInsertAfterItsInsertionAreSaved() throws {
        // A save walks the pending inserts for new models only when a relationship was
        // set since: here, after each insertion, from either side.
        for round in 0..<2 {
            let category = AnimalCategory(name: "Kind \(round)")
            context.insert(category)
            let cow = Animal(name: "Cow \(round)", diet: .herbivorous)
            category.animals.append(cow)
            let goat = Animal(name: "Goat \(round)", diet: .herbivorous)
            goat.category = category
            try context.save()
            #expect(cow.modelContext === context && goat.modelContext === context)
        }
        let other = ModelContext(container)
        let categories = try other.fetch(FetchDescriptor<AnimalCategory>(sortBy: [SortDescriptor(\.name)]))
        #expect(categories.map { Set($0.animals.map(\.name)) } == [["Cow 0", "Goat 0"], ["Cow 1", "Goat 1"]])
    }

    /// A pending insert linked to another context's new model leaves it there (SwiftData
    /// traps on such a link); once that context lets the model go (a rollback), a later
    /// save here inserts it, whatever walks of the pending inserts happened in between.
    @Test func aModelAnotherContextLetsGoIsSavedWithThePendingInsertHoldingIt() throws {
        let other = ModelContext(container)
        let trip = Trip(name: "A", destination: "B")
        context.insert(trip)
        let item = BucketListItem(title: "See")
        other.insert(item)
        trip.bucketList = [item]
        context.processPendingChanges()
        #expect(item.modelContext === other)
        other.rollback()
        #expect(item.modelContext == nil)
        try context.save()
        #expect(item.modelContext === context)
        #expect(try ModelContext(container).fetch(FetchDescriptor<BucketListItem>()).map(\.title) == ["See"])
    }

    @Test func saveNotificationsCarryIdentifiersAndAuthor() throws {
        context.author = "importer"
        #expect(context.author == "importer")
        let existing = Trip(name: "old", destination: "X")
        context.insert(existing)
        try context.save()
        nonisolated(unsafe) var willSave = 0
        nonisolated(unsafe) var info: [AnyHashable: Any] = [:]
        let center = NotificationCenter.default
        let will = center.addObserver(forName: ModelContext.willSave, object: context, queue: nil) { _ in willSave += 1 }
        let did = center.addObserver(forName: ModelContext.didSave, object: context, queue: nil) { info = $0.userInfo ?? [:] }
        defer {
            center.removeObserver(will)
            center.removeObserver(did)
        }
        let added = Trip(name: "new", destination: "Y")
        context.insert(added)
        existing.destination = "Z"
        try context.save()
        #expect(willSave == 1)
        let key = ModelContext.NotificationKey.self
        #expect(info[key.insertedIdentifiers.rawValue] as? [PersistentIdentifier] == [added.persistentModelID])
        #expect(info[key.updatedIdentifiers.rawValue] as? [PersistentIdentifier] == [existing.persistentModelID])
        // The saving code reads the same lists without observing.
        #expect(context.lastSavedChanges == ModelContext.SavedChanges(
            insertedIdentifiers: [added.persistentModelID], updatedIdentifiers: [existing.persistentModelID],
            deletedIdentifiers: []))
        context.delete(existing)
        let deletedID = existing.persistentModelID
        try context.save()
        #expect(info[key.deletedIdentifiers.rawValue] as? [PersistentIdentifier] == [deletedID])
        #expect(context.lastSavedChanges?.deletedIdentifiers == [deletedID])
        #expect(context.lastSavedChanges?.insertedIdentifiers == [])
        // A save with nothing to write posts nothing and leaves them.
        try context.save()
        #expect(willSave == 2)
        #expect(context.lastSavedChanges?.deletedIdentifiers == [deletedID])
        #expect(ModelContext(container).lastSavedChanges == nil)
    }

    @Test func contextsCompareByIdentity() {
        let other = ModelContext(container)
        #expect(context == context)
        #expect(context != other)
        #expect(context.container === container)
    }
}
