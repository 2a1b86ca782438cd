import Foundation
import SwiftData
import Testing

@Model
final class Ledger {
    var title: String
    var total: Int

    init(title: String, total: Int) {
        self.title = title
        self.total = total
    }
}

/// Issue #12, point 4: a `PersistentIdentifier` encoded in one process resolves to
/// the same model after the document is opened again.
@Suite struct StableIdentityTests {
    /// Saves two ledgers in a new container on `url` and returns their identifiers,
    /// encoded as a process would keep them; the container ends with the call.
    private func saveLedgers(at url: URL) throws -> Data {
        let container = try ModelContainer(for: Ledger.self, configurations: ModelConfiguration(url: url))
        let context = ModelContext(container)
        let ledgers = [Ledger(title: "rent", total: 900), Ledger(title: "food", total: 310)]
        ledgers.forEach(context.insert)
        try context.save()
        return try JSONEncoder().encode(ledgers.map(\.persistentModelID))
    }

    @Test func anEncodedIdentifierResolvesAfterReopening() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = folder.file("ledgers.store")
        let encoded = try saveLedgers(at: url)

        let ids = try JSONDecoder().decode([PersistentIdentifier].self, from: encoded)
        do {
            let container = try ModelContainer(for: Ledger.self, configurations: ModelConfiguration(url: url))
            let context = ModelContext(container)
            let titles = ids.compactMap { (context.model(for: $0) as? Ledger)?.title }
            #expect(titles == ["rent", "food"])
            let rent = ids[0]
            let fetched = try context.fetch(FetchDescriptor<Ledger>(predicate: #Predicate { $0.persistentModelID == rent }))
            #expect(fetched.map(\.title) == ["rent"])
            #expect(fetched.first?.persistentModelID == rent)
            // Compacting rewrites the file; the identifiers still hold.
            try container.compactDocument()
        }
        let again = ModelContext(try ModelContainer(for: Ledger.self, configurations: ModelConfiguration(url: url)))
        #expect((again.model(for: ids[1]) as? Ledger)?.total == 310)
    }

    @Test func anIdentifierFromAnotherDocumentResolvesToNothing() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let foreign = try JSONDecoder().decode([PersistentIdentifier].self, from: try saveLedgers(at: folder.file("a.store")))
        _ = try saveLedgers(at: folder.file("b.store"))

        let context = ModelContext(try ModelContainer(for: Ledger.self, configurations: ModelConfiguration(url: folder.file("b.store"))))
        let id = foreign[0]
        #expect(try context.fetch(FetchDescriptor<Ledger>(predicate: #Predicate { $0.persistentModelID == id })).isEmpty)
        let local: Ledger? = context.registeredModel(for: id)
        #expect(local == nil)
    }

    @Test func aModelDocumentKeepsIdentifiersAcrossOpensAndSaveAs() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = folder.file("book.ledgers")
        let id: PersistentIdentifier
        do {
            let document = try ModelDocument(for: Ledger.self, contentsOf: url)
            let ledger = Ledger(title: "travel", total: 1200)
            document.mainContext.insert(ledger)
            try document.save()
            id = ledger.persistentModelID
            document.close()
        }
        let reopened = try ModelDocument(for: Ledger.self, contentsOf: url)
        #expect((reopened.mainContext.model(for: id) as? Ledger)?.title == "travel")
        let copy = folder.file("copy.ledgers")
        try reopened.save(as: copy)
        reopened.close()
        let fromCopy = try ModelDocument(for: Ledger.self, contentsOf: copy)
        defer { fromCopy.close() }
        #expect((fromCopy.mainContext.model(for: id) as? Ledger)?.total == 1200)
    }
}
