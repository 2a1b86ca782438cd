import Foundation
@testable import OpenSwiftData
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
/// in the context, skips most of a query (`ModelContext.keyMatch`): these check which
/// fetches take that way, and that every fetch answers as the long way does
/// (unsaved changes, windows, class hierarchies, `Double` keys such as -0.0 and NaN).
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

    /// Whether `keyMatch` answers `descriptor` (after a first fetch cached its plan).
    private func takesTheShortWay<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, in context: ModelContext) throws -> Bool {
        _ = try context.fetch(descriptor)
        let request = FetchRequest(descriptor)
        return try context.keyMatch(request, filter: FetchQuery.filter(of: request, in: context)) != nil
    }

    @Test func onlyPlainKeyLookupsTakeTheShortWay() throws {
        let context = ModelContext(container)
        let name = "trip-5"
        #expect(try takesTheShortWay(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == name }), in: context))
        #expect(try takesTheShortWay(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "none" }), in: context))
        var limited = FetchDescriptor<Trip>(predicate: #Predicate { $0.name == name })
        limited.fetchLimit = 1
        #expect(try takesTheShortWay(limited, in: context))
        let key = 3, notANumber = Double.nan
        #expect(try takesTheShortWay(FetchDescriptor<GKeyed>(predicate: #Predicate { $0.key == key }), in: context))
        #expect(try takesTheShortWay(FetchDescriptor<Gauge>(predicate: #Predicate { $0.reading == notANumber }), in: context))

        var offset = FetchDescriptor<Trip>(predicate: #Predicate { $0.name == name })
        offset.fetchOffset = 1
        #expect(try !takesTheShortWay(offset, in: context))
        #expect(try !takesTheShortWay(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == name }, sortBy: [SortDescriptor(\.name)]), in: context))
        #expect(try !takesTheShortWay(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == name && $0.destination == "D0" }), in: context))
        #expect(try !takesTheShortWay(FetchDescriptor<Trip>(predicate: #Predicate { $0.destination == "D0" }), in: context))
        #expect(try !takesTheShortWay(FetchDescriptor<Trip>(), in: context))

        context.insert(GKeyed(key: 99, payload: "unsaved"))
        #expect(try !takesTheShortWay(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == name }), in: context))
        var saved = FetchDescriptor<Trip>(predicate: #Predicate { $0.name == name })
        saved.includePendingChanges = false
        #expect(try takesTheShortWay(saved, in: context))
    }

    @Test func aKeyAndAnotherConditionFindOnlyWhatPassesBoth() throws {
        let context = ModelContext(container)
        let name = "trip-5"
        #expect(try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == name && $0.destination == "D0" })).map(\.name) == ["trip-5"])
        #expect(try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == name && $0.destination == "D1" })).isEmpty)
    }

    @Test func aSubclassFetchFindsOnlyItsClassByAKeyTheHierarchyShares() throws {
        let journeys = try ModelContainer(
            for: Journey.self, BusinessJourney.self, PersonalJourney.self,
            configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(journeys)
        context.insert(BusinessJourney(name: "Audit", destination: "Paris", startDate: .now, expenseCode: "A"))
        context.insert(PersonalJourney(name: "Reunion", destination: "Oslo", startDate: .now, reason: .reunion))
        try context.save()

        let reader = ModelContext(journeys)
        for _ in 0..<2 {  // the second time, through the cached plans
            #expect(try reader.fetch(FetchDescriptor<PersonalJourney>(predicate: #Predicate { $0.name == "Audit" })).isEmpty)
            #expect(try reader.fetch(FetchDescriptor<BusinessJourney>(predicate: #Predicate { $0.name == "Audit" })).map(\.expenseCode) == ["A"])
            let any = try reader.fetch(FetchDescriptor<Journey>(predicate: #Predicate { $0.name == "Reunion" }))
            #expect(any.count == 1 && any.first is PersonalJourney)
        }
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
