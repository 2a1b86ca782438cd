import Foundation
import SwiftData
import Testing

/// Point 2: what `@Model` and its companions do at run time.
@Suite struct ModelMacroBehaviourTests {
    @Test func schemaMetadataListsStoredPropertiesInOrder() {
        let names = Trip.schemaMetadata.map(\.name)
        #expect(names == [
            "name", "destination", "startDate", "endDate", "isFavorite", "price", "notes", "bucketList",
            "livingAccommodation",
        ])
        #expect(!names.contains("isSelected"))
        let favorite = Trip.schemaMetadata.first { $0.name == "isFavorite" }
        #expect(favorite?.defaultValue as? Bool == false)
        #expect(favorite?.keypath == \Trip.isFavorite)
        let name = Trip.schemaMetadata.first { $0.name == "name" }
        #expect((name?.metadata as? Schema.Attribute)?.isUnique == true)
    }

    @Test func observationFiresOnStoredPropertyChange() {
        let trip = Trip(name: "A", destination: "B")
        nonisolated(unsafe) var fired = 0
        withObservationTracking {
            _ = trip.destination
        } onChange: {
            fired += 1
        }
        trip.name = "untracked"
        #expect(fired == 0)
        trip.destination = "C"
        #expect(fired == 1)
    }

    /// The registrar is made by the first read, so a fetched model (made by
    /// `init(backingData:)`) and a model written before anyone observed it still notify.
    @Test func observationFiresOnFetchedModelsWrittenBeforeObserved() throws {
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        context.insert(Trip(name: "A", destination: "B"))
        try context.save()
        let reader = ModelContext(container)
        let trip = try #require(try reader.fetch(FetchDescriptor<Trip>()).first)
        trip.destination = "written before anyone observed"
        nonisolated(unsafe) var fired = 0
        withObservationTracking {
            _ = trip.destination
        } onChange: {
            fired += 1
        }
        trip.destination = "C"
        #expect(fired == 1)
        #expect(trip.destination == "C")
        #expect(trip.hasChanges)
    }

    /// A read outside `withObservationTracking` makes no registrar (nobody can observe
    /// it); the first tracked read makes one, and the change after it notifies: for an
    /// attribute and for a relationship, and on a thread other than the test's.
    @Test func observationFiresOnModelsReadBeforeAnyoneTracked() throws {
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let saved = Trip(name: "A", destination: "B")
        saved.bucketList = [BucketListItem(title: "swim")]
        context.insert(saved)
        try context.save()
        let reader = ModelContext(container)
        let trip = try #require(try reader.fetch(FetchDescriptor<Trip>()).first)
        // Untracked reads, then an untracked write: nobody to notify yet.
        #expect(trip.destination == "B")
        #expect(trip.bucketList.count == 1)
        trip.destination = "B2"
        nonisolated(unsafe) var fired = 0
        withObservationTracking {
            _ = trip.destination
        } onChange: {
            fired += 1
        }
        trip.name = "untracked property"
        #expect(fired == 0)
        trip.destination = "C"
        #expect(fired == 1)

        // A relationship, first tracked on a model only read untracked before.
        let otherReader = ModelContext(container)
        let other = try #require(try otherReader.fetch(FetchDescriptor<Trip>()).first)
        #expect(other.bucketList.count == 1)
        nonisolated(unsafe) var relationshipFired = 0
        withObservationTracking {
            _ = other.bucketList
        } onChange: {
            relationshipFired += 1
        }
        other.bucketList.append(BucketListItem(title: "hike"))
        #expect(relationshipFired == 1)

        // Tracking is per thread: a read tracked on another thread registers too.
        let item = try #require(trip.bucketList.first)
        nonisolated(unsafe) let tracked = item
        nonisolated(unsafe) var itemFired = 0
        let done = DispatchSemaphore(value: 0)
        Thread {
            withObservationTracking {
                _ = tracked.title
            } onChange: {
                itemFired += 1
            }
            done.signal()
        }.start()
        done.wait()
        item.title = "swim far"
        #expect(itemFired == 1)
    }

    @Test func defaultsReachStorageThroughInitializers() throws {
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        context.insert(Trip(name: "A", destination: "B"))
        try context.save()
        let fetched = try ModelContext(container).fetch(FetchDescriptor<Trip>())
        #expect(fetched.first?.isFavorite == false)
        #expect(fetched.first?.price == 0)
        #expect(fetched.first?.notes == nil)
        #expect(fetched.first?.bucketList.isEmpty == true)
    }

    /// Literal defaults are not written by the initializer (a new backing data holds
    /// them already); defaults computed per instance still are, once per instance.
    @Test func literalAndPerInstanceDefaultsReachEachModel() throws {
        let container = try ModelContainer(for: DefaultsProbe.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let first = DefaultsProbe(), second = DefaultsProbe(memo: "kept")
        second.count = 7
        #expect(first.serial != second.serial)
        #expect(first.count == -1)
        #expect(first.label == "none")
        context.insert(first)
        context.insert(second)
        try context.save()
        let reader = ModelContext(container)
        let stored = try reader.fetch(FetchDescriptor<DefaultsProbe>(sortBy: [SortDescriptor(\.count)]))
        #expect(stored.map(\.count) == [-1, 7])
        #expect(Set(stored.map(\.serial)) == [first.serial, second.serial])
        for probe in stored {
            #expect(probe.label == "none")
            #expect(probe.ratio == 0.5)
            #expect(probe.tags.isEmpty)
            #expect(probe.note == nil)
        }
        #expect(stored[0].issued == first.issued)
        #expect(stored.map(\.memo) == [nil, "kept"])
    }

    /// A model whose property defaults to a new model of another class, made before
    /// any schema or container has seen either class: making its backing data builds
    /// its layout, which evaluates that default and so makes the other model's backing
    /// data first (a lock held across the two deadlocked).
    @Test func aDefaultThatMakesAnotherModelBeforeAnyContainer() throws {
        let holder = GadgetHolder()
        #expect(holder.gadget?.label == "spare")
        let container = try ModelContainer(
            for: GadgetHolder.self, Gadget.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        context.insert(holder)
        try context.save()
        let reader = ModelContext(container)
        let fetched = try reader.fetch(FetchDescriptor<GadgetHolder>())
        #expect(fetched.map { $0.gadget?.label } == ["spare"])
    }

    @Test func transientIsNotStoredAndResetsOnFetch() throws {
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let trip = Trip(name: "A", destination: "B")
        trip.isSelected = true
        context.insert(trip)
        try context.save()
        // The same context keeps its instance, and so the transient value.
        #expect(try context.fetch(FetchDescriptor<Trip>()).first?.isSelected == true)
        // A fresh fetch elsewhere makes a new instance: the default again.
        #expect(try ModelContext(container).fetch(FetchDescriptor<Trip>()).first?.isSelected == false)
        #expect(Schema(Trip.self).entity(for: Trip.self)?.attributesByName["isSelected"] == nil)
    }

    @Test func uniqueAndIndexDeclarationsReachTheSchema() throws {
        let schema = Schema(Book.self, IndexedPlace.self)
        let book = try #require(schema.entity(for: Book.self))
        #expect(book.uniquenessConstraints == [["isbn"], ["title", "author"]])
        let place = try #require(schema.entity(for: IndexedPlace.self))
        #expect(place.indices == [["name"], ["country", "name"]])
        #expect(place.uniquenessConstraints == [["code"]])
    }

    @Test func typedIndexWithRTreeCompilesAndStores() throws {
        let container = try ModelContainer(for: SpatialPlace.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        context.insert(SpatialPlace(name: "Paris", latitude: 48.85, longitude: 2.35))
        try context.save()
        let near = try context.fetch(FetchDescriptor<SpatialPlace>(predicate: #Predicate { $0.latitude > 40 && $0.longitude < 10 }))
        #expect(near.map(\.name) == ["Paris"])
        #expect(Schema(SpatialPlace.self).entity(for: SpatialPlace.self)?.indices == [["name"]])
    }
}

@Model
final class IndexedPlace {
    #Index<IndexedPlace>([\.name], [\.country, \.name])
    @Attribute(.unique) var code: String
    var name: String
    var country: String

    init(code: String, name: String, country: String) {
        self.code = code
        self.name = name
        self.country = country
    }
}

@Model
final class SpatialPlace {
    #Index<SpatialPlace>(.binary([\.name]), .rtree([\.latitude, \.longitude]))
    var name: String
    var latitude: Double
    var longitude: Double

    init(name: String, latitude: Double, longitude: Double) {
        self.name = name
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// Defaults of every kind the macro tells apart: literals and values made per instance.
@Model
final class DefaultsProbe {
    var serial = UUID()
    var issued: Date = .now
    var count = -1
    var label: String = "none"
    var ratio = 0.5
    var tags: [String] = []
    var note: String? = nil
    var memo: String?

    init(memo: String? = nil) {
        self.memo = memo
    }
}

/// Used only by `aDefaultThatMakesAnotherModelBeforeAnyContainer`, so that nothing has
/// built their layouts before it runs. `made`, written first, makes the holder's
/// backing data before the default gadget exists.
@Model
final class Gadget {
    var label: String
    init(label: String) { self.label = label }
}

@Model
final class GadgetHolder {
    var made = Date.now
    var gadget: Gadget? = Gadget(label: "spare")
    init() {}
}
