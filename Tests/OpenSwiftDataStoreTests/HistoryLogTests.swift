import Foundation
import OpenSwiftDataStore
import Testing

/// The engine's history (issue #14, points 1 and 2): what each commit records,
/// how versions share the log, and how deletions persist in a document.
@Suite struct HistoryLogTests {
    private static let schema = StoreCommitTests.schema

    private static func insertPeople(_ names: [String], into store: Store) throws -> [RowID] {
        var changes = ChangeSet()
        for (i, name) in names.enumerated() {
            changes.inserts.append(.init(entity: 0, temporaryID: RowID(Int64(-1 - i)), row: StoreCommitTests.person(name, 20)))
        }
        let result = try store.commit(changes)
        return names.indices.map { result.assigned[EntityRow(entity: 0, id: RowID(Int64(-1 - $0)))]! }
    }

    private static func generations(_ history: HistoryLog) -> [UInt64] {
        var result: [UInt64] = []
        history.forEach(after: nil) { transaction in
            result.append(transaction.generation)
            return true
        }
        return result
    }

    @Test func commitsRecordInsertRunsUpdatedSlotsAndTombstones() throws {
        let store = Store(schema: Self.schema)
        store.preserveOnDeletion([[0], []])
        var changes = ChangeSet()
        changes.author = "importer"
        changes.inserts = ["ann", "bob", "cy"].enumerated().map { i, name in
            .init(entity: 0, temporaryID: RowID(Int64(-1 - i)), row: StoreCommitTests.person(name, 20))
        }
        let ids = try store.commit(changes).assigned
        let ann = try #require(ids[EntityRow(entity: 0, id: RowID(-1))])
        let bob = try #require(ids[EntityRow(entity: 0, id: RowID(-2))])

        var update = ChangeSet()
        update.updates = [.init(entity: 0, id: ann, values: [0: .string("ann"), 1: .int(21)])]
        update.deletes = [.init(entity: 0, id: bob)]
        _ = try store.commit(update)

        let history = store.current.history
        #expect(history.count == 2)
        let first = history[0]
        #expect(first.author == "importer")
        #expect(first.changes == [.inserted(entity: 0, first: ann, count: 3)])
        #expect(first.changeCount == 3)
        // The name was written with the value it had: only the age changed.
        #expect(history[1].changes == [
            .deleted(entity: 0, id: bob, preserved: [0: .string("bob")]),
            .updated(entity: 0, id: ann, slots: [1]),
        ])
        #expect(history[1].generation == store.current.generation)
    }

    @Test func aCommitThatChangesNothingOrFailsRecordsNothing() throws {
        let store = Store(schema: Self.schema)
        let ids = try Self.insertPeople(["ann", "bob"], into: store)
        var same = ChangeSet()
        same.updates = [.init(entity: 0, id: ids[0], values: [1: .int(20)])]
        _ = try store.commit(same)
        #expect(store.current.history.count == 1)

        var clash = ChangeSet()
        clash.updates = [.init(entity: 0, id: ids[1], values: [0: .string("ann")])]
        #expect(throws: StoreError.self) { try store.commit(clash) }
        #expect(store.current.history.count == 1)
        // The next commit appends after the one the failed commit did not publish.
        _ = try Self.insertPeople(["cy"], into: store)
        #expect(Self.generations(store.current.history) == [1, 3])
    }

    @Test func historyCrossesChunksAndFindsARangeByBinarySearch() throws {
        let store = Store(schema: Self.schema)
        for n in 0..<600 { _ = try Self.insertPeople(["p\(n)"], into: store) }
        let history = store.current.history
        #expect(history.count == 600)
        #expect(history.firstPosition(after: 0) == 0)
        #expect(history.firstPosition(after: 300) == 300)
        #expect(history.firstPosition(after: 600) == 600)
        var seen: [UInt64] = []
        history.forEach(after: 255, through: 258) { transaction in
            seen.append(transaction.generation)
            return true
        }
        #expect(seen == [256, 257, 258])
    }

    @Test func publishedVersionsKeepTheirHistoryAndBranchesDoNotMix() throws {
        let store = Store(schema: Self.schema)
        _ = try Self.insertPeople(["ann"], into: store)
        let before = store.current
        _ = try Self.insertPeople(["bob"], into: store)
        #expect(before.history.count == 1)
        #expect(store.current.history.count == 2)

        // Two stores from one version append to the same shared chunk position.
        let left = Store(schema: Self.schema, version: before)
        let right = Store(schema: Self.schema, version: before)
        _ = try Self.insertPeople(["left"], into: left)
        _ = try Self.insertPeople(["right", "again"], into: right)
        #expect(left.current.history.last?.changeCount == 1)
        #expect(right.current.history.last?.changeCount == 2)
        #expect(store.current.history.last?.changeCount == 1)
        #expect(before.history.count == 1)
    }

    @Test func deletingHistoryIsACommitTheJournalReplays() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("history.store")
        let store = try DocumentFixture.openStore(path)
        for k in 1...3 { try DocumentFixture.save(k, in: store) }
        let before = store.current
        #expect(Self.generations(before.history) == [1, 2, 3])

        let removed = try store.deleteHistory([1, 2, 9])
        #expect(removed == [1, 2])
        #expect(store.current.generation == before.generation + 1)
        #expect(Self.generations(store.current.history) == [3])
        #expect(store.current.history.horizon == 2, "generation 9 was never there")
        #expect(try store.deleteHistory([]) == [])
        store.document?.close()

        let read = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(read.journalFrames == 4)
        #expect(Self.generations(read.version.history) == [3])
        #expect(read.version.history.horizon == 2)
        #expect(read.version.history[0] == store.current.history[0])
        #expect(DocumentFixture.rows(of: read.version) == DocumentFixture.rows(of: before))

        // Compaction keeps the same history in the snapshot.
        let reopened = try DocumentFixture.openStore(path)
        try reopened.compact()
        reopened.document?.close()
        let compacted = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(compacted.journalFrames == 0)
        #expect(compacted.frames.contains { $0.kind == .history })
        #expect(Self.generations(compacted.version.history) == [3])
        #expect(compacted.version.history.horizon == 2)
    }

    @Test func removingEveryRowKeepsNoHistoryAndSetsTheHorizon() throws {
        let store = Store(schema: Self.schema)
        _ = try Self.insertPeople(["ann", "bob"], into: store)
        _ = try Self.insertPeople(["cy"], into: store)
        try store.removeAll()
        #expect(store.current.history.isEmpty)
        #expect(store.current.history.horizon == 2)
    }
}
