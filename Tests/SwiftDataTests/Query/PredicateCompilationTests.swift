import SwiftData
import Testing

/// Issue #3, point 1–2: which predicates run natively on stored rows, and that
/// they give the same answers as `Predicate.evaluate` on models.
@Suite struct PredicateCompilationTests {
    let container: ModelContainer
    let context: ModelContext

    init() throws {
        container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        context = ModelContext(container)
        let destinations = ["Paris", "rome", "Oslo", "Zürich", "Lima", "Paris"]
        for (i, destination) in destinations.enumerated() {
            let trip = Trip(name: "t\(i)", destination: destination, startDate: Date(timeIntervalSince1970: Double(i) * 86_400))
            trip.price = Double(i * 100)
            trip.isFavorite = i % 2 == 0
            trip.notes = i % 3 == 0 ? nil : "note \(i)"
            if i % 2 == 1 { trip.livingAccommodation = LivingAccommodation(address: "\(i) Road", placeName: "Inn \(i)") }
            trip.bucketList = (0..<i).map { BucketListItem(title: "item \($0)", isInPlan: $0 % 2 == 0) }
            context.insert(trip)
        }
        try context.save()
    }

    private func check(_ predicate: Predicate<Trip>, native: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try expectSameAsEvaluate(predicate, in: context, sortedBy: \.name, native: native, sourceLocation: sourceLocation)
    }

    @Test func comparisonsAndConnectives() throws {
        try check(#Predicate { $0.price > 150 && $0.isFavorite })
        try check(#Predicate { $0.price <= 100 || !$0.isFavorite })
        try check(#Predicate { $0.destination != "Paris" })
        let since = Date(timeIntervalSince1970: 2 * 86_400)
        try check(#Predicate { $0.startDate >= since })
        try check(#Predicate { $0.isFavorite == false })
    }

    @Test func optionalsAndNil() throws {
        try check(#Predicate { $0.notes == nil })
        try check(#Predicate { $0.notes != nil })
        try check(#Predicate { ($0.notes ?? "") == "note 1" })
        try check(#Predicate { $0.notes?.contains("2") == true })
        try check(#Predicate { $0.livingAccommodation?.placeName == "Inn 3" })
        try check(#Predicate { $0.livingAccommodation == nil })
    }

    @Test func stringsAndArithmetic() throws {
        try check(#Predicate { $0.destination.contains("ar") })
        try check(#Predicate { $0.destination.starts(with: "P") })
        try check(#Predicate { $0.destination.localizedStandardContains("ZUR") })
        try check(#Predicate { $0.destination.localizedLowercase == "rome" })
        try check(#Predicate { $0.price * 2 > 500 })
        try check(#Predicate { $0.price + 50 == 150 })
        try check(#Predicate { $0.name.count == 2 })
    }

    @Test func collectionsAndRelationships() throws {
        try check(#Predicate { $0.bucketList.count > 2 })
        try check(#Predicate { $0.bucketList.isEmpty })
        try check(#Predicate { !$0.bucketList.isEmpty })
        try check(#Predicate { $0.bucketList.isEmpty == false })
        try check(#Predicate { $0.bucketList.contains { $0.title == "item 3" } })
        try check(#Predicate { $0.bucketList.allSatisfy { $0.isInPlan } })
        try check(#Predicate { $0.bucketList.filter { $0.isInPlan }.count == 2 })
        let wanted = ["Oslo", "Lima"]
        try check(#Predicate { wanted.contains($0.destination) })
    }

    @Test func rangesAndConditionals() throws {
        try check(#Predicate { (100.0...300.0).contains($0.price) })
        let range = 100.0..<300.0
        try check(#Predicate { range.contains($0.price) })
        try check(#Predicate { ($0.isFavorite ? $0.price : 0) > 100 })
    }

    @Test func uniqueKeyUsesTheIndex() throws {
        let explanation = try context.explain(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "t3" }))
        #expect(explanation.accessPath == .uniqueIndex(["name"]))
        #expect(explanation.filtering == .exactKey)
        #expect(explanation.rowsExamined == 1)
        #expect(explanation.resultCount == 1)
        let both = try context.explain(FetchDescriptor<Trip>(predicate: #Predicate { $0.isFavorite && $0.name == "t3" }))
        #expect(both.accessPath == .uniqueIndex(["name"]))
        #expect(both.filtering == .native)
        #expect(both.resultCount == 0)
    }

    /// A lookup the key answers alone still leaves out models deleted or changed in
    /// the context, and finds a changed model by its unsaved key.
    @Test func anExactKeyLookupSeesUnsavedChanges() throws {
        func names(_ key: String) throws -> [String] {
            try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == key })).map(\.name)
        }
        #expect(try context.explain(FetchDescriptor<Trip>(predicate: #Predicate { "t2" == $0.name })).filtering == .exactKey)
        #expect(try names("t2") == ["t2"])
        #expect(try names("nobody").isEmpty)
        let t2 = try #require(try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "t2" })).first)
        t2.name = "renamed"
        #expect(try names("t2").isEmpty)
        #expect(try names("renamed") == ["renamed"])
        let t4 = try #require(try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "t4" })).first)
        context.delete(t4)
        #expect(try names("t4").isEmpty)
        context.rollback()
        #expect(try names("t2") == ["t2"])
        #expect(try names("t4") == ["t4"])
        // A found model is a fault until used, then reads its stored values.
        let t5 = try #require(try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "t5" })).first)
        #expect(t5.destination == "Paris")
        #expect(t5.price == 500)
    }

    /// Compiled predicates are cached by shape; predicates of one expression type that
    /// differ in key paths, operators or captured values must not share an answer.
    @Test func cachedShapesKeepKeyPathsOperatorsAndValuesApart() throws {
        func names(_ predicate: Predicate<Trip>) throws -> [String] {
            try context.fetch(FetchDescriptor(predicate: predicate, sortBy: [SortDescriptor(\.name)])).map(\.name)
        }
        for _ in 0..<2 {
            for (value, expected) in [("Paris", ["t0", "t5"]), ("Lima", ["t4"])] {
                #expect(try names(#Predicate { $0.destination == value }) == expected)
            }
            let t4 = "t4"
            #expect(try names(#Predicate { $0.name == t4 }) == ["t4"])
            #expect(try names(#Predicate { $0.destination == t4 }) == [])
            let limit = 200.0
            #expect(try names(#Predicate { $0.price < limit }) == ["t0", "t1"])
            #expect(try names(#Predicate { $0.price > limit }) == ["t3", "t4", "t5"])
        }
    }

    @Test func transientKeyPathsAreRejected() throws {
        #expect(throws: SwiftDataError.unsupportedKeyPath) {
            try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.isSelected }))
        }
        // Also beside a node the compiler does not know (a dictionary subscript), on
        // either side: the fallback would read the transient property's default value.
        let container = try ModelContainer(for: ScoredEntry.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let scored = ModelContext(container)
        scored.insert(ScoredEntry(name: "a", scores: ["a": 1]))
        try scored.save()
        #expect(throws: SwiftDataError.unsupportedKeyPath) {
            try scored.fetch(FetchDescriptor<ScoredEntry>(predicate: #Predicate { $0.isPicked || $0.scores["a"] == 1 }))
        }
        #expect(throws: SwiftDataError.unsupportedKeyPath) {
            try scored.fetch(FetchDescriptor<ScoredEntry>(predicate: #Predicate { $0.scores["a"] == 1 && !$0.isPicked }))
        }
        // Without the transient property, the same node falls back to models, and
        // `explain` names that node, not the whole predicate.
        let explanation = try scored.explain(
            FetchDescriptor<ScoredEntry>(predicate: #Predicate { $0.name == "a" && $0.scores["a"] == 1 }))
        guard case let .fallback(reason) = explanation.filtering else {
            Issue.record("expected a fallback, got \(explanation.filtering)")
            return
        }
        #expect(reason.contains("DictionaryKeySubscript<") && !reason.contains("Conjunction"), "\(reason)")
        #expect(explanation.resultCount == 1)
    }
}

/// A model with a transient property and a dictionary attribute (whose subscript
/// predicates are evaluated on models).
@Model
final class ScoredEntry {
    var name: String
    var scores: [String: Double]
    @Transient var isPicked: Bool = false

    init(name: String, scores: [String: Double]) {
        self.name = name
        self.scores = scores
    }
}
