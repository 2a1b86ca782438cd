import Foundation
import OpenSwiftDataStore
import Testing

/// The journal frame of a commit is made from the rows the commit gathered as it
/// wrote them (`JournalRows`): new rows as the change set carried them, resolved
/// references patched in, column inserts and rewritten rows read back. Each shape
/// of commit is saved to a document, which is then read back, and compacted and
/// read back: every row of every entity must be what the live store holds.
@Suite struct JournalRowsTests {
    private typealias Fixture = DocumentFixture

    /// Item rows in columns, `count` of them from code `first` on, under temporary ids from `firstTemporary` down.
    private static func columnInsert(_ count: Int, first: Int, firstTemporary: Int64) -> ChangeSet.ColumnInsert {
        var table = Table(entity: Fixture.schema.entities[0])
        var ids: [RowID] = []
        for k in 0..<count {
            _ = table.insert(Fixture.item(first + k, photoSize: k % 500 == 0 ? 3_000 : 0))
            ids.append(RowID(firstTemporary - Int64(k)))
        }
        return ChangeSet.ColumnInsert(entity: 0, table: table, temporaryIDs: ids)
    }

    /// The commits, one per shape the record is made from.
    private static func shapes() -> [(name: String, changes: ChangeSet)] {
        var shapes: [(String, ChangeSet)] = []
        // New rows only, referring to each other by temporary ids (resolved after the inserts).
        var linked = ChangeSet()
        linked.inserts.append(.init(entity: 1, temporaryID: RowID(-1), row: [.string("box"), .references([RowID(-2), RowID(-3)])]))
        linked.inserts.append(.init(entity: 0, temporaryID: RowID(-2), row: Fixture.item(1, box: RowID(-1), photoSize: 9_000)))
        linked.inserts.append(.init(entity: 0, temporaryID: RowID(-3), row: Fixture.item(2, box: RowID(-1))))
        shapes.append(("new rows linked to each other", linked))
        // A bulk insert taken as columns: its rows are read back.
        var columns = ChangeSet()
        columns.columnInserts = [columnInsert(1_500, first: 1_000, firstTemporary: -1)]
        shapes.append(("a column insert", columns))
        // Columns beside row inserts of their entity: inserted as rows.
        var mixed = ChangeSet()
        mixed.columnInserts = [columnInsert(40, first: 5_000, firstTemporary: -1)]
        mixed.inserts.append(.init(entity: 0, temporaryID: RowID(-100), row: Fixture.item(6_000)))
        shapes.append(("columns beside rows", mixed))
        // An upsert onto a stored row (code item-2 exists), an update of a stored row
        // and a new row: rewritten rows, read back once each.
        var rewriting = ChangeSet()
        rewriting.inserts.append(.init(entity: 0, temporaryID: RowID(-1), row: Fixture.item(2)))
        rewriting.inserts.append(.init(entity: 0, temporaryID: RowID(-2), row: Fixture.item(7_000, box: RowID(1))))
        rewriting.updates.append(.init(entity: 0, id: RowID(1), values: [1: .int(12_345)]))
        rewriting.updates.append(.init(entity: 1, id: RowID(1), values: [0: .string("renamed")]))
        shapes.append(("an upsert, updates and a new row", rewriting))
        // New rows and deletes, in one commit (item-2, the upserted row, goes).
        var deleting = ChangeSet()
        deleting.deletes.append(.init(entity: 0, id: RowID(2)))
        deleting.inserts.append(.init(entity: 0, temporaryID: RowID(-1), row: Fixture.item(8_000)))
        shapes.append(("deletes and a new row", deleting))
        return shapes
    }

    @Test func everyShapeOfCommitReadsBackAsTheLiveStoreHoldsIt() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("journal.store")
        let store = try Fixture.openStore(path)
        for (name, changes) in Self.shapes() {
            _ = try store.commit(changes)
            let live = Fixture.rows(of: store.current)
            // Read back as it stands: the snapshot and every frame so far.
            let reread = try DocumentReader.read(path: path, expected: Fixture.schema).version
            #expect(Fixture.rows(of: reread) == live, "after \(name)")
            #expect(reread.tables.map(\.nextRawID) == store.current.tables.map(\.nextRawID), "after \(name)")
        }
        // And as a fresh snapshot.
        try store.compact()
        let live = Fixture.rows(of: store.current)
        store.document?.close()
        let reopened = try Fixture.openStore(path)
        #expect(Fixture.rows(of: reopened.current) == live)
        reopened.current._checkInvariants()
        reopened.document?.close()
        // The commits wrote what they were asked to: spot checks on the live rows.
        #expect(live[0].count == 2 + 1_500 + 41 + 1 + 1 - 1)
        #expect(live[1][RowID(1)]?[0] == .string("renamed"))
        #expect(live[0][RowID(2)] == nil)
        let resolvedBox = live[0].values.first { $0[0] == .string("item-1") }?[13]
        #expect(resolvedBox == .reference(RowID(1)))
    }
}
