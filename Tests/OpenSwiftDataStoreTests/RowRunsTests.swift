import Foundation
import OpenSwiftDataStore
import Testing

/// Lists of rows held as runs (`EntityRows`, `AssignedRows`) give back exactly the rows
/// put in, in order, whatever runs they make: counting up, counting down, single rows,
/// entities interleaved with the same raw identifiers.
@Suite struct RowRunsTests {
    /// Rows in pieces of random shape: runs up or down of random length, lone rows,
    /// entity switches, and repeats of the last row.
    static func pieces(_ count: Int, using rng: inout SplitMix) -> [EntityRow] {
        var rows: [EntityRow] = []
        while rows.count < count {
            let entity = Int.random(in: 0..<3, using: &rng)
            let start = Int64.random(in: -50...50, using: &rng)
            let length = Int64.random(in: 1...12, using: &rng)
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: rows += (0..<length).map { EntityRow(entity: entity, id: RowID(start + $0)) }
            case 1: rows += (0..<length).map { EntityRow(entity: entity, id: RowID(start - $0)) }
            case 2: rows.append(rows.last ?? EntityRow(entity: entity, id: RowID(start)))
            default: rows.append(EntityRow(entity: entity, id: RowID(start * 7)))
            }
        }
        return rows
    }

    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func entityRowsGiveBackWhatWasAppended(seed: UInt64) {
        var rng = SplitMix(seed: seed)
        let rows = Self.pieces(400, using: &rng)
        var list = EntityRows()
        for row in rows { list.append(row) }
        #expect(Array(list) == rows)
        #expect(list.count == rows.count)
        #expect(!list.isEmpty)
        #expect(EntityRows(rows) == list)
        var other = rows
        let k = Int.random(in: 0..<rows.count, using: &rng)
        other[k].id = RowID(other[k].id.rawValue + 1_000)
        #expect(EntityRows(other) != list)
        #expect(Array(EntityRows(other)) == other)
    }

    @Test func entityRowsOfAnEntityKeepIdentifierOrder() {
        let ids = [5, 6, 7, 3, 2, 1, 1, 9].map { RowID(Int64($0)) }
        let list = EntityRows(entity: 4, ids: ids)
        #expect(list.map(\.id) == ids)
        #expect(list.allSatisfy { $0.entity == 4 })
        #expect(EntityRows().isEmpty && Array(EntityRows()).isEmpty)
    }

    /// Temporary rows of two entities with the same raw values, in runs up and down and
    /// shuffled, some upserting onto stored rows (which breaks the permanent rows'
    /// run): each finds the row that holds its values, and rows never inserted find none.
    @Test(arguments: [7, 8, 9] as [UInt64])
    func assignedRowsFindEveryInsertOfMixedRuns(seed: UInt64) throws {
        var rng = SplitMix(seed: seed)
        let store = Store(schema: StoreCommitTests.schema)
        var first = ChangeSet()
        for i in 0..<20 {
            first.inserts.append(.init(entity: 0, temporaryID: RowID(Int64(-1 - i)), row: StoreCommitTests.person("old\(i)", 0)))
        }
        _ = try store.commit(first)

        var changes = ChangeSet()
        var expected: [(EntityRow, String)] = []
        var used = Set<EntityRow>()
        var next = 0
        while expected.count < 300 {
            let entity = Int.random(in: 0..<2, using: &rng)
            let start = Int64.random(in: -400 ... -1, using: &rng)
            let down = Bool.random(using: &rng)
            for k in 0..<Int64.random(in: 1...15, using: &rng) {
                let temporary = EntityRow(entity: entity, id: RowID(down ? start - k : start + k))
                guard temporary.id.isTemporary, used.insert(temporary).inserted else { continue }
                // Every tenth person takes an existing name: an upsert onto that row.
                let name = entity == 0 && next % 10 == 0 ? "old\(next % 20)" : "n\(next)"
                let row: Row = entity == 0 ? StoreCommitTests.person(name, Int64(next)) : [.string(name), .references([])]
                changes.inserts.append(.init(entity: entity, temporaryID: temporary.id, row: row))
                expected.append((temporary, name))
                next += 1
            }
        }
        // A later upsert of the same name wins: only the last insert of a name is checked.
        var last: [String: EntityRow] = [:]
        for (temporary, name) in expected where temporary.entity == 0 { last[name] = temporary }
        let result = try store.commit(changes)
        #expect(result.assigned.count == expected.count)
        for (temporary, name) in expected {
            let id = try #require(result.assigned[temporary])
            if temporary.entity == 0, last[name] != temporary { continue }
            #expect(store.current.row(id, of: temporary.entity)?[0] == .string(name))
        }
        for _ in 0..<200 {
            let probe = EntityRow(entity: Int.random(in: 0..<2, using: &rng), id: RowID(Int64.random(in: -500 ... -1, using: &rng)))
            if !used.contains(probe) { #expect(result.assigned[probe] == nil) }
        }
        // Inserted rows are listed once each, and every one of them was written.
        let inserted = Array(result.inserted)
        #expect(Set(inserted).count == inserted.count)
        let written = Set(result.written)
        #expect(inserted.allSatisfy { written.contains($0) })
        #expect(inserted.count + result.updated.count == expected.count)
    }
}
