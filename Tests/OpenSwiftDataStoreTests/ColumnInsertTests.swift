import Foundation
import OpenSwiftDataStore
import Testing

/// Inserts handed to a commit in a table's columns (`ChangeSet.ColumnInsert`) store
/// what the same rows handed over as rows store: the same rows, indexes, upserts and
/// identifiers for the temporary rows, whether the commit takes the table's segments
/// whole or falls back to inserting row by row.
@Suite struct ColumnInsertTests {
    typealias Sample = PackedIndexTests

    /// `count` random rows with unique keys from `firstKey` on (every 97th a NaN, which
    /// clashes with nothing).
    static func rows(_ count: Int, firstKey: Double, using rng: inout SplitMix) -> [Row] {
        (0..<count).map { i in
            var row = (0..<6).map { Sample.value($0, using: &rng) }
            row.append(.double(i % 97 == 0 ? .nan : firstKey + Double(i)))
            return row
        }
    }

    /// The column form of `rows` with those at `dropped` positions deleted from the
    /// table (as a context does for inserts it let go and then deleted), and the
    /// temporary identifiers of the rest.
    static func columnInsert(_ rows: [Row], dropping dropped: Set<Int>, temporaryIDs: [RowID]) -> ChangeSet.ColumnInsert {
        var table = Table(entity: Sample.schema.entities[0])
        var ids: [RowID] = []
        for (k, row) in rows.enumerated() {
            let id = table.insert(row)
            if dropped.contains(k) { table.delete(id) } else { ids.append(temporaryIDs[k]) }
        }
        return ChangeSet.ColumnInsert(entity: 0, table: table, temporaryIDs: ids)
    }

    /// Every stored row, in identifier order.
    static func contents(_ version: StoreVersion) -> [Row] {
        var rows: [Row] = []
        version.tables[0].forEach { rows.append($1) }
        return rows
    }

    /// Whether `a` and `b` hold the same rows in the same order, a NaN (number or
    /// date) matching a NaN.
    static func same(_ a: [Row], _ b: [Row]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { same($0, $1) }
    }

    static func same(_ a: Row, _ b: Row) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { x, y in
            if case let .double(p) = x, case let .double(q) = y, p.isNaN, q.isNaN { return true }
            if case let .date(p) = x, case let .date(q) = y,
               p.timeIntervalSinceReferenceDate.isNaN, q.timeIntervalSinceReferenceDate.isNaN { return true }
            return x == y
        }
    }

    @Test(arguments: [UInt64(11), 12, 13])
    func columnInsertsStoreWhatRowInsertsStore(seed: UInt64) throws {
        var rng = SplitMix(seed: seed)
        let byRows = Store(schema: Sample.schema)
        let byColumns = Store(schema: Sample.schema)
        var nextKey = 0.0
        // Into an empty entity, into one holding fewer rows (bulk), into one holding
        // more (row by row), with gaps across segment boundaries.
        for count in [5_000, 6_000, 1_500] {
            let rows = Self.rows(count, firstKey: nextKey, using: &rng)
            nextKey += Double(count)
            let temporary = (0..<count).map { RowID(Int64(-1 - $0)) }
            var dropped = Set<Int>()
            for _ in 0..<(count / 50) { dropped.insert(Int.random(in: 0..<count, using: &rng)) }
            dropped.insert(count - 1)
            if count > Table.segmentSize { dropped.insert(Table.segmentSize - 1) }

            var asRows = ChangeSet()
            for k in 0..<count where !dropped.contains(k) {
                asRows.inserts.append(.init(entity: 0, temporaryID: temporary[k], row: rows[k]))
            }
            var asColumns = ChangeSet()
            asColumns.columnInserts = [Self.columnInsert(rows, dropping: dropped, temporaryIDs: temporary)]

            let storedBefore = byColumns.current.tables[0].count
            let rowResult = try byRows.commit(asRows)
            let columnResult = try byColumns.commit(asColumns)
            // (Compared outside `#expect`: describing rows with extreme dates traps in Foundation.)
            let sameContents = Self.same(Self.contents(byColumns.current), Self.contents(byRows.current))
            #expect(sameContents, "count \(count)")
            #expect(columnResult.inserted.count == rowResult.inserted.count)
            #expect(columnResult.upserted.isEmpty)
            for k in 0..<count where !dropped.contains(k) {
                let key = EntityRow(entity: 0, id: temporary[k])
                let id = try #require(columnResult.assigned[key])
                let stored = byColumns.current.tables[0][id].map { Self.same($0, rows[k]) } ?? false
                #expect(stored, "row \(k) of \(count)")
            }
            for k in dropped { #expect(columnResult.assigned[EntityRow(entity: 0, id: temporary[k])] == nil) }
            Sample.check(byColumns.current, using: &rng)
            // Identifiers stay unique: the next insert goes above every one handed out.
            let last = columnResult.assigned.values.max()!
            if count >= storedBefore {
                // Taken whole: its first row starts a segment, where look-ups are arithmetic.
                let first = columnResult.assigned.values.min()!
                #expect((first.rawValue - 1) % Int64(Table.segmentSize) == 0)
            }
            #expect(byColumns.current.tables[0].nextRawID > last.rawValue)
        }
    }

    /// Inserts in columns whose keys clash, with a stored row's or each other's, upsert
    /// as rows do: the later takes over the earlier one's row.
    @Test func columnInsertsWithClashingKeysUpsert() throws {
        var rng = SplitMix(seed: 14)
        let store = Store(schema: Sample.schema)
        var first = ChangeSet()
        first.inserts.append(.init(entity: 0, temporaryID: RowID(-1), row: Sample.sample(key: 5)))
        let stored = try #require(try store.commit(first).assigned[EntityRow(entity: 0, id: RowID(-1))])

        let rows = (0..<2_000).map { Sample.sample(key: $0 == 1_999 ? 100 : Double($0)) }
        let temporary = (0..<2_000).map { RowID(Int64(-1 - $0)) }
        var changes = ChangeSet()
        changes.columnInserts = [Self.columnInsert(rows, dropping: [], temporaryIDs: temporary)]
        let result = try store.commit(changes)
        #expect(result.upserted == [EntityRow(entity: 0, id: RowID(-6)), EntityRow(entity: 0, id: RowID(-2_000))])
        #expect(result.assigned[EntityRow(entity: 0, id: RowID(-6))] == stored)
        #expect(result.assigned[EntityRow(entity: 0, id: RowID(-2_000))] == result.assigned[EntityRow(entity: 0, id: RowID(-101))])
        #expect(store.current.tables[0].count == 1_999)
        Sample.check(store.current, using: &rng)
    }

    /// Inserts in columns that come with row inserts of the same entity are inserted
    /// first, then the rows.
    @Test func columnInsertsBesideRowInsertsOfTheirEntityGoFirst() throws {
        var rng = SplitMix(seed: 15)
        let store = Store(schema: Sample.schema)
        let rows = Self.rows(1_200, firstKey: 0, using: &rng)
        var changes = ChangeSet()
        changes.columnInserts = [Self.columnInsert(Array(rows.prefix(1_100)), dropping: [], temporaryIDs: (0..<1_100).map { RowID(Int64(-1 - $0)) })]
        for k in 1_100..<1_200 { changes.inserts.append(.init(entity: 0, temporaryID: RowID(Int64(-1 - k)), row: rows[k])) }
        let result = try store.commit(changes)
        // The same rows as row inserts, in that order.
        let reference = Store(schema: Sample.schema)
        var asRows = ChangeSet()
        for k in 0..<1_200 { asRows.inserts.append(.init(entity: 0, temporaryID: RowID(Int64(-1 - k)), row: rows[k])) }
        _ = try reference.commit(asRows)
        let sameContents = Self.same(Self.contents(store.current), Self.contents(reference.current))
        #expect(sameContents)
        #expect(result.assigned[EntityRow(entity: 0, id: RowID(-1))] == RowID(1))
        #expect(result.assigned[EntityRow(entity: 0, id: RowID(-1_200))] == RowID(1_200))
        Sample.check(store.current, using: &rng)
    }

    @Test func columnsOfAnotherShapeAreRejected() throws {
        let store = Store(schema: Sample.schema)
        var table = Table(kinds: [.int])
        _ = table.insert([.int(1)])
        var changes = ChangeSet()
        changes.columnInserts = [ChangeSet.ColumnInsert(entity: 0, table: table, temporaryIDs: [RowID(-1)])]
        #expect(throws: StoreError.self) { try store.commit(changes) }
        #expect(store.current.tables[0].count == 0)
    }
}
