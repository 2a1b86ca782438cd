import Foundation
import SwiftData
import Testing

@Model
final class Berth {
    #Index<Berth>([\.length], [\.dock, \.length])
    @Attribute(.unique) var tag: String?
    var dock: String
    var length: Double

    init(tag: String?, dock: String, length: Double) {
        self.tag = tag
        self.dock = dock
        self.length = length
    }
}

/// A predicate rebuilt with new values reuses the plan made for its shape and
/// binds the values: each binding must still answer as the reference does, also
/// for values the plan was not made with (nil keys, NaN bounds, lists of any size).
@Suite struct PlanReuseTests {
    let context: ModelContext

    init() throws {
        let container = try ModelContainer(for: Berth.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        context = ModelContext(container)
        for i in 0..<200 {
            // Every tenth berth has no tag; lengths repeat, with a NaN (at a dock of its
            // own: sorting NaN has no reference order) and an infinity.
            let length: Double = i == 13 ? .nan : i == 14 ? .infinity : Double(i % 25)
            context.insert(Berth(tag: i % 10 == 0 ? nil : "b\(i)", dock: i == 13 ? "N" : ["A", "B", "C"][i % 3], length: length))
        }
        try context.save()
    }

    /// The berths the predicate selects, by evaluating it on every model.
    private func reference(_ descriptor: FetchDescriptor<Berth>) throws -> [PersistentIdentifier] {
        try referenceFetch(descriptor, in: context).map(\.persistentModelID)
    }

    @discardableResult
    private func check(_ descriptor: FetchDescriptor<Berth>, sourceLocation: SourceLocation = #_sourceLocation) throws -> FetchExplanation {
        let explanation = try context.explain(descriptor)
        let found: [PersistentIdentifier] = try context.fetch(descriptor).map(\.persistentModelID)
        let expected = try reference(descriptor)
        if descriptor.sortBy.isEmpty {
            #expect(Set(found) == Set(expected), "\(explanation)", sourceLocation: sourceLocation)
        } else {
            #expect(found == expected, "\(explanation)", sourceLocation: sourceLocation)
        }
        return explanation
    }

    @Test func aKeyLookupInALoopBindsEachValueIncludingNil() throws {
        let tags: [String?] = ["b1", nil, "b7", "missing", nil, "b199"]
        for tag in tags {
            let e = try check(FetchDescriptor(predicate: #Predicate { $0.tag == tag }))
            if tag == nil {
                // nil is no key of a unique constraint: the nil tags are found another way.
                #expect(e.accessPath != .uniqueIndex(["tag"]))
                #expect(e.resultCount == 20)
            } else {
                #expect(e.accessPath == .uniqueIndex(["tag"]))
                #expect(e.filtering == .exactKey)
            }
        }
    }

    @Test func aRangeInALoopIsExactOnlyForValuesThatAllowIt() throws {
        let bounds: [(Double, Double)] = [(3, 9), (.nan, 9), (20, .infinity), (-.infinity, .nan), (5, 5), (24, 3)]
        for (low, high) in bounds {
            let e = try check(FetchDescriptor(predicate: #Predicate { $0.length >= low && $0.length < high }))
            #expect(e.accessPath == .index(["length"], .range))
            let allowsExact = !low.isNaN && !high.isNaN
            #expect(e.filtering == (allowsExact ? .exactKey : .native), "\(low)..<\(high): \(e)")
        }
    }

    @Test func anInListInALoopTakesListsOfAnySize() throws {
        let lists: [[Double]] = [[2], [], [4, 2, 4, 11], [.nan], [99], Array(stride(from: 0, to: 25, by: 2))]
        for list in lists {
            let e = try check(FetchDescriptor(predicate: #Predicate { list.contains($0.length) }))
            #expect(e.accessPath == .index(["length"], .inList(Set(list.map { $0.isNaN ? -1 : $0 }).count)), "\(list): \(e)")
        }
    }

    @Test func onePredicateShapeServesSeveralSortsAndLimits() throws {
        for dock in ["A", "C", "B"] {
            let unsorted = try check(FetchDescriptor(predicate: #Predicate { $0.dock == dock }))
            #expect(unsorted.accessPath == .index(["dock", "length"], .equality))
            #expect(!unsorted.sortedByIndex)

            var top = FetchDescriptor(predicate: #Predicate<Berth> { $0.dock == dock }, sortBy: [SortDescriptor(\.length, order: .reverse)])
            top.fetchLimit = 4
            let e = try check(top)
            #expect(e.sortedByIndex)
            #expect(e.resultCount == 4)
        }
    }

    @Test func pendingChangesStillTakePartWhenThePlanIsReused() throws {
        let first = try context.fetch(FetchDescriptor<Berth>(predicate: #Predicate { $0.tag == "b3" }))
        #expect(first.count == 1)
        first[0].tag = "renamed"
        context.insert(Berth(tag: "new", dock: "A", length: 1))
        for tag in ["b3", "renamed", "new"] {
            let e = try check(FetchDescriptor(predicate: #Predicate { $0.tag == tag }))
            #expect(e.resultCount == (tag == "b3" ? 0 : 1), "\(tag): \(e)")
        }
    }
}
