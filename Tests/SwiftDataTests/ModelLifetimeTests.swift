import Foundation
import GraphModelTesting
import SwiftData
import Testing

/// A context retains the models it still has to save and no others: saved, unchanged
/// models live as long as the app (or a related model) holds them, as in Core Data.
@Suite struct ModelLifetimeTests {
    let container: ModelContainer

    init() throws {
        container = try ModelContainer(
            for: Trip.self, BucketListItem.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    }

    /// Inserts trips named `names` and saves, holding none of them.
    private func seed(_ names: [String]) throws {
        let context = ModelContext(container)
        for name in names { context.insert(Trip(name: name, destination: "D")) }
        try context.save()
    }

    private func fetchTrip(_ name: String, in context: ModelContext) throws -> Trip? {
        try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == name })).first
    }

    @Test func aSavedModelTheAppDropsEndsAndReadsBackAsANewObject() throws {
        let context = ModelContext(container)
        weak var dropped: Trip?
        do {
            let trip = Trip(name: "A", destination: "Rome")
            dropped = trip
            context.insert(trip)
            try context.save()
        }
        #expect(dropped == nil)
        let again = try #require(try fetchTrip("A", in: context))
        #expect(again.destination == "Rome")
        #expect(again.persistentModelID.storeIdentifier != nil)
    }

    @Test func insertedModelsTheAppDoesNotHoldAreSaved() throws {
        let context = ModelContext(container)
        weak var pending: Trip?
        do {
            let trip = Trip(name: "B", destination: "Oslo")
            pending = trip
            context.insert(trip)
        }
        #expect(pending != nil, "an unsaved insert stays until the save")
        #expect(context.insertedModelsArray.count == 1)
        try context.save()
        #expect(pending == nil)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 1)
    }

    @Test func aChangedModelStaysUntilItsChangeIsSaved() throws {
        try seed(["C"])
        let context = ModelContext(container)
        weak var changed: Trip?
        do {
            let trip = try #require(try fetchTrip("C", in: context))
            changed = trip
            trip.destination = "Lima"
        }
        #expect(changed != nil)
        #expect(context.changedModelsArray.count == 1)
        try context.save()
        #expect(changed == nil)
        #expect(try fetchTrip("C", in: ModelContext(container))?.destination == "Lima")
    }

    @Test func aDeletedModelStaysUntilTheSave() throws {
        try seed(["D1", "D2"])
        let context = ModelContext(container)
        weak var doomed: Trip?
        do {
            let trip = try #require(try fetchTrip("D1", in: context))
            doomed = trip
            context.delete(trip)
        }
        #expect(doomed != nil)
        #expect(context.deletedModelsArray.count == 1)
        try context.save()
        #expect(doomed == nil)
        let names = try ModelContext(container).fetch(FetchDescriptor<Trip>()).map(\.name)
        #expect(names == ["D2"])
    }

    @Test func rollbackReleasesWhatItRestores() throws {
        try seed(["E"])
        let context = ModelContext(container)
        weak var restored: Trip?
        do {
            let trip = try #require(try fetchTrip("E", in: context))
            restored = trip
            trip.destination = "Changed"
        }
        #expect(restored != nil)
        context.rollback()
        #expect(restored == nil)
        #expect(try fetchTrip("E", in: context)?.destination == "D")
    }

    @Test func aHeldModelIsTheOneEveryFetchReturns() throws {
        try seed(["F"])
        let context = ModelContext(container)
        let held = try #require(try fetchTrip("F", in: context))
        for _ in 0..<3 {
            let fetched = try #require(try fetchTrip("F", in: context))
            #expect(fetched === held)
        }
        let registered: Trip? = context.registeredModel(for: held.persistentModelID)
        #expect(registered === held)
    }

    @Test func relatedModelsLiveAsLongAsTheModelThatResolvedThem() throws {
        let writer = ModelContext(container)
        let trip = Trip(name: "G", destination: "D")
        trip.bucketList = [BucketListItem(title: "one"), BucketListItem(title: "two")]
        writer.insert(trip)
        try writer.save()

        let context = ModelContext(container)
        weak var item: BucketListItem?
        var parent = try #require(try fetchTrip("G", in: context))
        item = parent.bucketList.first
        #expect(item != nil)
        #expect(parent.bucketList.first === item)
        parent = Trip(name: "unrelated", destination: "-")
        #expect(item == nil)
        let reread = try #require(try fetchTrip("G", in: context))
        #expect(Set(reread.bucketList.map(\.title)) == ["one", "two"])
    }

    @Test func aGraphResolvedBothWaysEndsWithItsContext() throws {
        weak var trip: Trip?
        weak var item: BucketListItem?
        do {
            let context = ModelContext(container)
            let newTrip = Trip(name: "cycle", destination: "D")
            newTrip.bucketList = [BucketListItem(title: "one")]
            context.insert(newTrip)
            try context.save()
            trip = newTrip
            item = newTrip.bucketList.first
            #expect(item?.trip === newTrip)

            let reader = ModelContext(container)
            let read = try #require(try fetchTrip("cycle", in: reader))
            #expect(read.bucketList.first?.trip === read)
        }
        #expect(trip == nil)
        #expect(item == nil)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<BucketListItem>()) == 1)
    }

    /// Models fetched, held, let go and fetched again at random, over many rounds: a
    /// held model is the object every fetch of its row returns, and one let go ends
    /// (its registry entry goes with it, which a later fetch of its row must not find).
    @Test func modelsComingAndGoingKeepOneObjectPerRow() throws {
        let names = (0..<2_000).map { "t\($0)" }
        try seed(names)
        let context = ModelContext(container)
        var generator = SystemRandomNumberGenerator()
        var held: [String: Trip] = [:]
        var ended = 0
        for _ in 0..<40 {
            do {
                let low = "t\(Int.random(in: 0..<2_000, using: &generator))"
                let fetched = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name >= low }, sortBy: [SortDescriptor(\.name)]))
                for trip in fetched.prefix(300) {
                    if let kept = held[trip.name] {
                        #expect(kept === trip, "a held model is the one object of its row")
                    } else if Bool.random(using: &generator) {
                        held[trip.name] = trip
                    }
                }
            }
            // Let about half of what is held go.
            // (Names first: iterating `held.keys` would keep its models alive.)
            let dropping = held.keys.filter { _ in Bool.random(using: &generator) }
            for name in dropping {
                weak let gone = held[name]
                held[name] = nil
                if gone == nil { ended += 1 }
            }
        }
        #expect(ended > 0)
        for (name, trip) in held {
            #expect(try fetchTrip(name, in: context) === trip)
        }
    }

    /// Many models coming and going, some looked up by identifiers decoded elsewhere
    /// (a scope of their own): the context finds each held model and no ended one.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func registeredModelsFollowModelsThatComeAndGo(round: UInt64) throws {
        func decoded(_ id: PersistentIdentifier) throws -> PersistentIdentifier {
            try JSONDecoder().decode(PersistentIdentifier.self, from: JSONEncoder().encode(id))
        }
        try seed((0..<3_000).map { String(format: "r%04d", $0) })
        let context = ModelContext(container)
        var generator = QSplitMix64(seed: round)
        var held: [PersistentIdentifier: Trip] = [:]
        var ended: Set<PersistentIdentifier> = []
        for _ in 0..<25 {
            do {
                let low = String(format: "r%04d", Int.random(in: 0..<3_000, using: &generator))
                var descriptor = FetchDescriptor<Trip>(predicate: #Predicate { $0.name >= low }, sortBy: [SortDescriptor(\.name)])
                descriptor.fetchLimit = 400
                for trip in try context.fetch(descriptor) {
                    ended.remove(trip.persistentModelID)
                    if let kept = held[trip.persistentModelID] {
                        #expect(kept === trip, "a held model is the one object of its row")
                    } else if Int.random(in: 0..<3, using: &generator) == 0 {
                        held[trip.persistentModelID] = trip
                    }
                }
                // Some made by identifier, decoded or not.
                for _ in 0..<20 {
                    let name = String(format: "r%04d", Int.random(in: 0..<3_000, using: &generator))
                    let id = try #require(try fetchTrip(name, in: ModelContext(container))?.persistentModelID)
                    let lookedUp = Bool.random(using: &generator) ? try decoded(id) : id
                    let trip = try #require(context.model(for: lookedUp) as? Trip)
                    #expect(trip.name == name)
                    if let kept = held[id] { #expect(kept === trip) } else { held[id] = trip }
                    ended.remove(id)
                }
            }
            let dropping = held.keys.filter { _ in Bool.random(using: &generator) }
            for id in dropping {
                weak let gone = held[id]
                held[id] = nil
                if gone == nil { ended.insert(id) }
            }
            for (id, trip) in held {
                #expect(context.registeredModel(for: id) as Trip? === trip)
                #expect(context.registeredModel(for: try decoded(id)) as Trip? === trip)
            }
            for id in ended { #expect(context.registeredModel(for: id) as Trip? == nil) }
        }
        #expect(!ended.isEmpty)
    }

    @Test func aModelRegisteredAgainAfterItEndedIsStillUnique() throws {
        try seed(["H"])
        let context = ModelContext(container)
        var first: Trip? = try fetchTrip("H", in: context)
        let id = try #require(first?.persistentModelID)
        first = nil
        let second = try #require(context.model(for: id) as? Trip)
        let third = try #require(try fetchTrip("H", in: context))
        #expect(second === third)
        third.price = 5
        try context.save()
        #expect(try fetchTrip("H", in: ModelContext(container))?.price == 5)
    }

    @Test func enumerateKeepsNoUnchangedModel() throws {
        try seed((0..<20).map { String(format: "n%02d", $0) })
        let context = ModelContext(container)
        var visited: [() -> Bool] = []
        try context.enumerate(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]), batchSize: 5) { trip in
            weak let probe = trip
            visited.append { probe != nil }
            if trip.name == "n07" { trip.isFavorite = true }
        }
        let alive = visited.map { $0() }
        #expect(alive.count == 20)
        #expect(alive.enumerated().filter(\.element).map(\.offset) == [7])
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { $0.isFavorite })) == 1)
    }

    /// A large save (bulk-indexed, its inserts handed from the retained table to the
    /// unretained one) beside changes and a delete: held inserts keep their identity
    /// under permanent identifiers, unheld ones end, the changed and deleted models are
    /// saved, and nothing is left pending.
    @Test func aLargeSaveWithChangesKeepsIdentityAndLetsUnheldModelsGo() throws {
        try seed(["keep", "change", "gone"])
        let context = ModelContext(container)
        let changed = try #require(try fetchTrip("change", in: context))
        let doomed = try #require(try fetchTrip("gone", in: context))
        changed.destination = "Kyiv"
        context.delete(doomed)
        var held: [Trip] = []
        weak var unheld: Trip?
        do {
            for i in 0..<1_500 {
                let trip = Trip(name: "t\(i)", destination: "D\(i % 7)")
                context.insert(trip)
                if i % 100 == 0 { held.append(trip) } else if i == 1 { unheld = trip }
            }
        }
        try context.save()
        #expect(!context.hasChanges)
        #expect(unheld == nil, "a saved insert nobody holds ends")
        for trip in held {
            #expect(!trip.persistentModelID.isTemporary)
            #expect(try fetchTrip(trip.name, in: context) === trip)
            #expect(context.model(for: trip.persistentModelID) === trip)
        }
        #expect(try fetchTrip("change", in: context) === changed)
        let fresh = ModelContext(container)
        #expect(try fresh.fetchCount(FetchDescriptor<Trip>()) == 1_502)
        #expect(try fetchTrip("change", in: fresh)?.destination == "Kyiv")
        #expect(try fetchTrip("gone", in: fresh) == nil)
        #expect(try fresh.fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { $0.destination == "D3" })) == 214)
    }

    /// Pending inserts are kept in insertion order apart from saved models: deleting
    /// some of them, inserting one again and inserting more keeps every list, look-up
    /// and the save in that order, and the ones the app let go end with the save.
    @Test func pendingInsertsKeepTheirOrderThroughDeletesAndReinserts() throws {
        let context = ModelContext(container)
        var held: [Trip] = []
        for i in 0..<300 {
            let trip = Trip(name: "p\(i)", destination: "D")
            context.insert(trip)
            if i % 3 == 0 { held.append(trip) }
        }
        // Deleting a pending insert forgets it at once; inserting it again puts it last.
        let removed = held.filter { Int($0.name.dropFirst())! % 2 == 0 }
        for trip in removed { context.delete(trip) }
        #expect(context.insertedModelsArray.count == 250)
        for trip in removed { #expect(context.registeredModel(for: trip.persistentModelID) as Trip? == nil) }
        let back = removed[0]
        context.insert(back)
        context.insert(Trip(name: "last", destination: "D"))
        let expected = (0..<300).filter { !($0 % 6 == 0) }.map { "p\($0)" } + [back.name, "last"]
        #expect(context.insertedModelsArray.compactMap { ($0 as? Trip)?.name } == expected)
        // A held pending insert is the registered object under its temporary identifier.
        let kept = try #require(held.first { $0.name == "p3" })
        #expect(context.registeredModel(for: kept.persistentModelID) as Trip? === kept)
        #expect(try context.fetch(FetchDescriptor<Trip>()).map(\.name) == expected)

        weak var dropped: Trip?
        dropped = context.insertedModelsArray.compactMap { $0 as? Trip }.first { $0.name == "p1" }
        try context.save()
        #expect(dropped == nil, "an insert nothing else holds ends with the save")
        #expect(context.insertedModelsArray.isEmpty)
        #expect(!kept.persistentModelID.isTemporary)
        #expect(context.registeredModel(for: kept.persistentModelID) as Trip? === kept)
        let fresh = ModelContext(container)
        #expect(try fresh.fetch(FetchDescriptor<Trip>()).map(\.name) == expected)
    }

    /// A context that ends with unsaved inserts lets them go with it.
    @Test func aContextEndingWithPendingInsertsLetsThemGo() throws {
        weak var pending: Trip?
        weak var endedContext: ModelContext?
        do {
            let context = ModelContext(container)
            endedContext = context
            let trip = Trip(name: "never saved", destination: "D")
            pending = trip
            context.insert(trip)
            #expect(trip.modelContext === context)
        }
        #expect(endedContext == nil)
        #expect(pending == nil)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 0)
    }

    /// Deleting and inserting drafts again and again between saves keeps the pending
    /// inserts in order (the registry compacts the slots deletes leave).
    /// Identifiers decoded elsewhere carry their own copy of the entity and store names;
    /// the registry's tables (which hold the names of a container's identifiers without
    /// retaining them) still find models by them: saved, changed and pending ones.
    @Test func identifiersDecodedElsewhereFindTheRegisteredModels() throws {
        func decoded(_ id: PersistentIdentifier) throws -> PersistentIdentifier {
            try JSONDecoder().decode(PersistentIdentifier.self, from: JSONEncoder().encode(id))
        }
        try seed(["kept", "changed"])
        let context = ModelContext(container)
        let kept = try #require(try fetchTrip("kept", in: context))
        let changed = try #require(try fetchTrip("changed", in: context))
        changed.destination = "Elsewhere"
        let pending = Trip(name: "pending", destination: "D")
        context.insert(pending)
        for trip in [kept, changed, pending] {
            #expect(context.model(for: try decoded(trip.persistentModelID)) as? Trip === trip)
            #expect(context.registeredModel(for: try decoded(trip.persistentModelID)) as Trip? === trip)
        }
        try context.save()
        for trip in [kept, changed, pending] {
            #expect(context.registeredModel(for: try decoded(trip.persistentModelID)) as Trip? === trip)
        }
    }

    @Test func pendingInsertsAreFoundByIdentifierAsMoreArrive() throws {
        let context = ModelContext(container)
        var trips: [Trip] = []
        for i in 0..<200 {
            let trip = Trip(name: "t\(i)", destination: "D")
            context.insert(trip)
            trips.append(trip)
            // Look-ups by identifier between inserts, of the newest and of the first.
            if i % 50 == 0 {
                #expect(context.registeredModel(for: trip.persistentModelID) as Trip? === trip)
                #expect(context.registeredModel(for: trips[0].persistentModelID) as Trip? === trips[0])
            }
            // A change to a pending insert is part of the insert, not a change of its own.
            trip.destination = "E"
        }
        for trip in trips { #expect(context.registeredModel(for: trip.persistentModelID) as Trip? === trip) }
        #expect(context.changedModelsArray.isEmpty)
        #expect(context.insertedModelsArray.count == 200)
        try context.save()
        let stored = try ModelContext(container).fetch(FetchDescriptor<Trip>())
        #expect(stored.count == 200)
        #expect(stored.allSatisfy { $0.destination == "E" })
    }

    @Test func insertAndDeleteChurnBetweenSavesKeepsOrder() throws {
        let context = ModelContext(container)
        let drafts = (0..<100).map { Trip(name: "d\($0)", destination: "D") }
        for draft in drafts { context.insert(draft) }
        var expected = drafts.map(\.name)
        for round in 0..<20 {
            // Delete every other draft still pending, then insert them again at the end.
            let moved = drafts.filter { Int($0.name.dropFirst())! % 2 == round % 2 }
            for draft in moved { context.delete(draft) }
            for draft in moved { context.insert(draft) }
            expected = expected.filter { name in !moved.contains { $0.name == name } } + moved.map(\.name)
        }
        #expect(context.insertedModelsArray.compactMap { ($0 as? Trip)?.name } == expected)
        for draft in drafts { #expect(context.registeredModel(for: draft.persistentModelID) as Trip? === draft) }
        try context.save()
        #expect(try ModelContext(container).fetch(FetchDescriptor<Trip>()).map(\.name) == expected)
    }

    /// A model the app keeps after its context ended reads no context (the context's
    /// link to its models is cleared as it ends), reads its values, and can join
    /// another context.
    @Test func aModelThatOutlivesItsContextReadsNoContext() throws {
        try seed(["kept"])
        var kept: Trip?
        weak var endedContext: ModelContext?
        do {
            let context = ModelContext(container)
            endedContext = context
            kept = try fetchTrip("kept", in: context)
            #expect(kept?.modelContext === context)
        }
        #expect(endedContext == nil)
        let trip = try #require(kept)
        #expect(trip.modelContext == nil)
        #expect(trip.destination == "D")
        #expect(!trip.hasChanges)
    }
}

