import Foundation
import OpenSwiftDataStore
import Testing

/// Several documents holding one store (`DocumentGroup`): each keeps its own
/// entities, saves are split between them and joined again when they open.
@Suite struct DocumentGroupTests {
    let folder: TemporaryFolder
    init() throws { folder = try TemporaryFolder() }

    /// The fixture's items and boxes, and notes kept in a document of their own.
    static let schema = StoreSchema(entities: DocumentFixture.schema.entities + [
        EntityDescription(
            name: "Note",
            attributes: [AttributeDescription(name: "text", type: .string, isOptional: false)],
            relationships: []),
    ])
    static let note = 2

    var members: [DocumentGroup.Member] {
        [
            DocumentGroup.Member(path: folder.path("items.store"), entityNames: ["Item", "Box"], readOnly: false, durability: .full),
            DocumentGroup.Member(path: folder.path("notes.store"), entityNames: ["Note"], readOnly: false, durability: .full),
        ]
    }

    /// Hints that change nothing, as a container passes them: with them a file's
    /// unknown entities are carried rather than refused.
    static let hints = MigrationHints(entities: schema.entities.map { entity in
        MigrationHints.Entity(
            attributeOriginalNames: entity.attributes.map { _ in nil }, relationshipOriginalNames: entity.relationships.map { _ in nil },
            defaults: entity.attributes.map { _ in nil })
    })

    func openStore() throws -> Store {
        let (group, version) = try DocumentGroup.open(members, schema: Self.schema, migrating: Self.hints)
        return Store(document: group, version: version)
    }

    static func addNote(_ text: String, in store: Store) throws {
        var changes = ChangeSet()
        changes.inserts.append(.init(entity: note, temporaryID: RowID(-1), row: [.string(text)]))
        _ = try store.commit(changes)
    }

    /// Saves 1…6 of the fixture with a note after every second, and one save
    /// writing both documents: generations skip in each document.
    static func history(in store: Store) throws {
        for k in 1...6 {
            try DocumentFixture.save(k, in: store)
            if k % 2 == 0 { try addNote("note \(k)", in: store) }
        }
        var both = ChangeSet()
        both.inserts.append(.init(entity: note, temporaryID: RowID(-1), row: [.string("both")]))
        both.updates.append(.init(entity: 1, id: RowID(1), values: [0: .string("relabelled")]))
        _ = try store.commit(both)
    }

    @Test func savesAreSplitBetweenTheDocumentsAndJoinedWhenTheyOpen() throws {
        defer { folder.remove() }
        let expected: [[RowID: Row]]
        let generation: UInt64
        do {
            let store = try openStore()
            try Self.history(in: store)
            expected = DocumentFixture.rows(of: store.current)
            generation = store.current.generation
            #expect(generation == 10)
        }
        let reopened = try openStore()
        #expect(DocumentFixture.rows(of: reopened.current) == expected)
        #expect(reopened.current.generation == generation)
        reopened.current._checkInvariants()
        // One transaction per save, the one that wrote both documents whole again.
        var generations: [UInt64] = []
        var last: StoredTransaction?
        reopened.current.history.forEach(after: nil) { generations.append($0.generation); last = $0; return true }
        #expect(generations == Array(1...10))
        #expect(Set(last?.changes.map(\.entity) ?? []) == [1, Self.note])
        // Each document reads alone, as format 4.1, its generations skipping.
        let items = try DocumentReader.read(path: members[0].path)
        #expect(items.schema.entities.map(\.name) == ["Item", "Box"])
        #expect(items.formatMinor == 1)
        #expect(items.version.generation == 10)
        #expect(items.journalFrames == 7)
        let notes = try DocumentReader.read(path: members[1].path)
        #expect(notes.schema.entities.map(\.name) == ["Note"])
        #expect(notes.version.tables[0].count == 4)
        #expect(notes.journalFrames == 4)
    }

    @Test func compactionKeepsEachDocumentsPartAndItsHistory() throws {
        defer { folder.remove() }
        let expected: [[RowID: Row]]
        do {
            let store = try openStore()
            try Self.history(in: store)
            try store.compact()
            try Self.addNote("after", in: store)
            expected = DocumentFixture.rows(of: store.current)
        }
        let reopened = try openStore()
        #expect(DocumentFixture.rows(of: reopened.current) == expected)
        #expect(reopened.current.history.count == 11)
        reopened.current._checkInvariants()
        let notes = try DocumentReader.read(path: members[1].path)
        #expect(notes.snapshotGeneration == 10)
        #expect(notes.version.history.count == 5)
    }

    @Test func aSaveOneDocumentCannotRecordIsCutOffTheOthers() throws {
        defer { folder.remove() }
        let before: [[RowID: Row]]
        do {
            let store = try openStore()
            try Self.history(in: store)
            before = DocumentFixture.rows(of: store.current)
            let group = try #require(store.persistence as? DocumentGroup)
            let itemsLength = try FileManager.default.attributesOfItem(atPath: members[0].path)[.size] as? Int
            group.documents[1].close()
            var both = ChangeSet()
            both.updates.append(.init(entity: 1, id: RowID(2), values: [0: .string("lost")]))
            both.inserts.append(.init(entity: Self.note, temporaryID: RowID(-1), row: [.string("lost")]))
            #expect(throws: StoreError.document(.closed(path: members[1].path))) { try store.commit(both) }
            #expect(DocumentFixture.rows(of: store.current) == before)
            #expect(try FileManager.default.attributesOfItem(atPath: members[0].path)[.size] as? Int == itemsLength)
            // The other document goes on taking saves of its own.
            try DocumentFixture.save(7, in: store)
        }
        let reopened = try openStore()
        #expect(reopened.current.row(RowID(2), of: 1)?[0] == .string("box-2"))
        #expect(reopened.current.tables[Self.note].count == 4)
        #expect(reopened.current.generation == 11)
    }

    @Test func aMissingFrameInADocumentWithSkippingGenerationsIsDamage() throws {
        defer { folder.remove() }
        do { try Self.history(in: try openStore()) }
        // Cut the second of the notes document's four frames out.
        let path = members[1].path
        let frames = try DocumentReader.read(path: path).frames.filter { $0.kind == .commit }
        #expect(frames.count == 4)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes.removeSubrange(frames[1].offset..<(frames[1].offset + frames[1].length))
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect {
            try DocumentReader.read(path: path)
        } throws: { error in
            guard case .damaged = error as? DocumentError else { return false }
            return true
        }
        #expect(throws: DocumentError.self) { try openStore() }
        // Salvage reads the rest and says where saves went missing.
        let salvaged = try DocumentReader.read(path: path, salvaging: true)
        #expect(salvaged.version.tables[0].count == 3)
        #expect(salvaged.lost.count == 1)
    }

    @Test func aFileStoringAnEntityAnotherDocumentKeepsIsRefusedUntouched() throws {
        defer { folder.remove() }
        // Notes written into the items file by a single document.
        do {
            let store = try DocumentFixture.openStore(members[0].path, schema: Self.schema)
            try Self.addNote("misplaced", in: store)
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: members[0].path))
        #expect {
            try openStore()
        } throws: { error in
            guard case let .schemaMismatch(_, reason) = error as? DocumentError else { return false }
            return reason.contains("Note") && reason.contains("notes.store")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: members[0].path)) == before)
    }

    @Test func historyDeletedAroundAKeptTransactionKeepsItAfterReopening() throws {
        defer { folder.remove() }
        do {
            let store = try openStore()
            try Self.history(in: store)
            // Generations 3 and 6 are notes only; 4 (a fixture save) stays between them.
            try store.deleteHistory([3, 6])
        }
        var generations: [UInt64] = []
        try openStore().current.history.forEach(after: nil) { generations.append($0.generation); return true }
        #expect(generations == [1, 2, 4, 5, 7, 8, 9, 10])
    }

    @Test func aSaveOfEntitiesKeptInMemoryOnlyKeepsItsGeneration() throws {
        defer { folder.remove() }
        // Notes kept in memory only: the items file is the group's only file.
        let members = [self.members[0]]
        do {
            let (group, version) = try DocumentGroup.open(members, schema: Self.schema, migrating: Self.hints)
            let store = Store(document: group, version: version)
            try DocumentFixture.save(1, in: store)
            try Self.addNote("in memory", in: store)
            #expect(store.current.generation == 2)
        }
        let (_, version) = try DocumentGroup.open(members, schema: Self.schema, migrating: Self.hints)
        #expect(version.generation == 2)
        #expect(version.tables[Self.note].count == 0)
    }

    @Test func aSingleDocumentStaysFormat4_0() throws {
        defer { folder.remove() }
        let path = folder.path("single.store")
        do { try DocumentFixture.save(1, in: try DocumentFixture.openStore(path)) }
        #expect(try DocumentReader.read(path: path).formatMinor == 0)
    }
}
