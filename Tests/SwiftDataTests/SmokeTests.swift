import SwiftData
import Testing

@Suite struct SmokeTests {
    @Test func insertFetchSave() throws {
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let trip = Trip(name: "Summer", destination: "Paris")
        trip.bucketList.append(BucketListItem(title: "Louvre"))
        context.insert(trip)
        try context.save()
        let trips = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.destination == "Paris" }))
        #expect(trips.count == 1)
        #expect(trips.first === trip)
        #expect(trip.bucketList.first?.trip === trip)
        let other = ModelContext(container)
        let again = try other.fetch(FetchDescriptor<Trip>())
        #expect(again.first?.name == "Summer")
        #expect(again.first?.bucketList.map(\.title) == ["Louvre"])
    }
}
