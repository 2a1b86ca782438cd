import Foundation
import OpenSwiftDataStore
import Testing

/// Documents through the engine: snapshot, journal, replay, compaction, locks.
@Suite struct DocumentJournalTests {
    let folder: TemporaryFolder
    init() throws { folder = try TemporaryFolder() }

    func openStore(_ path: String) throws -> Store { try DocumentFixture.openStore(path) }

    @Test func everyValueKindSurvivesSaveAndReopen() throws {
        defer { folder.remove() }
        let path = folder.path("values.store")
        do {
            let store = try openStore(path)
            for k in 1...6 { try DocumentFixture.save(k, in: store) }
        }
        let reopened = try openStore(path)
        #expect(DocumentFixture.rows(of: reopened.current) == (try DocumentFixture.expectedRows(after: 6)))
        #expect(reopened.current.generation == 6)
        // Indexes are rebuilt: the unique key and the ordered index find rows.
        #expect(reopened.current.lookup(unique: [.string("item-6")], constraint: 0, of: 0) != nil)
        #expect(reopened.current.orderedIndexes[0][0].count == reopened.current.tables[0].count)
        reopened.current._checkInvariants()
    }

    /// Every ordered index as (key, row) pairs in order.
    static func indexContents(_ version: StoreVersion) -> [[[String]]] {
        version.orderedIndexes.map { indexes in
            indexes.map { index in
                var entries: [String] = []
                index.scan { entry in
                    entries.append("\(entry.key) \(entry.row)")
                    return true
                }
                return entries
            }
        }
    }

    @Test func indexesReadBackFromTheStoredOrderAndTheJournalMatchTheLiveOnes() throws {
        defer { folder.remove() }
        let path = folder.path("indexes.store")
        let live = try openStore(path)
        for k in 1...5 { try DocumentFixture.save(k, in: live) }
        try live.compact() // the snapshot now stores each index's order
        for k in 6...9 { try DocumentFixture.save(k, in: live) } // the journal updates and deletes indexed rows
        let expected = Self.indexContents(live.current)
        live.document?.close()
        let reopened = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(reopened.frames.filter { $0.kind == .indexOrder }.count == 2)
        #expect(Self.indexContents(reopened.version) == expected)
        #expect(expected[0][1].count == reopened.version.tables[0].count)
    }

    /// The reader takes the file a frame at a time through a 1 MiB window (a larger
    /// frame on its own): frames larger than half of it, and a journal of small frames
    /// running across several windows, read back as written, as does a salvaging read
    /// (which takes the file whole).
    @Test func documentsLargerThanTheReadWindowReadBackFrameByFrame() throws {
        defer { folder.remove() }
        let path = folder.path("large.store")
        let (document, version) = try Document.open(path: path, schema: DocumentFixture.schema, durability: .deferred)
        let store = Store(document: document, version: version)
        var generator = UInt64(42)
        /// Hex digits of a SplitMix64 stream: text zstd cannot shrink much below half.
        func noise(_ count: Int) -> String {
            let digits = Array("0123456789abcdef".utf8)
            var bytes: [UInt8] = []
            bytes.reserveCapacity(count)
            while bytes.count < count {
                generator &+= 0x9E37_79B9_7F4A_7C15
                var z = generator
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                for shift in stride(from: 0, to: 64, by: 4) { bytes.append(digits[Int((z >> UInt64(shift)) & 15)]) }
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        var changes = ChangeSet()
        for n in 1...600 {
            var row = DocumentFixture.item(n)
            row[9] = .array([.string(noise(4_000))])
            changes.inserts.append(.init(entity: 0, temporaryID: RowID(Int64(-n)), row: row))
        }
        _ = try store.commit(changes)
        try store.compact()
        for k in 1...150 {
            var update = ChangeSet()
            update.updates.append(.init(entity: 0, id: RowID(Int64(k)), values: [9: .array([.string(noise(16_000))])]))
            _ = try store.commit(update)
        }
        let expected = DocumentFixture.rows(of: store.current)
        let indexes = Self.indexContents(store.current)
        store.document?.close()

        let contents = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(contents.snapshotLength > 1 << 20 && contents.journalLength > 1 << 20)
        #expect(contents.frames.contains { $0.length > 1 << 19 })
        #expect(contents.journalFrames == 150)
        #expect(DocumentFixture.rows(of: contents.version) == expected)
        #expect(Self.indexContents(contents.version) == indexes)
        let salvaged = try DocumentReader.read(path: path, salvaging: true)
        #expect(salvaged.lost.isEmpty)
        #expect(DocumentFixture.rows(of: salvaged.version) == expected)
        let reopened = try openStore(path)
        #expect(DocumentFixture.rows(of: reopened.current) == expected)
        reopened.current._checkInvariants()
    }

    @Test func eachSaveAppendsOneFrameWithoutRewritingTheFile() throws {
        defer { folder.remove() }
        let path = folder.path("append.store")
        let store = try openStore(path)
        for k in 1...3 { try DocumentFixture.save(k, in: store) }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        try DocumentFixture.save(4, in: store)
        let after = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(after.count > before.count)
        #expect(after.prefix(before.count) == before)
        #expect(store.document?.journalFrames == 4)
    }

    @Test func identifiersContinueAfterReopen() throws {
        defer { folder.remove() }
        let path = folder.path("ids.store")
        do {
            let store = try openStore(path)
            for k in 1...4 { try DocumentFixture.save(k, in: store) }
        }
        let store = try openStore(path)
        let next = store.current.tables[0].nextRawID
        try DocumentFixture.save(5, in: store)
        #expect(store.current.tables[0][RowID(next)] != nil)
        #expect(DocumentFixture.rows(of: store.current) == (try DocumentFixture.expectedRows(after: 5)))
    }

    @Test func compactionRewritesTheSnapshotAndKeepsTheData() throws {
        defer { folder.remove() }
        let path = folder.path("compact.store")
        let store = try openStore(path)
        for k in 1...8 { try DocumentFixture.save(k, in: store) }
        let journalBefore = try #require(store.document?.journalLength)
        try store.compact()
        #expect(store.document?.journalLength == 0)
        #expect(journalBefore > 0)
        try DocumentFixture.save(9, in: store)
        #expect(store.document?.journalFrames == 1)
        let reopened = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(DocumentFixture.rows(of: reopened.version) == (try DocumentFixture.expectedRows(after: 9)))
        #expect(reopened.snapshotGeneration == 8)
    }

    @Test func savesCompactOnTheirOwnOnceTheJournalOutgrowsThePolicy() throws {
        defer { folder.remove() }
        let path = folder.path("auto.store")
        let store = try openStore(path)
        let document = try #require(store.document)
        document.compactionPolicy = .init(ratio: 1.0, minimumJournalBytes: 0)
        var compactions = 0
        var previousFrames = 0
        for k in 1...30 {
            try DocumentFixture.save(k, in: store)
            document.waitForCompaction()
            if document.journalFrames < previousFrames { compactions += 1 }
            previousFrames = document.journalFrames
            #expect(Double(document.journalLength) <= Double(document.snapshotLength) + 100_000)
        }
        #expect(compactions > 0)
        let reopened = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(DocumentFixture.rows(of: reopened.version) == (try DocumentFixture.expectedRows(after: 30)))
    }

    @Test func removeAllRewritesTheDocumentEmptyAndKeepsIdentifiersUnique() throws {
        defer { folder.remove() }
        let path = folder.path("clear.store")
        let store = try openStore(path)
        for k in 1...3 { try DocumentFixture.save(k, in: store) }
        let next = store.current.tables[0].nextRawID
        try store.removeAll()
        let reopened = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(reopened.version.tables.allSatisfy { $0.count == 0 })
        #expect(reopened.version.tables[0].nextRawID == next)
    }

    @Test func aWriterAloneIsRefusedWhileAnotherSharesAndAReaderIsNot() throws {
        defer { folder.remove() }
        let path = folder.path("locked.store")
        let store = try openStore(path)
        try DocumentFixture.save(1, in: store)
        #expect(throws: DocumentError.locked(path: path)) {
            _ = try Document.open(path: path, schema: DocumentFixture.schema, exclusive: true)
        }
        let (sharing, _) = try Document.open(path: path, schema: DocumentFixture.schema)
        #expect(sharing.isShared)
        sharing.close()
        let (reader, version) = try Document.open(path: path, schema: DocumentFixture.schema, readOnly: true)
        #expect(version.tables[0].count == 2)
        #expect(throws: DocumentError.readOnly(path: path)) { try reader.compact(version) }
        store.document?.close()
        _ = try Document.open(path: path, schema: DocumentFixture.schema, exclusive: true)
    }

    @Test func aCommitTheDocumentCannotRecordIsNotPublished() throws {
        defer { folder.remove() }
        let path = folder.path("closed.store")
        let store = try openStore(path)
        try DocumentFixture.save(1, in: store)
        store.document?.close()
        #expect(throws: StoreError.document(.closed(path: path))) { try DocumentFixture.save(2, in: store) }
        #expect(store.current.generation == 1)
        #expect(DocumentFixture.rows(of: store.current) == (try DocumentFixture.expectedRows(after: 1)))
    }

    @Test func anotherSchemaIsATypedError() throws {
        defer { folder.remove() }
        let path = folder.path("schema.store")
        _ = try openStore(path)
        var other = DocumentFixture.schema
        other.entities[1].attributes.append(AttributeDescription(name: "color", type: .string, isOptional: true))
        let changed = StoreSchema(entities: other.entities)
        #expect {
            _ = try Document.open(path: path, schema: changed)
        } throws: { error in
            guard case let DocumentError.schemaMismatch(_, reason) = error else { return false }
            return reason.contains("Box")
        }
    }

    @Test func largeExternalValuesLiveInBlobFilesAndCompactionCollectsThem() throws {
        defer { folder.remove() }
        let path = folder.path("blobs.store")
        let blobFolder = path + ".blobs"
        let store = try openStore(path)
        for k in 1...3 { try DocumentFixture.save(k, in: store) } // save 3 has a 20 kB photo
        let names = try FileManager.default.contentsOfDirectory(atPath: blobFolder)
        #expect(names.count == 1) // the 100-byte photos stay inline
        let reopened = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(reopened.blobNames == Set(names))
        #expect(DocumentFixture.rows(of: reopened.version) == (try DocumentFixture.expectedRows(after: 3)))

        // Drop the photo's row; the blob stays until compaction finds nothing refers to it.
        let photoRow = try #require(store.current.tables[0].rowIDs.first { id in
            if case let .data(d) = store.current.tables[0][id]![12] { return d.count >= 16_384 }
            return false
        })
        var changes = ChangeSet()
        changes.deletes.append(.init(entity: 0, id: photoRow))
        _ = try store.commit(changes)
        #expect(try FileManager.default.contentsOfDirectory(atPath: blobFolder).count == 1)
        try store.compact()
        #expect(try FileManager.default.contentsOfDirectory(atPath: blobFolder).isEmpty)
    }

    @Test func aDamagedOrMissingBlobIsATypedError() throws {
        defer { folder.remove() }
        let path = folder.path("badblob.store")
        do {
            let store = try openStore(path)
            for k in 1...3 { try DocumentFixture.save(k, in: store) }
        }
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: path + ".blobs").first)
        let blobPath = path + ".blobs/" + name
        var bytes = try Data(contentsOf: URL(fileURLWithPath: blobPath))
        bytes[100] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: blobPath))
        #expect { _ = try Document.open(path: path, schema: DocumentFixture.schema) } throws: { error in
            "\(error)".contains("does not match its hash")
        }
        try FileManager.default.removeItem(atPath: blobPath)
        #expect { _ = try Document.open(path: path, schema: DocumentFixture.schema) } throws: { error in
            "\(error)".contains("missing")
        }
    }

    @Test func saveAsWritesACompleteCopyWithItsBlobs() throws {
        defer { folder.remove() }
        let path = folder.path("original.store")
        let copyPath = folder.path("copy.store")
        let store = try openStore(path)
        for k in 1...6 { try DocumentFixture.save(k, in: store) }
        try Document.write(store.current, to: copyPath)
        let copy = try DocumentReader.read(path: copyPath, expected: DocumentFixture.schema)
        #expect(DocumentFixture.rows(of: copy.version) == DocumentFixture.rows(of: store.current))
        #expect(copy.journalFrames == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: copyPath + ".blobs").count == 2)
    }

    @Test func aFileThatIsNotADocumentIsRefusedUntouched() throws {
        defer { folder.remove() }
        let path = folder.path("notes.txt")
        let text = Data("just some notes, not a document\n".utf8)
        try text.write(to: URL(fileURLWithPath: path))
        #expect(throws: DocumentError.notADocument(path: path)) {
            _ = try Document.open(path: path, schema: DocumentFixture.schema)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == text)
    }
}

/// Schema drift the document tolerates, and values with special spellings.
@Suite struct DocumentCompatibilityTests {
    let folder: TemporaryFolder
    init() throws { folder = try TemporaryFolder() }

    @Test func entitiesInAnotherOrderAndRenamedCodableTypesStillOpen() throws {
        defer { folder.remove() }
        let path = folder.path("order.store")
        do {
            let (document, version) = try Document.open(path: path, schema: DocumentFixture.schema)
            let store = Store(document: document, version: version)
            for k in 1...4 { try DocumentFixture.save(k, in: store) }
        }
        var entities = Array(DocumentFixture.schema.entities.reversed())
        entities[1].attributes[11].type = .codable("PostalAddress")
        let reordered = StoreSchema(entities: entities)
        let expected = try DocumentFixture.expectedRows(after: 4)
        let (document, version) = try Document.open(path: path, schema: reordered)
        #expect(version.schema == reordered)
        #expect(DocumentFixture.rows(of: version) == Array(expected.reversed()))
        // The file was rewritten in the new order, so saves append in that order.
        let store = Store(document: document, version: version)
        var changes = ChangeSet()
        changes.inserts.append(.init(entity: 0, temporaryID: RowID(-1), row: [.string("new box"), .references([])]))
        _ = try store.commit(changes)
        document.close()
        let reread = try DocumentReader.read(path: path, expected: reordered)
        #expect(!reread.needsRewrite)
        #expect(reread.version.tables[0].count == expected[1].count + 1)
    }

    @Test func decimalNaNAndExtremeNumbersRoundTrip() throws {
        defer { folder.remove() }
        let path = folder.path("numbers.store")
        var row = DocumentFixture.item(1)
        row[8] = .decimal(.nan)
        row[3] = .double(-.infinity)
        row[1] = .int(Int64.min)
        do {
            let (document, version) = try Document.open(path: path, schema: DocumentFixture.schema)
            let store = Store(document: document, version: version)
            var changes = ChangeSet()
            changes.inserts.append(.init(entity: 0, temporaryID: RowID(-1), row: row))
            _ = try store.commit(changes)
        }
        let contents = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        let stored = try #require(contents.version.tables[0][RowID(1)])
        guard case let .decimal(d) = stored[8] else { Issue.record("not a decimal"); return }
        #expect(d.isNaN)
        #expect(stored[3] == .double(-.infinity))
        #expect(stored[1] == .int(Int64.min))
    }

    /// A lock held for an instant, as a process being spawned holds a copy of every
    /// descriptor until its exec closes them, does not refuse the open: it waits.
    @Test func aLockHeldForAnInstantIsWaitedFor() throws {
        defer { folder.remove() }
        let path = folder.path("instant.store")
        let store = try DocumentFixture.openStore(path)
        try DocumentFixture.save(1, in: store)
        store.document?.close()
        // Another open file description of the document holds its lock.
        let holder = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        #expect(flock(holder, LOCK_EX | LOCK_NB) == 0)
        // A thread of its own, so a busy dispatch pool cannot hold the release back.
        Thread {
            usleep(10_000)
            _ = Glibc.close(holder)
        }.start()
        let (reopened, version) = try Document.open(path: path, schema: DocumentFixture.schema)
        #expect(version.tables[0].count == 2)
        reopened.close()
    }

    @Test func saveAsNeverReplacesADocumentOpenForWriting() throws {
        defer { folder.remove() }
        let target = folder.path("target.store")
        let (open, _) = try Document.open(path: target, schema: DocumentFixture.schema)
        let source = Store(schema: DocumentFixture.schema)
        try DocumentFixture.save(1, in: source)
        #expect(throws: DocumentError.locked(path: target)) { try Document.write(source.current, to: target) }
        open.close()
        try Document.write(source.current, to: target)
        #expect(try DocumentReader.read(path: target).version.tables[0].count == 2)
    }

    @Test func eraseOnAClosedDocumentDeletesNothing() throws {
        defer { folder.remove() }
        let path = folder.path("erase.store")
        let (document, _) = try Document.open(path: path, schema: DocumentFixture.schema)
        document.close()
        #expect(throws: DocumentError.closed(path: path)) { try document.erase() }
        #expect(FileManager.default.fileExists(atPath: path))
    }
}
