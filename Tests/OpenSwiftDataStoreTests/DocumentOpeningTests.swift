import Foundation
import OpenSwiftDataStore
import Testing

/// Opening in two phases (#40, point 6): the engine reads the document as stored and
/// writes nothing; the caller migrates; `finish` writes the result.
@Suite struct DocumentOpeningTests {
    let folder: TemporaryFolder
    init() throws { folder = try TemporaryFolder() }

    /// A document after fixture saves 1…3, with `junk` appended as a torn tail.
    func document(_ name: String, junk: [UInt8] = []) throws -> String {
        let path = folder.path(name)
        do {
            let store = try DocumentFixture.openStore(path)
            for k in 1...3 { try DocumentFixture.save(k, in: store) }
        }
        if !junk.isEmpty {
            let handle = try #require(FileHandle(forWritingAtPath: path))
            handle.seekToEndOfFile()
            handle.write(Data(junk))
            try handle.close()
        }
        return path
    }

    @Test func anOpeningDroppedBeforeFinishChangesNothingAndReleasesTheLock() throws {
        defer { folder.remove() }
        let path = try document("dropped.store", junk: [UInt8](repeating: 0xAB, count: 40))
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        do {
            let opening = try Document.Opening.read(path: path, schema: DocumentFixture.schema, asStored: true)
            #expect(DocumentFixture.rows(of: opening.contents.version) == (try DocumentFixture.expectedRows(after: 3)))
            #expect(opening.contents.tornTail != nil)
            // While it is held, no other writer opens the document.
            // (A sharing writer would wait for it; one that wants the file alone is told at once.)
            #expect(throws: DocumentError.locked(path: path)) {
                _ = try Document.open(path: path, schema: DocumentFixture.schema, exclusive: true)
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        // Released: a writer opens it, and only now is the torn tail cut.
        let store = try DocumentFixture.openStore(path)
        #expect(DocumentFixture.rows(of: store.current) == (try DocumentFixture.expectedRows(after: 3)))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).count == before.count - 40)
    }

    @Test func finishWritesTheCallersMigrationAndRecordsItsVersion() throws {
        defer { folder.remove() }
        let path = try document("migrated.store")
        // The application's schema: Box gains an optional `color`.
        var entities = DocumentFixture.schema.entities
        entities[1].attributes.append(AttributeDescription(name: "color", type: .string, isOptional: true))
        let application = StoreSchema(entities: entities)
        let opening = try Document.Opening.read(path: path, schema: application, asStored: true)
        // As stored: the document's own schema, and no version recorded.
        #expect(opening.contents.schema == DocumentFixture.schema)
        #expect(opening.contents.schemaVersion == nil)
        let hints = MigrationHints(entities: application.entities.map {
            .init(attributeOriginalNames: $0.attributes.map { _ in nil }, relationshipOriginalNames: $0.relationships.map { _ in nil },
                  defaults: $0.attributes.map { _ in nil })
        })
        let migrated = try SchemaMigration.migrate(opening.contents.version, to: application, hints: hints)
        let (document, version) = try opening.finish(migratedTo: migrated, recording: SchemaVersionStamp(2, 0, 0))
        #expect(version.schema == application)
        #expect(document.schemaVersion == SchemaVersionStamp(2, 0, 0))
        #expect(document.journalFrames == 0)
        document.close()
        let reopened = try DocumentReader.read(path: path, expected: application)
        #expect(reopened.schemaVersion == SchemaVersionStamp(2, 0, 0))
        #expect(reopened.version.tables[0].count == migrated.tables[0].count)
        #expect(reopened.version.tables[1].count == 3)
    }

    @Test func finishWithNothingMigratedWritesOnlyAChangedVersion() throws {
        defer { folder.remove() }
        let path = try document("stamped.store")
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        do {
            let opening = try Document.Opening.read(path: path, schema: DocumentFixture.schema, asStored: true)
            _ = try opening.finish(migratedTo: nil, recording: nil)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        do {
            let opening = try Document.Opening.read(path: path, schema: DocumentFixture.schema, asStored: true)
            _ = try opening.finish(migratedTo: nil, recording: SchemaVersionStamp(1, 1, 0))
        }
        #expect(try DocumentReader.read(path: path).schemaVersion == SchemaVersionStamp(1, 1, 0))
    }

    /// A sharing writer reads without the lock: another writer saves while the opening
    /// is held, and `finish` takes a turn and catches up with that save, and cuts a
    /// torn frame a crashed writer left meanwhile (keeping it beside the document).
    @Test func aSharingOpeningLetsOthersSaveAndCatchesUpAtFinish() throws {
        defer { folder.remove() }
        let path = try document("shared-open.store")
        let opening = try Document.Opening.read(path: path, schema: DocumentFixture.schema)
        #expect(DocumentFixture.rows(of: opening.contents.version) == (try DocumentFixture.expectedRows(after: 3)))
        let other = try DocumentFixture.openStore(path)
        try DocumentFixture.save(4, in: other)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data([UInt8](repeating: 0xCD, count: 30)))
        try handle.close()
        let (document, version) = try opening.finish()
        #expect(document.isShared)
        #expect(DocumentFixture.rows(of: version) == (try DocumentFixture.expectedRows(after: 4)))
        #expect(version.generation == other.current.generation)
        let kept = try FileManager.default.contentsOfDirectory(atPath: folder.path("")).filter { $0.contains(".torn-") }
        #expect(kept.count == 1)
        // Both go on saving into one journal.
        let store = Store(document: document, version: version)
        try DocumentFixture.save(5, in: store)
        try DocumentFixture.save(6, in: other)
        #expect(DocumentFixture.rows(of: try DocumentReader.read(path: path, expected: DocumentFixture.schema).version)
            == (try DocumentFixture.expectedRows(after: 6)))
    }
}
