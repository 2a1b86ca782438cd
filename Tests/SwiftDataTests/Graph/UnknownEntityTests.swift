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
}
