import Foundation
@_spi(DataStores) import OpenSwiftData
import SwiftData
import Testing

@Model
final class Archive {
    var title: String
    var shelfMark: Int
    var note: String?
    @Relationship(inverse: \Folio.archive) var folios: [Folio] = []

    init(title: String, shelfMark: Int) {
        self.title = title
        self.shelfMark = shelfMark
    }
}

@Model
final class Folio {
    var page: Int
    var archive: Archive?

    init(page: Int) {
        self.page = page
    }
}

/// A fetched snapshot in order form (`DefaultSnapshot(persistentIdentifier:names:orderedEntries:)`),
/// its names in the model's declared order (attributes, then relationships: the
/// layout's) or reversed.
private func ordered(_ snapshot: DefaultSnapshot, reversed: Bool) -> DefaultSnapshot {
    let declared = snapshot.persistentIdentifier.entityName == "Archive" ? ["title", "shelfMark", "note", "folios"] : ["page", "archive"]
    let names = reversed ? Array(declared.reversed()) : declared
    return DefaultSnapshot(persistentIdentifier: snapshot.persistentIdentifier, names: names, orderedEntries: names.map { snapshot.entries[$0]! })
}

/// Snapshots a store makes in column order (as PostgresStore's fetches do) read into
/// the same models as snapshots by name, and behave as them everywhere else.
@Suite struct OrderedSnapshotTests {
    /// A container over `ForwardingStore` handing back ordered snapshots.
    private func container(reversed: Bool) throws -> ModelContainer {
        let schema = Schema([Archive.self, Folio.self])
        let configuration = ForwardingStoreConfiguration(
            name: "ordered-\(UUID())", inner: ModelConfiguration(schema: schema, isStoredInMemoryOnly: true),
            reshape: { ordered($0, reversed: reversed) })
        configuration.schema = schema
        return try ModelContainer(for: schema, configurations: [configuration])
    }

    /// In the layout's order the context reads by position; reversed, the names do
    /// not match and it reads by name: the same models either way.
    @Test(arguments: [false, true])
    func fetchedModelsHoldTheStoredValues(reversed: Bool) throws {
        let container = try container(reversed: reversed)
        do {
            let context = ModelContext(container)
            for i in 0..<5 {
                let archive = Archive(title: "A\(i)", shelfMark: i * 10)
                archive.note = i % 2 == 0 ? nil : "odd \(i)"
                context.insert(archive)
                archive.folios = (0..<i).map { Folio(page: $0) }
            }
            try context.save()
        }
        let context = ModelContext(container)
        let archives = try context.fetch(FetchDescriptor<Archive>(sortBy: [SortDescriptor(\.title)]))
        #expect(archives.map(\.title) == (0..<5).map { "A\($0)" })
        #expect(archives.map(\.shelfMark) == (0..<5).map { $0 * 10 })
        #expect(archives.map(\.note) == (0..<5).map { $0 % 2 == 0 ? nil : "odd \($0)" })
        #expect(archives.map { $0.folios.map(\.page).sorted() } == (0..<5).map { Array(0..<$0) })
        let folios = try context.fetch(FetchDescriptor<Folio>())
        #expect(folios.count == 10)
        #expect(folios.allSatisfy { folio in folio.archive?.folios.contains { $0 === folio } ?? false })
        // A refetch after a change elsewhere replaces the model's values.
        let other = ModelContext(container)
        let first = try #require(try other.fetch(FetchDescriptor<Archive>(predicate: #Predicate { $0.title == "A1" })).first)
        first.shelfMark = 11
        try other.save()
        _ = try context.fetch(FetchDescriptor<Archive>())
        #expect(archives[1].shelfMark == 11)
    }

    /// Equality, coding, copies and `value(forKey:)` see the entries, not their form.
    @Test func anOrderedSnapshotIsTheSameSnapshotByName() throws {
        let id = try PersistentIdentifier.identifier(for: "store", entityName: "Archive", primaryKey: 7)
        let folio = try PersistentIdentifier.identifier(for: "store", entityName: "Folio", primaryKey: 3)
        let names = ["title", "shelfMark", "note", "folios"]
        let entries: [DefaultSnapshot.Entry] = [.value(.string("Ledger")), .value(.int(40)), .value(.null), .toMany([folio])]
        let ordered = DefaultSnapshot(persistentIdentifier: id, names: names, orderedEntries: entries)
        let named = DefaultSnapshot(persistentIdentifier: id, entries: Dictionary(uniqueKeysWithValues: zip(names, entries)))
        #expect(ordered == named)
        #expect(ordered.entries == named.entries)
        #expect(ordered.value(forKey: "title", as: String.self) == "Ledger")
        #expect(ordered.value(forKey: "shelfMark", as: Int.self) == 40)
        #expect(ordered.value(forKey: "note", as: String.self) == nil)
        #expect(ordered.value(forKey: "folios", as: [PersistentIdentifier].self) == [folio])
        #expect(ordered.propertyNames == names.sorted())
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let coded = try encoder.encode(ordered)
        #expect(coded == (try encoder.encode(named)))
        #expect(try JSONDecoder().decode(DefaultSnapshot.self, from: coded) == named)
        let other = try PersistentIdentifier.identifier(for: "store", entityName: "Archive", primaryKey: 8)
        #expect(ordered.copy(persistentIdentifier: other, remappedIdentifiers: nil).persistentIdentifier == other)
        #expect(ordered.copy(persistentIdentifier: other, remappedIdentifiers: nil).entries == named.entries)
        let moved = try PersistentIdentifier.identifier(for: "store", entityName: "Folio", primaryKey: 9)
        #expect(ordered.copy(persistentIdentifier: id, remappedIdentifiers: [folio: moved]).entries["folios"] == .toMany([moved]))
        var edited = ordered
        edited.entries["title"] = .value(.string("Log"))
        #expect(edited.value(forKey: "title", as: String.self) == "Log")
        #expect(edited.value(forKey: "shelfMark", as: Int.self) == 40)
    }

    /// `RowIdentifiers` makes the identifiers `identifier(for:entityName:primaryKey:)`
    /// makes, negative keys (text keys there) included.
    @Test func rowIdentifiersAreTheIdentifiersOfTheirKeys() throws {
        let rows = try RowIdentifiers(storeIdentifier: "store", entityName: "Archive")
        for key: Int64 in [0, 7, 1 << 40, -3] {
            let made = try rows.identifier(key)
            let expected = try PersistentIdentifier.identifier(for: "store", entityName: "Archive", primaryKey: key)
            #expect(made == expected)
            #expect(made.hashValue == expected.hashValue)
            #expect(made.entityName == "Archive" && made.storeIdentifier == "store")
        }
        #expect(try rows.identifier(7) != (try PersistentIdentifier.identifier(for: "store", entityName: "Folio", primaryKey: 7)))
        #expect(throws: DataStoreError.unsupportedFeature) { try RowIdentifiers(storeIdentifier: "", entityName: "Archive") }
    }
}
