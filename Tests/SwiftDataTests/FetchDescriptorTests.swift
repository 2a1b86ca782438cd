import SwiftData
import Testing

/// Point 7: every field of `FetchDescriptor`.
@Suite struct FetchDescriptorTests {
    let container: ModelContainer
    let context: ModelContext

    init() throws {
        container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        context = ModelContext(container)
        let rows: [(String, String, Double, Bool)] = [
            ("a", "Paris", 300, true), ("b", "rome", 100, false), ("c", "Oslo", 200, true),
            ("d", "Paris", 100, false), ("e", "Zürich", 500, true), ("f", "oslo", 200, false),
        ]
        for (i, row) in rows.enumerated() {
            let trip = Trip(name: row.0, destination: row.1, startDate: Date(timeIntervalSince1970: Double(i) * 86400))
            trip.price = row.2
            trip.isFavorite = row.3
            context.insert(trip)
        }
        try context.save()
    }

    @Test func predicateFilters() throws {
        let cheap = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.price < 250 && !$0.isFavorite }))
        #expect(Set(cheap.map(\.name)) == ["b", "d", "f"])
        let since = Date(timeIntervalSince1970: 3 * 86400)
        let late = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.startDate >= since }))
        #expect(Set(late.map(\.name)) == ["d", "e", "f"])
        let noted = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.notes == nil }))
        #expect(noted.count == 6)
    }

    @Test func sortByManyKeysAndReverse() throws {
        let descriptor = FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.price, order: .reverse), SortDescriptor(\.name)])
        #expect(try context.fetch(descriptor).map(\.name) == ["e", "a", "c", "f", "b", "d"])
    }

    @Test func stringsSortAsFoundationOrdersThem() throws {
        let mine = try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.destination), SortDescriptor(\.name)]))
        let all = try context.fetch(FetchDescriptor<Trip>())
        let foundation = all.sorted(using: [SortDescriptor(\Trip.destination), SortDescriptor(\Trip.name)])
        #expect(mine.map(\.name) == foundation.map(\.name))
        // Lexical order on Linux: uppercase before lowercase.
        #expect(mine.map(\.destination) == ["Oslo", "Paris", "Paris", "Zürich", "oslo", "rome"])
    }

    @Test func limitAndOffset() throws {
        var descriptor = FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)])
        descriptor.fetchLimit = 2
        descriptor.fetchOffset = 1
        #expect(try context.fetch(descriptor).map(\.name) == ["b", "c"])
        #expect(try context.fetchCount(descriptor) == 2)
        descriptor.fetchOffset = 5
        #expect(try context.fetch(descriptor).map(\.name) == ["f"])
        descriptor.fetchOffset = 50
        #expect(try context.fetch(descriptor).isEmpty)
    }

    @Test func includePendingChanges() throws {
        let pending = Trip(name: "pending", destination: "Paris")
        context.insert(pending)
        let doomed = try #require(try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "a" })).first)
        context.delete(doomed)
        let paris = #Predicate<Trip> { $0.destination == "Paris" }
        var descriptor = FetchDescriptor<Trip>(predicate: paris, sortBy: [SortDescriptor(\.name, order: .reverse)])
        #expect(try context.fetch(descriptor).map(\.name) == ["pending", "d"])
        descriptor.includePendingChanges = false
        #expect(try context.fetch(descriptor).map(\.name) == ["d"])
    }

    @Test func hintsDoNotChangeResults() throws {
        var plain = FetchDescriptor<Trip>(predicate: #Predicate { $0.price >= 200 }, sortBy: [SortDescriptor(\.name)])
        let expected = try context.fetch(plain).map(\.name)
        plain.propertiesToFetch = [\.name, \.price]
        plain.relationshipKeyPathsForPrefetching = [\.bucketList]
        #expect(try context.fetch(plain).map(\.name) == expected)
        #expect(expected == ["a", "c", "e", "f"])
    }

    @Test func localizedStandardContainsCompilesAndMatches() throws {
        let matches = try context.fetch(FetchDescriptor<Trip>(
            predicate: #Predicate { $0.destination.localizedStandardContains("OSL") },
            sortBy: [SortDescriptor(\.name)]))
        #expect(matches.map(\.name) == ["c", "f"])
        let accents = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.destination.localizedStandardContains("zur") }))
        #expect(accents.map(\.name) == ["e"])
    }

    @Test func caseInsensitiveCompareCompilesAndMatches() throws {
        let target = "ROME"
        let ordered = ComparisonResult.orderedSame
        let matches = try context.fetch(FetchDescriptor<Trip>(
            predicate: #Predicate { $0.destination.caseInsensitiveCompare(target) == ordered }))
        #expect(matches.map(\.name) == ["b"])
    }

    @Test func countsWithoutAPredicateHonourOffsetLimitAndUnsavedChanges() throws {
        let other = ModelContext(container)
        #expect(try other.fetchCount(FetchDescriptor<Trip>()) == 6)
        var window = FetchDescriptor<Trip>()
        window.fetchOffset = 2
        #expect(try other.fetchCount(window) == 4)
        window.fetchLimit = 3
        #expect(try other.fetchCount(window) == 3)
        window.fetchOffset = 5
        #expect(try other.fetchCount(window) == 1)
        window.fetchOffset = 9
        #expect(try other.fetchCount(window) == 0)
        // As `fetch` windows: a limit of 0 is no limit, a negative offset is 0.
        window.fetchOffset = -3
        window.fetchLimit = 0
        #expect(try other.fetchCount(window) == 6)
        #expect(try other.fetchCount(window) == (try other.fetch(window)).count)
        // Unsaved inserts and deletes count too.
        other.insert(Trip(name: "new", destination: "Nice", startDate: .now))
        let first = try #require(try other.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)])).first)
        other.delete(first)
        other.insert(Trip(name: "newer", destination: "Nice", startDate: .now))
        #expect(try other.fetchCount(FetchDescriptor<Trip>()) == 7)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 6)
    }

    /// Without a sort, models come in the order they were saved, so a limited fetch
    /// stops scanning at the end of its window; pending deletes and changes still count.
    @Test func aLimitedFetchWithoutSortTakesTheFirstMatchesInOrder() throws {
        let context = ModelContext(container)
        let all = try context.fetch(FetchDescriptor<Trip>()).map(\.name)
        var window = FetchDescriptor<Trip>()
        window.fetchOffset = 1
        window.fetchLimit = 2
        #expect(try context.fetch(window).map(\.name) == Array(all[1..<3]))
        #expect(try context.fetchIdentifiers(window).count == 2)
        let second = try #require(try context.fetch(window).first)
        context.delete(second)
        #expect(try context.fetch(window).map(\.name) == [all[2], all[3]])
        let third = try #require(try context.fetch(window).first)
        third.name = "renamed"
        #expect(try context.fetch(window).map(\.name) == ["renamed", all[3]])
        window.fetchOffset = 10
        #expect(try context.fetch(window).isEmpty)
        // The largest limit is no limit, whatever the offset (no overflow).
        window.fetchLimit = .max
        window.fetchOffset = 1
        #expect(try context.fetch(window).count == all.count - 2)
        #expect(try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.startDate)])).count == all.count - 1)
        var sorted = FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.startDate)])
        sorted.fetchLimit = .max
        sorted.fetchOffset = .max
        #expect(try context.fetch(sorted).isEmpty)
    }
}
