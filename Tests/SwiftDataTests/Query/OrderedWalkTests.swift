import Foundation
import GraphModelTesting
import SwiftData
import Testing

@Model
final class Rental {
    #Index<Rental>([\.city], [\.price])
    @Attribute(.unique) var name: String
    var city: String
    var price: Double
    var beds: Int

    init(name: String, city: String, price: Double, beds: Int) {
        self.name = name
        self.city = city
        self.price = price
        self.beds = beds
    }
}

/// A limited, sorted fetch whose predicate pins an indexed attribute while another
/// index holds the sort's first key (the server's search: one city's rentals, the
/// dearest 20). Reading every rental of the city and ranking them costs the city's
/// size; walking the price index from the top and stopping once the window is full
/// costs about window × rentals ÷ city's size. `StoredRowQuery` counts the city's
/// entries and chooses per run; the walk gives up (and the city's index runs) when
/// it has tested as many rows as the city holds. Every answer equals the
/// reference: every model, `Predicate.evaluate`, Foundation's sort, the window.
@Suite struct OrderedWalkTests {
    static let cities = ["Lisbon", "Porto", "Faro", "Braga"]
    let container: ModelContainer
    let context: ModelContext

    /// 4,000 rentals over four cities, and 6 in Évora; prices in steps of 5, so many
    /// tie. Faro's rentals are the 1,000 cheapest: walking prices from the top meets
    /// them last.
    init() throws {
        container = try ModelContainer(for: Rental.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        context = ModelContext(container)
        for i in 0..<4_000 {
            let city = Self.cities[i % 4]
            let price = city == "Faro" ? Double(i % 50) : 300 + 5 * Double((i * 7) % 200)
            context.insert(Rental(name: "r\(i)", city: city, price: price, beds: i % 5))
        }
        for i in 0..<6 { context.insert(Rental(name: "e\(i)", city: "Évora", price: 100 * Double(i), beds: 2)) }
        try context.save()
    }

    @discardableResult
    private func check(
        _ descriptor: FetchDescriptor<Rental>, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> FetchExplanation {
        let explanation = try context.explain(descriptor)
        let fetched = try context.fetch(descriptor).map(\.name)
        #expect(fetched == (try referenceFetch(descriptor, in: context).map(\.name)), "\(explanation)", sourceLocation: sourceLocation)
        #expect(explanation.resultCount == fetched.count, sourceLocation: sourceLocation)
        return explanation
    }

    private static func search(
        _ city: String, limit: Int, offset: Int = 0, cheapest: Bool = false, minimum: Double = 0
    ) -> FetchDescriptor<Rental> {
        var descriptor = FetchDescriptor<Rental>(
            predicate: #Predicate { $0.city == city && $0.price >= minimum },
            sortBy: [SortDescriptor(\.price, order: cheapest ? .forward : .reverse), SortDescriptor(\.name)])
        descriptor.fetchLimit = limit
        descriptor.fetchOffset = offset
        return descriptor
    }

    @Test func aWideCityWalksThePricesFromTheTop() throws {
        let e = try check(Self.search("Lisbon", limit: 20))
        #expect(e.accessPath == .index(["price"], .range))
        #expect(!e.sortedByIndex, "the walk orders prices; names break their ties afterwards")
        #expect(e.description.contains(
            "index (price) range in the order of the sort's first key, up to 1000 rows tested, else index (city) equality"),
            "\(e)")
        // About 20 × 4,006 ÷ 1,000 rows, with the ties of the last price: far fewer than the city's 1,000.
        #expect(e.rowsExamined < 200, "\(e)")
        #expect(e.resultCount == 20)
        // Windows further down, and the other direction.
        for (limit, offset) in [(1, 0), (7, 3), (50, 120)] {
            try check(Self.search("Porto", limit: limit, offset: offset))
            try check(Self.search("Braga", limit: limit, offset: offset, cheapest: true, minimum: 700))
        }
    }

    @Test func aNarrowCityKeepsItsIndex() throws {
        let e = try check(Self.search("Évora", limit: 3))
        #expect(e.accessPath == .index(["city"], .equality))
        #expect(e.rowsExamined == 6)
        let none = try check(Self.search("Nowhere", limit: 3))
        #expect(none.accessPath == .index(["city"], .equality))
        #expect(none.resultCount == 0)
    }

    /// Faro's rentals are the cheapest, so the walk from the top tests its budget
    /// (Faro's 1,000 entries) without filling the window, and the city's index runs.
    @Test func matchesAtTheFarEndFallBackToTheCity() throws {
        let e = try check(Self.search("Faro", limit: 10))
        #expect(e.resultCount == 10)
        #expect(e.rowsExamined == 2_000, "the walk's 1,000, then the city's 1,000: \(e)")
        // From the bottom, the same city fills the window at once.
        let cheapest = try check(Self.search("Faro", limit: 10, cheapest: true))
        #expect(cheapest.rowsExamined < 60, "\(cheapest)")
    }

    /// Unsaved changes can land anywhere in the order, so the walk does not stop
    /// early: the city's index reads them all, and the answer takes the changes in.
    @Test func unsavedChangesTakePart() throws {
        let moved = try #require(try context.fetch(FetchDescriptor<Rental>(predicate: #Predicate { $0.name == "r1" })).first)
        moved.city = "Lisbon"
        moved.price = 10_000
        context.insert(Rental(name: "new", city: "Lisbon", price: 9_999, beds: 1))
        let e = try check(Self.search("Lisbon", limit: 5))
        #expect(try context.fetch(Self.search("Lisbon", limit: 2)).map(\.name) == ["r1", "new"])
        #expect(e.accessPath == .index(["city"], .equality))
        try context.save()
        let saved = try check(Self.search("Lisbon", limit: 5))
        #expect(saved.accessPath == .index(["price"], .range))
    }

    /// Deleted models (unsaved) are left out as the walk goes: it stays chosen, and
    /// fills its window past them.
    @Test func unsavedDeletesAreSkipped() throws {
        let top = try context.fetch(Self.search("Lisbon", limit: 3)).map(\.name)
        for rental in try context.fetch(Self.search("Lisbon", limit: 3)) { context.delete(rental) }
        let e = try check(Self.search("Lisbon", limit: 5))
        #expect(e.accessPath == .index(["price"], .range))
        #expect(try context.fetch(Self.search("Lisbon", limit: 5)).allSatisfy { !top.contains($0.name) })
    }

    /// NaN prices tie with each other in the index's order and in the sort's: the walk
    /// takes every NaN tied with its window's last, not only the first it meets, so it
    /// answers as the city's index does (the first NaN rentals saved).
    @Test func nanPricesTieAtTheWindowsEnd() throws {
        let container = try ModelContainer(for: Rental.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        for i in 0..<600 {
            let name = "n" + String(1_000 + i).dropFirst()
            context.insert(Rental(name: name, city: "Nice", price: i < 40 ? .nan : Double(i), beds: 1))
        }
        for i in 0..<3_000 { context.insert(Rental(name: "o\(i)", city: "Oslo", price: Double(i % 700), beds: 1)) }
        try context.save()
        // (No bound on the price: NaN passes no comparison.)
        var search = FetchDescriptor<Rental>(
            predicate: #Predicate { $0.city == "Nice" },
            sortBy: [SortDescriptor(\.price, order: .reverse), SortDescriptor(\.name)])
        search.fetchLimit = 10
        let walked = try context.explain(search)
        #expect(walked.accessPath == .index(["price"], .ordered), "\(walked)")
        let expected = (0..<10).map { "n" + String(1_000 + $0).dropFirst() }
        #expect(try context.fetch(search).map(\.name) == expected)
        // The city's index, when unsaved changes keep the walk from being chosen, agrees.
        context.insert(Rental(name: "unsaved", city: "Bergen", price: 1, beds: 1))
        #expect(try context.explain(search).accessPath == .index(["city"], .equality))
        #expect(try context.fetch(search).map(\.name) == expected)
    }

    /// NaN prices tie with each other, so the next sort key ranks them, whatever the
    /// plan: rows saved in the reverse of their names' order come back by name among
    /// the NaNs (through the walk, the city's index, unsaved inserts, a whole sort).
    @Test func laterSortKeysRankNaNPrices() throws {
        let container = try ModelContainer(for: Rental.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let names = (0..<30).map { "k" + String(100 + $0).dropFirst() }
        for name in names.reversed() { context.insert(Rental(name: name, city: "Nice", price: .nan, beds: 1)) }
        for i in 0..<200 { context.insert(Rental(name: "n\(i)", city: "Nice", price: Double(i), beds: 1)) }
        for i in 0..<3_000 { context.insert(Rental(name: "o\(i)", city: "Oslo", price: Double(i % 700), beds: 1)) }
        var search = FetchDescriptor<Rental>(
            predicate: #Predicate { $0.city == "Nice" },
            sortBy: [SortDescriptor(\.price, order: .reverse), SortDescriptor(\.name)])
        search.fetchLimit = 10
        // Unsaved: the context sorts its inserts itself.
        #expect(try context.fetch(search).map(\.name) == Array(names.prefix(10)))
        try context.save()
        #expect(try context.explain(search).accessPath == .index(["price"], .ordered))
        #expect(try context.fetch(search).map(\.name) == Array(names.prefix(10)))
        context.insert(Rental(name: "unsaved", city: "Bergen", price: 1, beds: 1))
        #expect(try context.explain(search).accessPath == .index(["city"], .equality))
        #expect(try context.fetch(search).map(\.name) == Array(names.prefix(10)))
        search.fetchLimit = nil
        #expect(try context.fetch(search).prefix(30).map(\.name) == names)
        let ascending = FetchDescriptor<Rental>(
            predicate: #Predicate { $0.city == "Nice" }, sortBy: [SortDescriptor(\.price), SortDescriptor(\.name)])
        #expect(try context.fetch(ascending).suffix(30).map(\.name) == names)
    }

    /// Random cities, windows, directions and bounds, against the reference.
    @Test(arguments: [UInt64(7), 8])
    func randomSearchesAnswerAsTheReference(seed: UInt64) throws {
        var rng = QSplitMix64(seed: seed)
        var walked = 0
        for _ in 0..<60 {
            let city = (Self.cities + ["Évora"]).randomElement(using: &rng)!
            let descriptor = Self.search(
                city, limit: Int.random(in: 1...60, using: &rng), offset: Int.random(in: 0...80, using: &rng),
                cheapest: Bool.random(using: &rng), minimum: [0, 350, 800, 1_200].randomElement(using: &rng)!)
            if case .index(["price"], _) = try check(descriptor).accessPath { walked += 1 }
        }
        #expect(walked > 10, "the walk is chosen for wide cities")
    }
}
