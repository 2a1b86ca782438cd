import SwiftData
import Testing

/// Point 1: `import SwiftData` alone is enough for code written for SwiftData.
@Suite struct CompatibilityModuleTests {
    @Test func reexportsFoundationAndObservation() {
        // Foundation and Observation types, reached only through `import SwiftData`.
        let date = Date(timeIntervalSince1970: 0)
        let id = UUID()
        let url = URL(string: "https://example.com")!
        #expect(date.timeIntervalSince1970 == 0)
        #expect(id == id)
        #expect(url.host == "example.com")
        let registrar = ObservationRegistrar()
        _ = registrar
    }

    @Test func modelsArePersistentAndObservable() {
        let trip = Trip(name: "A", destination: "B")
        #expect((trip as Any) is any PersistentModel)
        #expect((trip as Any) is any Observable)
    }

    @Test func predicatesAndSortDescriptorsFromFoundation() throws {
        let predicate = #Predicate<Trip> { $0.destination == "Rome" }
        let rome = Trip(name: "r", destination: "Rome")
        let oslo = Trip(name: "o", destination: "Oslo")
        #expect(try predicate.evaluate(rome))
        #expect(try !predicate.evaluate(oslo))
        let sorted = [rome, oslo].sorted(using: SortDescriptor(\Trip.destination))
        #expect(sorted.map(\.destination) == ["Oslo", "Rome"])
    }
}
