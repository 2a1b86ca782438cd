import Foundation
import SwiftData
import Testing

/// The concurrency contract (#45 point 4), the same on every store: by default a
/// save merges property by property (the last writer wins each property it
/// changed, a delete wins over a change); under `ConflictPolicy.failOnConflict` a
/// save of a model another writer saved or deleted since it was read throws
/// `SaveConflictError` and writes nothing. Two contexts of one container stand for
/// two writers (a document has one writable container; PostgreSQL's processes are
/// `PostgresStoreTests`' business).
@Suite struct ConcurrencyContractTests {
    private func voyage(_ code: String, price: Double = 10, seats: Int = 2) -> Voyage {
        Voyage(code: code, destination: "Lisbon", startDate: StoreConformanceTests.start, price: price, seats: seats)
    }

    private func only(_ context: ModelContext) throws -> Voyage {
        try #require(try context.fetch(FetchDescriptor<Voyage>()).first)
    }

    /// A container with one saved voyage, and two contexts that have both read it
    /// (and hold the models they read, as an app's views do).
    private func twoReaders(
        _ location: StoreLocation
    ) throws -> (container: ModelContainer, a: ModelContext, mine: Voyage, b: ModelContext, theirs: Voyage) {
        let container = try location.container(Voyage.self, Leg.self, Traveller.self)
        let seed = ModelContext(container)
        seed.insert(voyage("SHARED"))
        try seed.save()
        let a = ModelContext(container), b = ModelContext(container)
        return (container, a, try only(a), b, try only(b))
    }

    @Test(arguments: StoreKind.available)
    func savesMergePropertyByPropertyByDefault(_ kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let (container, a, mine, b, theirs) = try twoReaders(location)
        #expect(a.conflictPolicy == .mergeByProperty)
        mine.price = 11
        theirs.seats = 9
        try a.save()
        // B read the old price, but did not change it: A's price stays, and B's model
        // shows it after its save.
        try b.save()
        #expect(theirs.price == 11)
        var check = try only(ModelContext(container))
        #expect(check.price == 11)
        #expect(check.seats == 9)
        // A property both change: the last save wins.
        mine.destination = "Porto"
        theirs.destination = "Faro"
        try b.save()
        try a.save()
        check = try only(ModelContext(container))
        #expect(check.destination == "Porto")
        #expect(check.price == 11 && check.seats == 9)
    }

    /// To-many relationships merge by what each context added and removed (as Core
    /// Data's merge by property does), so two writers adding children to one parent
    /// both land, and both sides of the relationship agree.
    @Test(arguments: StoreKind.available)
    func toManyRelationshipsMergeByTheirChanges(_ kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let (container, a, mine, b, theirs) = try twoReaders(location)
        let ana = Traveller(name: "Ana"), rui = Traveller(name: "Rui")
        a.insert(ana)
        b.insert(rui)
        try a.save()
        try b.save()
        let first = Leg(title: "Alfama", order: 0), second = Leg(title: "Belém", order: 1)
        a.insert(first)
        first.voyage = mine
        mine.travellers.append(ana)
        b.insert(second)
        second.voyage = theirs
        theirs.travellers.append(rui)
        try a.save()
        try b.save()
        let reader = ModelContext(container)
        let stored = try only(reader)
        #expect(Set(stored.legs.map(\.title)) == ["Alfama", "Belém"])
        #expect(Set(stored.travellers.map(\.name)) == ["Ana", "Rui"])
        let legs = try reader.fetch(FetchDescriptor<Leg>())
        #expect(legs.allSatisfy { $0.voyage?.code == "SHARED" })
        let travellers = try reader.fetch(FetchDescriptor<Traveller>())
        #expect(travellers.allSatisfy { $0.voyages.map(\.code) == ["SHARED"] })
        // A removal merges the same way: A drops Ana while B adds a leg.
        mine.travellers.removeAll { $0.name == "Ana" }
        let third = Leg(title: "Graça", order: 2)
        b.insert(third)
        third.voyage = theirs
        try a.save()
        try b.save()
        let check = ModelContext(container)
        let final = try only(check)
        #expect(Set(final.travellers.map(\.name)) == ["Rui"])
        #expect(Set(final.legs.map(\.title)) == ["Alfama", "Belém", "Graça"])
        #expect(try check.fetch(FetchDescriptor<Traveller>()).first { $0.name == "Ana" }?.voyages.isEmpty == true)
    }

    /// A NaN is the value it was read as (where `==` never equals it), and a list's
    /// new order is a change like any other.
    @Test(arguments: StoreKind.available)
    func failOnConflictTakesANaNAsReadAndKeepsAReorder(_ kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let (container, a, mine, _, _) = try twoReaders(location)
        a.conflictPolicy = .failOnConflict
        mine.price = .nan
        try a.save()
        mine.seats = 4
        try a.save()
        let first = Leg(title: "Alfama", order: 0), second = Leg(title: "Belém", order: 1)
        mine.legs = [first, second]
        try a.save()
        mine.legs = [second, first]
        try a.save()
        let reader = ModelContext(container)
        let stored = try only(reader)
        #expect(stored.price.isNaN && stored.seats == 4)
        #expect(stored.legs.map(\.title) == ["Belém", "Alfama"])
    }

    @Test(arguments: StoreKind.available)
    func aChangeToAModelAnotherWriterDeletedIsDroppedByDefault(_ kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let (container, a, mine, b, theirs) = try twoReaders(location)
        b.delete(theirs)
        try b.save()
        mine.price = 99
        // The delete wins; the save succeeds and writes nothing back.
        try a.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Voyage>()) == 0)
    }

    @Test(arguments: StoreKind.available)
    func failOnConflictRefusesAStaleChangeAndWritesNothing(_ kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let (container, a, mine, b, theirs) = try twoReaders(location)
        b.conflictPolicy = .failOnConflict
        mine.price = 11
        try a.save()
        theirs.seats = 9
        // A model B did not read before is not a conflict; it is not written either.
        b.insert(voyage("OTHER"))
        do {
            try b.save()
            Issue.record("a save of a model changed since it was read went through")
        } catch let conflict as SaveConflictError {
            #expect(conflict.changed == [mine.persistentModelID])
            #expect(conflict.deleted.isEmpty)
        }
        #expect(b.hasChanges)
        let check = ModelContext(container)
        #expect(try check.fetchCount(FetchDescriptor<Voyage>()) == 1)
        #expect(try only(check).seats == 2)
        // Read again, repeat the change: both changes stand.
        b.rollback()
        let again = try only(b)
        #expect(again.price == 11)
        again.seats = 9
        try b.save()
        let final = try only(ModelContext(container))
        #expect(final.price == 11 && final.seats == 9)
    }

    @Test(arguments: StoreKind.available)
    func failOnConflictCountsRelationshipsAndDeletions(_ kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let (container, a, mine, b, theirs) = try twoReaders(location)
        a.conflictPolicy = .failOnConflict
        // B gives the voyage a leg: the voyage is saved anew.
        let leg = Leg(title: "Alfama", order: 0)
        b.insert(leg)
        leg.voyage = theirs
        try b.save()
        mine.price = 12
        #expect(throws: SaveConflictError.self) { try a.save() }
        // A fetch keeps the unsaved change (and the reading it was made on).
        #expect(try only(a).price == 12)
        #expect(throws: SaveConflictError.self) { try a.save() }
        a.rollback()
        try only(a).price = 12
        try a.save()
        // (The reading context lives while the relationship is read.)
        let reader = ModelContext(container)
        #expect(try only(reader).legs.count == 1)
        #expect(try only(reader).price == 12)
        // B deletes it; A's change is refused, naming the deleted model.
        let id = mine.persistentModelID
        mine.price = 13
        b.delete(theirs)
        try b.save()
        do {
            try a.save()
            Issue.record("a change to a deleted model went through under failOnConflict")
        } catch let conflict as SaveConflictError {
            #expect(conflict.deleted == [id])
            #expect(conflict.changed.isEmpty)
        }
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Voyage>()) == 0)
    }

    @Test(arguments: StoreKind.available)
    func failOnConflictRefusesADeleteOfAChangedModelButNotOfADeletedOne(_ kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let (container, a, mine, b, theirs) = try twoReaders(location)
        a.conflictPolicy = .failOnConflict
        theirs.price = 20
        try b.save()
        a.delete(mine)
        #expect(throws: SaveConflictError.self) { try a.save() }
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Voyage>()) == 1)
        a.rollback()
        // Read again: now the delete goes. Deleting what another writer deleted is no conflict.
        let c = ModelContext(container)
        c.conflictPolicy = .failOnConflict
        let alsoRead = try only(c)
        a.delete(try only(a))
        try a.save()
        c.delete(alsoRead)
        try c.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Voyage>()) == 0)
    }

    /// The issue's race: two writers each do fetch, increment, save 200 times, their
    /// reads and saves interleaved. Merged by property, the counter loses half the
    /// increments (each save writes what its writer read plus one: the documented
    /// default); with `failOnConflict` and a retry on conflict, none.
    @Test(arguments: StoreKind.available)
    func interleavedIncrementsLoseNothingUnderFailOnConflict(_ kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let container = try location.container(Voyage.self, Leg.self, Traveller.self)
        let seed = ModelContext(container)
        seed.insert(voyage("COUNTER", seats: 0))
        try seed.save()
        func run(_ policy: ModelContext.ConflictPolicy) throws -> (seats: Int, conflicts: Int) {
            let writers = [ModelContext(container), ModelContext(container)]
            var conflicts = 0
            for _ in 0..<200 {
                // Both read, then both write what they read plus one.
                let read = try writers.map { writer -> Voyage in
                    writer.conflictPolicy = policy
                    return try only(writer)
                }
                for model in read { model.seats += 1 }
                for writer in writers {
                    while true {
                        do {
                            try writer.save()
                            break
                        } catch is SaveConflictError {
                            conflicts += 1
                            writer.rollback()
                            try only(writer).seats += 1
                        }
                    }
                }
            }
            return (try only(ModelContext(container)).seats, conflicts)
        }
        let merged = try run(.mergeByProperty)
        #expect(merged == (200, 0))
        let strict = try run(.failOnConflict)
        #expect(strict.seats == 200 + 400)
        #expect(strict.conflicts == 200)
    }
}
