import Foundation
import SwiftData
import Testing

/// Point 4: identifiers and model identity.
@Suite struct IdentityTests {
    let container: ModelContainer

    init() throws {
        container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    }

    @Test func identifierIsTemporaryUntilSaved() throws {
        let context = ModelContext(container)
        let trip = Trip(name: "A", destination: "B")
        context.insert(trip)
        let temporary = trip.persistentModelID
        #expect(temporary.entityName == "Trip")
        #expect(temporary.description.contains("/t"))
        try context.save()
        let permanent = trip.persistentModelID
        #expect(permanent != temporary)
        #expect(permanent.description.contains("/p"))
        #expect(permanent.storeIdentifier != nil)
        #expect(trip.id == permanent)
    }

    @Test func identifiersAreCodableComparableAndHashable() throws {
        let context = ModelContext(container)
        let a = Trip(name: "A", destination: "X"), b = Trip(name: "B", destination: "X")
        context.insert(a)
        context.insert(b)
        try context.save()
        let data = try JSONEncoder().encode([a.persistentModelID, b.persistentModelID])
        let decoded = try JSONDecoder().decode([PersistentIdentifier].self, from: data)
        #expect(decoded == [a.persistentModelID, b.persistentModelID])
        #expect(a.persistentModelID < b.persistentModelID)
        #expect(Set(decoded).count == 2)
        #expect(ModelContext(container).model(for: decoded[1]) is Trip)
        // A decoded identifier (its own store and entity strings) finds the registered model.
        let registered: Trip? = context.registeredModel(for: decoded[0])
        #expect(registered === a)
        #expect(Set([a.persistentModelID]).contains(decoded[0]))
        // The same row key of another container's store is another identifier.
        let other = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let elsewhere = ModelContext(other)
        let c = Trip(name: "A", destination: "X")
        elsewhere.insert(c)
        try elsewhere.save()
        #expect(c.persistentModelID != a.persistentModelID)
        #expect(c.persistentModelID.hashValue == a.persistentModelID.hashValue)
    }

    /// Hashable's law (equal identifiers hash equally) for the hash sets and
    /// dictionaries use, across identifiers decoded with scopes of their own; and a
    /// thousand identifiers stay distinct in a set.
    @Test func equalIdentifiersHashEquallyInSetsAndDictionaries() throws {
        let context = ModelContext(container)
        let trips = (0..<1_000).map { Trip(name: "t\($0)", destination: "X") }
        for trip in trips { context.insert(trip) }
        try context.save()
        let ids = trips.map(\.persistentModelID)
        let decoded = try JSONDecoder().decode([PersistentIdentifier].self, from: JSONEncoder().encode(ids))
        let set = Set(ids)
        #expect(set.count == 1_000)
        #expect(decoded.allSatisfy { set.contains($0) })
        var byID: [PersistentIdentifier: Int] = [:]
        for (i, id) in ids.enumerated() { byID[id] = i }
        let found: [Int?] = decoded.map { byID[$0] }
        #expect(found == Array(0..<1_000))
        for (id, copy) in zip(ids, decoded) {
            #expect(id.hashValue == copy.hashValue)
            var a = Hasher(), b = Hasher()
            a.combine(id)
            b.combine(copy)
            #expect(a.finalize() == b.finalize())
        }
    }

    @Test func oneObjectPerRowPerContext() throws {
        let writer = ModelContext(container)
        writer.insert(Trip(name: "A", destination: "B"))
        try writer.save()
        let reader = ModelContext(container)
        let first = try reader.fetch(FetchDescriptor<Trip>())
        let second = try reader.fetch(FetchDescriptor<Trip>())
        #expect(first[0] === second[0])
        #expect(reader.model(for: first[0].persistentModelID) === first[0])
        let registered: Trip? = reader.registeredModel(for: first[0].persistentModelID)
        #expect(registered === first[0])
        // Another context has its own instance.
        let elsewhere = try ModelContext(container).fetch(FetchDescriptor<Trip>())
        #expect(elsewhere[0] !== first[0])
        #expect(elsewhere[0].persistentModelID == first[0].persistentModelID)
    }

    @Test func modelKnowsItsContextChangesAndDeletion() throws {
        let context = ModelContext(container)
        let trip = Trip(name: "A", destination: "B")
        #expect(trip.modelContext == nil)
        #expect(!trip.hasChanges)
        context.insert(trip)
        #expect(trip.modelContext === context)
        #expect(trip.hasChanges)
        try context.save()
        #expect(!trip.hasChanges)
        trip.destination = "C"
        #expect(trip.hasChanges)
        try context.save()
        #expect(!trip.isDeleted)
        context.delete(trip)
        #expect(trip.isDeleted)
        try context.save()
        #expect(trip.isDeleted)
        #expect(trip.modelContext == nil)
    }
}
