import Foundation
import SwiftData
import Testing

/// Models whose values are read on first use: what a fetch hands out when it needs no
/// values itself, and what a save leaves behind.
@Suite struct FaultTests {
    private func makeContainer() throws -> ModelContainer {
        try ModelContainer(for: Trip.self, BucketListItem.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    }

    private func seed(_ container: ModelContainer, count: Int) throws {
        let context = ModelContext(container)
        for i in 0..<count { context.insert(Trip(name: "trip \(i)", destination: i % 2 == 0 ? "Lisbon" : "Porto")) }
        try context.save()
    }

    /// A fetched model reads the values of the version its fetch ran on, even when
    /// another context changed or deleted the row before the first read.
    @Test func aFaultReadsTheVersionItWasFetchedIn() throws {
        let container = try makeContainer()
        try seed(container, count: 3)
        let reader = ModelContext(container)
        let trips = try reader.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.destination == "Lisbon" }))
        #expect(trips.count == 2)

        let writer = ModelContext(container)
        for trip in try writer.fetch(FetchDescriptor<Trip>()) {
            if trip.name == "trip 0" { writer.delete(trip) } else { trip.destination = "Faro" }
        }
        try writer.save()

        // Nothing was read before the writer saved: the values are the fetch's.
        #expect(trips.map(\.name) == ["trip 0", "trip 2"])
        #expect(trips.map(\.destination) == ["Lisbon", "Lisbon"])
        #expect(trips.allSatisfy { !$0.isDeleted })
        // A new fetch brings the same instances up to date.
        let again = try reader.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]))
        #expect(again.map(\.name) == ["trip 1", "trip 2"])
        #expect(again[1] === trips[1])
        #expect(trips[1].destination == "Faro")
    }

    /// A saved model is read back from the row its commit published: an upsert's
    /// merged relationships show, and its values stay what was saved.
    @Test func savedModelsReadTheCommittedRow() throws {
        let container = try makeContainer()
        let context = ModelContext(container)
        let trip = Trip(name: "Rome", destination: "Italy")
        let item = BucketListItem(title: "Colosseum")
        trip.bucketList = [item]
        context.insert(trip)
        try context.save()
        #expect(trip.destination == "Italy")
        #expect(trip.bucketList.map(\.title) == ["Colosseum"])
        #expect(item.trip === trip)

        // An upsert onto "Rome" that leaves the bucket list empty keeps the stored one.
        let other = ModelContext(container)
        let replacement = Trip(name: "Rome", destination: "Lazio")
        other.insert(replacement)
        try other.save()
        #expect(replacement.destination == "Lazio")
        #expect(replacement.bucketList.map(\.title) == ["Colosseum"])
        #expect(replacement.persistentModelID == trip.persistentModelID)

        // Changing a saved model and saving again reads back the change.
        replacement.isFavorite = true
        try other.save()
        #expect(replacement.isFavorite)
        #expect(!other.hasChanges)
        #expect(try ModelContext(container).fetch(FetchDescriptor<Trip>()).map(\.isFavorite) == [true])
    }

    /// Counting and fetching through the column kernels agree with the models' values,
    /// with unsaved changes and deletes taken into account.
    @Test func scansSeeUnsavedChanges() throws {
        let container = try makeContainer()
        try seed(container, count: 10)
        let context = ModelContext(container)
        let lisbon = #Predicate<Trip> { $0.destination == "Lisbon" }
        #expect(try context.fetchCount(FetchDescriptor(predicate: lisbon)) == 5)
        let trips = try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]))
        trips[1].destination = "Lisbon"  // trip 1: Porto → Lisbon
        context.delete(trips[0])         // trip 0 was in Lisbon
        #expect(try context.fetchCount(FetchDescriptor(predicate: lisbon)) == 5)
        #expect(Set(try context.fetch(FetchDescriptor(predicate: lisbon)).map(\.name))
            == ["trip 1", "trip 2", "trip 4", "trip 6", "trip 8"])
    }
}

@Model final class Playlist {
    var title: String
    @Relationship(inverse: \Song.playlist) var songs: [Song]? = []
    var highlight: Song?
    init(title: String) { self.title = title }
}

@Model final class Song {
    var name: String
    var playlist: Playlist?
    init(name: String) { self.name = name }
}

/// Relationship values of every shape are read without casting the whole value:
/// optional and non-optional to-many, optional to-one, nil and empty.
@Suite struct RelationshipShapeTests {
    @Test func optionalToManyAndToOneRoundTrip() throws {
        let container = try ModelContainer(for: Playlist.self, Song.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let list = Playlist(title: "Mix")
        let a = Song(name: "A"), b = Song(name: "B")
        list.songs = [a, b]
        list.highlight = b
        context.insert(list)
        try context.save()
        #expect(list.songs?.map(\.name).sorted() == ["A", "B"])
        #expect(a.playlist === list)
        #expect(list.highlight === b)
        list.songs = nil
        list.highlight = nil
        try context.save()
        let reread = try #require(try ModelContext(container).fetch(FetchDescriptor<Playlist>()).first)
        #expect(reread.songs?.isEmpty ?? true)
        #expect(reread.highlight == nil)
        #expect(try ModelContext(container).fetch(FetchDescriptor<Song>()).allSatisfy { $0.playlist == nil })
    }
}

/// Writes that `==` would call unchanged but are not: they must reach the store.
@Suite struct IdenticalWriteTests {
    @Test func negativeZeroAndOtherUnicodeFormsAreWritten() throws {
        let container = try ModelContainer(for: Trip.self, BucketListItem.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let trip = Trip(name: "caf\u{E9}", destination: "Nice")
        context.insert(trip)
        try context.save()
        trip.price = -0.0
        trip.destination = "Nic" + "e"
        trip.name = "cafe\u{301}"
        try context.save()
        let reread = try #require(try ModelContext(container).fetch(FetchDescriptor<Trip>()).first)
        #expect(reread.price.sign == .minus)
        #expect(Array(reread.name.unicodeScalars) == Array("cafe\u{301}".unicodeScalars))
    }

    /// A change saved after another context deleted the row is dropped (the delete
    /// wins); the model keeps its values rather than reading the gone row as empty.
    @Test func aChangedModelWhoseRowWasDeletedKeepsItsValues() throws {
        let container = try ModelContainer(for: Trip.self, BucketListItem.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let first = ModelContext(container)
        first.insert(Trip(name: "Oslo", destination: "Norway"))
        try first.save()
        let mine = try #require(try first.fetch(FetchDescriptor<Trip>()).first)
        mine.destination = "Bergen"
        let other = ModelContext(container)
        try other.delete(model: Trip.self)
        try other.save()
        try first.save()
        #expect(mine.destination == "Bergen")
        #expect(mine.name == "Oslo")
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 0)
    }
}
