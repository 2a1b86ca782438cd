import Foundation
import SwiftData
import Testing

@Model
final class Crate {
    var label: String
    var weight: Int
    var shelf: Shelf?

    init(label: String, weight: Int, shelf: Shelf? = nil) {
        self.label = label
        self.weight = weight
        self.shelf = shelf
    }
}

@Model
final class Shelf {
    var name: String
    @Relationship(inverse: \Crate.shelf) var crates: [Crate] = []

    init(name: String) {
        self.name = name
    }
}

/// Issue #12, point 5: `persistentModelID` in predicates runs natively, as a
/// lookup of the identified rows, and answers as `Predicate.evaluate` does.
@Suite struct IdentifierPredicateTests {
    let container: ModelContainer
    let context: ModelContext
    let crates: [PersistentIdentifier]
    let shelves: [PersistentIdentifier]

    init() throws {
        container = try ModelContainer(for: Crate.self, Shelf.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        context = ModelContext(container)
        let shelves = (0..<3).map { Shelf(name: "s\($0)") }
        let crates = (0..<50).map { Crate(label: "c\($0)", weight: $0 % 20, shelf: shelves[$0 % 3]) }
        crates.forEach(context.insert)
        try context.save()
        self.crates = crates.map(\.persistentModelID)
        self.shelves = shelves.map(\.persistentModelID)
    }

    /// The crates the predicate selects, by evaluating it on every model.
    private func reference(_ predicate: Predicate<Crate>) throws -> Set<PersistentIdentifier> {
        Set(try context.fetch(FetchDescriptor<Crate>()).filter { try predicate.evaluate($0) }.map(\.persistentModelID))
    }

    @discardableResult
    private func check(_ predicate: Predicate<Crate>, sourceLocation: SourceLocation = #_sourceLocation) throws -> FetchExplanation {
        let descriptor = FetchDescriptor(predicate: predicate)
        let explanation = try context.explain(descriptor)
        let found = Set(try context.fetch(descriptor).map(\.persistentModelID))
        #expect(found == (try reference(predicate)), "\(explanation)", sourceLocation: sourceLocation)
        #expect(try context.fetchCount(descriptor) == found.count, sourceLocation: sourceLocation)
        return explanation
    }

    @Test func equalityLooksTheModelUp() throws {
        for id in [crates[0], crates[17], crates[49]] {
            let e = try check(#Predicate { $0.persistentModelID == id })
            #expect(e.accessPath == .identifiers(1))
            #expect(e.filtering == .exactKey)
            #expect(e.rowsExamined == 1)
            #expect(e.resultCount == 1)
        }
    }

    @Test func inequalityLeavesOnlyThatModelOut() throws {
        let id = crates[3]
        let e = try check(#Predicate { $0.persistentModelID != id })
        #expect(e.filtering == .native)
        #expect(e.resultCount == 49)
    }

    @Test func aListOfIdentifiersIsALookupPerIdentifier() throws {
        let unsaved = Crate(label: "new", weight: 1)
        context.insert(unsaved)
        let lists: [[PersistentIdentifier]] = [
            [crates[4], crates[9], crates[4], crates[30]],
            [],
            [shelves[0], crates[0]],
            [unsaved.persistentModelID, crates[1]],
        ]
        for ids in lists {
            let e = try check(#Predicate { ids.contains($0.persistentModelID) })
            #expect(e.filtering == .exactKey, "\(e)")
        }
        let set = Set(crates.prefix(5))
        let e = try check(#Predicate { set.contains($0.persistentModelID) })
        #expect(e.accessPath == .identifiers(5))
    }

    @Test func anIdentifierOfAnotherEntityOrAnUnsavedModelMatchesNoStoredRow() throws {
        // Shelf #1 and Crate #1 share a row number; they are different models.
        let shelf = shelves[0]
        #expect(try check(#Predicate { $0.persistentModelID == shelf }).resultCount == 0)
        #expect(try check(#Predicate { $0.persistentModelID != shelf }).resultCount == 50)
        let unsaved = Crate(label: "new", weight: 1)
        context.insert(unsaved)
        let temporary = unsaved.persistentModelID
        #expect(try check(#Predicate { $0.persistentModelID == temporary }).resultCount == 1)
    }

    @Test func identifiersCombineWithOtherTerms() throws {
        let id = crates[12]
        let heavy = try check(#Predicate { $0.persistentModelID == id && $0.weight > 10 })
        #expect(heavy.accessPath == .identifiers(1))
        #expect(heavy.filtering == .native)
        #expect(heavy.resultCount == 1)
        #expect(try check(#Predicate { $0.persistentModelID == id && $0.weight < 10 }).resultCount == 0)
        #expect(try check(#Predicate { $0.persistentModelID == id || $0.label == "c1" }).resultCount == 2)
    }

    @Test func relatedModelsAreComparedByIdentifier() throws {
        let shelf = shelves[1]
        let e = try check(#Predicate { $0.shelf?.persistentModelID == shelf })
        #expect(e.resultCount == 17)
        #expect(e.filtering == .native, "\(e)")
        let crate = crates[0]
        #expect(try check(#Predicate { $0.shelf?.persistentModelID == crate }).resultCount == 0)
    }

    @Test func unsavedChangesTakePart() throws {
        let models = try context.fetch(FetchDescriptor<Crate>(predicate: #Predicate { $0.weight == 2 }))
        context.delete(models[0])
        models[1].weight = 99
        for id in [models[0].persistentModelID, models[1].persistentModelID] {
            let e = try check(#Predicate { $0.persistentModelID == id && $0.weight == 99 })
            #expect(e.resultCount == (id == models[1].persistentModelID ? 1 : 0))
        }
        let deleted = models[0].persistentModelID
        #expect(try check(#Predicate { $0.persistentModelID == deleted }).resultCount == 0)
    }

    @Test func identifiersFromAnotherContextResolve() throws {
        let other = ModelContext(container)
        let id = crates[22]
        let found = try other.fetch(FetchDescriptor<Crate>(predicate: #Predicate { $0.persistentModelID == id }))
        #expect(found.map(\.label) == ["c22"])
    }
}
