import Foundation
import SwiftData
import Testing

/// A container whose schema lacks entities a document holds keeps their rows,
/// untouched, through saves, compactions and reopens (#39, point 3): a later app
/// version or a second tool opening the file with fewer models loses nothing.
@Suite struct UnknownEntityTests {
    @Test func rowsOfEntitiesTheContainerDoesNotKnowSurvive() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = folder.file("shared.store")
        let full = Schema([Trip.self, BucketListItem.self, LivingAccommodation.self, GKeyed.self])
        do {
            let context = ModelContext(try ModelContainer(for: full, configurations: ModelConfiguration(url: url)))
            let trip = Trip(name: "Lisbon", destination: "Portugal")
            trip.bucketList = [BucketListItem(title: "Tram 28")]
            context.insert(trip)
            for key in 1...5 { context.insert(GKeyed(key: key, payload: "p\(key)")) }
            try context.save()
        }
        // A tool that knows only the keyed models: it saves, compacts, reopens.
        do {
            let container = try ModelContainer(for: GKeyed.self, configurations: ModelConfiguration(url: url))
            let context = ModelContext(container)
            #expect(try context.fetchCount(FetchDescriptor<GKeyed>()) == 5)
            context.insert(GKeyed(key: 6, payload: "p6"))
            try context.save()
            try container.compactDocument()
            context.insert(GKeyed(key: 7, payload: "p7"))
            try context.save()
        }
        do {
            let context = ModelContext(try ModelContainer(for: GKeyed.self, configurations: ModelConfiguration(url: url)))
            #expect(try context.fetchCount(FetchDescriptor<GKeyed>()) == 7)
        }
        // The app with every model finds its trips as they were.
        let context = ModelContext(try ModelContainer(for: full, configurations: ModelConfiguration(url: url)))
        let trips = try context.fetch(FetchDescriptor<Trip>())
        #expect(trips.map(\.name) == ["Lisbon"])
        #expect(trips.first?.bucketList.map(\.title) == ["Tram 28"])
        #expect(try context.fetchCount(FetchDescriptor<GKeyed>()) == 7)
    }

    /// A document mode over fewer models: `save(as:)` and `revertToSaved()` open the
    /// file again, and carry the other entities as the first open did.
    @Test func documentModeCarriesThemThroughSaveAsAndRevert() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = folder.file("shared.store"), copy = folder.file("copy.store")
        do {
            let context = ModelContext(try ModelContainer(for: Trip.self, GKeyed.self, configurations: ModelConfiguration(url: url)))
            context.insert(Trip(name: "Oslo", destination: "Norway"))
            context.insert(GKeyed(key: 1, payload: "p1"))
            try context.save()
        }
        do {
            let document = try ModelDocument(for: GKeyed.self, contentsOf: url)
            document.mainContext.insert(GKeyed(key: 2, payload: "p2"))
            try document.save(as: copy)
            try document.revertToSaved()
            #expect(try document.mainContext.fetchCount(FetchDescriptor<GKeyed>()) == 2)
            document.close()
        }
        let context = ModelContext(try ModelContainer(for: Trip.self, GKeyed.self, configurations: ModelConfiguration(url: copy)))
        #expect(try context.fetch(FetchDescriptor<Trip>()).map(\.name) == ["Oslo"])
        #expect(try context.fetchCount(FetchDescriptor<GKeyed>()) == 2)
    }
}
