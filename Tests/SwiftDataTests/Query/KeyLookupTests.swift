import Foundation
import SwiftData
import Testing

@Model
final class Gauge {
    @Attribute(.unique) var reading: Double
    var label: String

    init(reading: Double, label: String) {
        self.reading = reading
        self.label = label
    }
}

/// A fetch whose whole predicate is one unique key's equality, with nothing unsaved
/// in the context, skips most of a query (`ModelContext.keyMatch`): these check that
/// it answers as any other fetch does, and that every other case still goes the long
/// way (unsaved changes, windows, values that are no key).
@Suite struct KeyLookupTests {
    let container: ModelContainer

    init() throws {
        container = try ModelContainer(
            for: Trip.self, GKeyed.self, Gauge.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        for i in 0..<50 {
            context.insert(Trip(name: "trip-\(i)", destination: "D\(i % 5)"))
            context.insert(GKeyed(key: i, payload: "p\(i)"))
        }
        for (reading, label) in [(-0.0, "zero"), (1.5, "one and a half"), (.infinity, "infinite"), (-2, "minus two")] {
            context.insert(Gauge(reading: reading, label: label))
        }
        try context.save()
    }

    @Test func aKeyFindsItsModelAndTheSameObjectEachTime() throws {
        let context = ModelContext(container)
        let name = "trip-17"
        let first = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == name }))
        let again = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == name }))
        #expect(first.map(\.name) == ["trip-17"])
        #expect(first.first?.destination == "D2")
        #expect(again.count == 1 && first.first === again.first)

        let key = 42
        #expect(try context.fetch(FetchDescriptor<GKeyed>(predicate: #Predicate { $0.key == key })).map(\.payload) == ["p42"])
        let missing = 50
        #expect(try context.fetch(FetchDescriptor<GKeyed>(predicate: #Predicate { $0.key == missing })).isEmpty)
        #expect(try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "trip-50" })).isEmpty)
    }

    @Test func aLookedUpModelShowsWhatAnotherContextSaved() throws {
        let reader = ModelContext(container)
        let key = 7
        let before = try #require(try reader.fetch(FetchDescriptor<GKeyed>(predicate: #Predicate { $0.key == key })).first)
        #expect(before.payload == "p7")

        let writer = ModelContext(container)
        let other = try #require(try writer.fetch(FetchDescriptor<GKeyed>(predicate: #Predicate { $0.key == key })).first)
        other.payload = "changed"
        try writer.save()

        let after = try reader.fetch(FetchDescriptor<GKeyed>(predicate: #Predicate { $0.key == key }))
        #expect(after.first === before)
        #expect(before.payload == "changed")
    }

    @Test func unsavedChangesTakePart() throws {
        let context = ModelContext(container)
        func names(_ name: String, pending: Bool = true) throws -> [String] {
            var descriptor = FetchDescriptor<Trip>(predicate: #Predicate { $0.name == name })
            descriptor.includePendingChanges = pending
            return try context.fetch(descriptor).map(\.name)
        }
        let renamed = try #require(try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "trip-3" })).first)
        renamed.name = "renamed"
        #expect(try names("trip-3").isEmpty)
        #expect(try names("renamed") == ["renamed"])

        let doomed = try #require(try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "trip-4" })).first)
        context.delete(doomed)
        #expect(try names("trip-4").isEmpty)

        context.insert(Trip(name: "fresh", destination: "D9"))
        #expect(try names("fresh") == ["fresh"])
        #expect(try names("fresh", pending: false).isEmpty)

        try context.save()
        #expect(try names("trip-3").isEmpty)
        #expect(try names("renamed") == ["renamed"])
        #expect(try names("trip-4").isEmpty)
        #expect(try names("fresh", pending: false) == ["fresh"])
    }

    @Test func windowsAreHonoured() throws {
        let context = ModelContext(container)
        func fetch(limit: Int?, offset: Int?) throws -> Int {
            var descriptor = FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "trip-9" })
            descriptor.fetchLimit = limit
            descriptor.fetchOffset = offset
            return try context.fetch(descriptor).count
        }
        #expect(try fetch(limit: 1, offset: nil) == 1)
        #expect(try fetch(limit: 0, offset: nil) == 1)  // a limit of 0 is none
        #expect(try fetch(limit: 5, offset: 0) == 1)
        #expect(try fetch(limit: nil, offset: 1) == 0)
        #expect(try fetch(limit: 1, offset: -1) == 1)
    }

    @Test func numbersMatchAsSwiftComparesThem() throws {
        let context = ModelContext(container)
        for reading in [0.0, -0.0, 1.5, .infinity, -2, .nan, 3] {
            let found = try context.fetch(FetchDescriptor<Gauge>(predicate: #Predicate { $0.reading == reading }))
            let expected = try context.fetch(FetchDescriptor<Gauge>()).filter { $0.reading == reading }
            #expect(found.map(\.label) == expected.map(\.label), "\(reading)")
            #expect(found.count == (reading.isNaN || reading == 3 ? 0 : 1), "\(reading)")
        }
    }
}
