import SwiftData
import Testing

@Model
final class Voyage {
    #Index<Voyage>([\.port], [\.departure], [\.port, \.fare])
    @Attribute(.unique) var code: String
    var port: String
    var departure: Date
    var fare: Double
    var isFull: Bool

    init(code: String, port: String, departure: Date, fare: Double, isFull: Bool) {
        self.code = code
        self.port = port
        self.departure = departure
        self.fare = fare
        self.isFull = isFull
    }
}

/// Issue #3, points 3–4: the planner uses B-tree indexes where it should, and the
/// answers equal the reference (materialize every row and evaluate).
@Suite struct IndexPlanTests {
    static let ports = ["Oslo", "Lima", "Cork", "Bari", "Nice"]
    let container: ModelContainer
    let context: ModelContext

    init() throws {
        container = try ModelContainer(for: Voyage.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        context = ModelContext(container)
        for i in 0..<500 {
            context.insert(Voyage(
                code: "v\(i)", port: Self.ports[(i * 7) % 5],
                departure: Date(timeIntervalSince1970: Double((i * 37) % 400) * 86_400),
                fare: Double((i * 13) % 300), isFull: i % 3 == 0))
        }
        try context.save()
    }

    private func reference(_ descriptor: FetchDescriptor<Voyage>) throws -> [String] {
        try referenceFetch(descriptor, in: context).map(\.code)
    }

    @discardableResult
    private func check(_ descriptor: FetchDescriptor<Voyage>, sourceLocation: SourceLocation = #_sourceLocation) throws -> FetchExplanation {
        let explanation = try context.explain(descriptor)
        #expect(try context.fetch(descriptor).map(\.code) == reference(descriptor), "\(explanation)", sourceLocation: sourceLocation)
        let filterings: [FetchExplanation.Filtering] = descriptor.predicate == nil ? [.none] : [.native, .exactKey]
        #expect(filterings.contains(explanation.filtering), sourceLocation: sourceLocation)
        return explanation
    }

    @Test func equalityUsesTheIndex() throws {
        let e = try check(FetchDescriptor(predicate: #Predicate { $0.port == "Lima" }, sortBy: [SortDescriptor(\.code)]))
        #expect(e.accessPath == .index(["port"], .equality))
        #expect(e.rowsExamined == 100)
        #expect(e.resultCount == 100)
    }

    @Test func rangeUsesTheIndex() throws {
        let from = Date(timeIntervalSince1970: 100 * 86_400), to = Date(timeIntervalSince1970: 120 * 86_400)
        let e = try check(FetchDescriptor(predicate: #Predicate { $0.departure >= from && $0.departure < to }))
        #expect(e.accessPath == .index(["departure"], .range))
        #expect(e.rowsExamined == e.resultCount)
        #expect(e.resultCount > 0)
    }

    @Test func compoundPrefixWithRange() throws {
        let e = try check(FetchDescriptor(
            predicate: #Predicate { $0.port == "Cork" && $0.fare > 150 && !$0.isFull },
            sortBy: [SortDescriptor(\.fare), SortDescriptor(\.code)]))
        #expect(e.accessPath == .index(["port", "fare"], .range))
        let corkAbove150 = try context.fetchCount(FetchDescriptor<Voyage>(predicate: #Predicate { $0.port == "Cork" && $0.fare > 150 }))
        #expect(e.rowsExamined == corkAbove150)
    }

    @Test func inListUsesOneLookupPerValue() throws {
        let wanted = ["Nice", "Bari", "Nice"]
        let e = try check(FetchDescriptor(predicate: #Predicate { wanted.contains($0.port) }, sortBy: [SortDescriptor(\.code)]))
        #expect(e.accessPath == .index(["port"], .inList(2)))
        #expect(e.rowsExamined == 200)
    }

    @Test func indexOrderServesSortWithLimit() throws {
        let from = Date(timeIntervalSince1970: 50 * 86_400)
        var descriptor = FetchDescriptor<Voyage>(predicate: #Predicate { $0.departure > from }, sortBy: [SortDescriptor(\.departure)])
        descriptor.fetchLimit = 5
        descriptor.fetchOffset = 2
        let e = try check(descriptor)
        #expect(e.accessPath == .index(["departure"], .range))
        #expect(e.sortedByIndex)
        #expect(e.rowsExamined < 20)
        #expect(e.resultCount == 5)

        var newest = FetchDescriptor<Voyage>(sortBy: [SortDescriptor(\.departure, order: .reverse)])
        newest.fetchLimit = 3
        let ordered = try check(newest)
        #expect(ordered.accessPath == .index(["departure"], .ordered))
        #expect(ordered.sortedByIndex)
        #expect(ordered.rowsExamined < 10)
    }

    @Test func topKWithoutAnIndexOrder() throws {
        for (limit, offset) in [(1, 0), (5, 3), (40, 100), (300, 0)] {
            var descriptor = FetchDescriptor<Voyage>(
                predicate: #Predicate { !$0.isFull },
                sortBy: [SortDescriptor(\.fare, order: .reverse), SortDescriptor(\.departure)])
            descriptor.fetchLimit = limit
            descriptor.fetchOffset = offset
            let e = try check(descriptor)
            #expect(e.accessPath == .scan)
            #expect(!e.sortedByIndex)
        }
    }

    @Test func pendingChangesAreFoundByTheirNewValues() throws {
        let moved = try #require(try context.fetch(FetchDescriptor<Voyage>(predicate: #Predicate { $0.code == "v1" })).first)
        let oldPort = moved.port
        moved.port = "Atlantis"
        context.insert(Voyage(code: "new", port: "Atlantis", departure: .now, fare: 1, isFull: false))
        let found = try context.fetch(FetchDescriptor<Voyage>(predicate: #Predicate { $0.port == "Atlantis" }, sortBy: [SortDescriptor(\.code)]))
        #expect(found.map(\.code) == ["new", "v1"])
        let old = try context.fetch(FetchDescriptor<Voyage>(predicate: #Predicate { $0.port == oldPort }))
        #expect(!old.contains { $0.code == "v1" })
        var limited = FetchDescriptor<Voyage>(sortBy: [SortDescriptor(\.departure, order: .reverse)])
        limited.fetchLimit = 1
        #expect(try context.fetch(limited).map(\.code) == ["new"])
    }

    @Test func uniqueKeyBeatsOtherIndexes() throws {
        let e = try check(FetchDescriptor(predicate: #Predicate { $0.port == "Oslo" && $0.code == "v0" }))
        #expect(e.accessPath == .uniqueIndex(["code"]))
        #expect(e.rowsExamined == 1)
    }

    /// A predicate that is exactly an index range is answered by the index: its rows
    /// are not tested again, and the answer is still the reference's.
    @Test func anExactRangeIsAnsweredByTheIndex() throws {
        let from = Date(timeIntervalSince1970: 100 * 86_400), to = Date(timeIntervalSince1970: 120 * 86_400)
        let dates = try check(FetchDescriptor(
            predicate: #Predicate { $0.departure >= from && $0.departure < to }, sortBy: [SortDescriptor(\.departure)]))
        #expect(dates.filtering == .exactKey)
        let closed = try check(FetchDescriptor(predicate: #Predicate { (from...to).contains($0.departure) }))
        #expect(closed.filtering == .exactKey)
        let prefix = try check(FetchDescriptor(predicate: #Predicate { $0.port == "Cork" && $0.fare > 150 && $0.fare <= 250 }))
        #expect(prefix.filtering == .exactKey)
        #expect(prefix.accessPath == .index(["port", "fare"], .range))
        let equality = try check(FetchDescriptor(predicate: #Predicate { $0.port == "Lima" }))
        #expect(equality.filtering == .exactKey)
        let upperOnly = try check(FetchDescriptor(predicate: #Predicate { $0.port == "Nice" && $0.fare < 40 }))
        #expect(upperOnly.filtering == .exactKey)
    }

    /// Where the index and the predicate could disagree, or the predicate says more,
    /// every row is tested.
    @Test func aRangeThatIsNotExactlyThePredicateIsTested() throws {
        let from = Date(timeIntervalSince1970: 100 * 86_400)
        // A Double or Date bounded only from below: the index keeps NaN above every value.
        let lowerOnly = try check(FetchDescriptor(predicate: #Predicate { $0.departure >= from }))
        #expect(lowerOnly.filtering == .native)
        // A further condition.
        let more = try check(FetchDescriptor(predicate: #Predicate { $0.port == "Cork" && $0.fare > 150 && !$0.isFull }))
        #expect(more.filtering == .native)
        // An equality repeated (here contradicting itself).
        let twice = try check(FetchDescriptor(predicate: #Predicate { $0.port == "Oslo" && $0.port == "Lima" }))
        #expect(twice.filtering == .native)
        #expect(twice.resultCount == 0)
        let nan = Double.nan
        let notANumber = try check(FetchDescriptor(predicate: #Predicate { $0.port == "Bari" && $0.fare < nan }))
        #expect(notANumber.filtering == .native)
        #expect(notANumber.resultCount == 0)
    }

    @Test func anExactRangeLeavesOutPendingDeletesAndChanges() throws {
        let from = Date(timeIntervalSince1970: 100 * 86_400), to = Date(timeIntervalSince1970: 120 * 86_400)
        let descriptor = FetchDescriptor<Voyage>(predicate: #Predicate { $0.departure >= from && $0.departure < to })
        let before = try context.fetch(descriptor)
        #expect(before.count >= 2)
        context.delete(before[0])
        before[1].departure = Date(timeIntervalSince1970: 0)
        let explanation = try check(descriptor)
        #expect(explanation.filtering == .exactKey)
        let codes = try context.fetch(descriptor).map(\.code)
        #expect(!codes.contains(before[0].code))
        #expect(!codes.contains(before[1].code))
        #expect(codes.count == before.count - 2)
    }
}
