import Foundation
import OpenSwiftDataStore
import Testing

/// Columnar, segmented copy-on-write tables.
@Suite struct TableTests {
    @Test func insertReadUpdateRemove() {
        var table = Table(kinds: [.int])
        let ids = (0..<2500).map { table.insert([.int(Int64($0))]) }
        #expect(table.count == 2500)
        #expect(ids.first == RowID(1))
        #expect(table[ids[1234]] == [.int(1234)])
        table.update(ids[10], to: [.int(-1)])
        #expect(table[ids[10]] == [.int(-1)])
        #expect(table.remove(ids[10]) == [.int(-1)])
        #expect(table[ids[10]] == nil)
        #expect(table.remove(ids[10]) == nil)
        #expect(table.count == 2499)
        #expect(table.rowIDs.count == 2499)
        #expect(table[RowID(-3)] == nil)
        #expect(table[RowID(999_999)] == nil)
    }

    /// `delete` removes as `remove` does, without reading the row; emptied segments go.
    @Test func deleteRemovesWithoutReturningTheRow() {
        var table = Table(kinds: [.int, .string])
        let ids = (0..<(Table.segmentSize + 10)).map { table.insert([.int(Int64($0)), .string("s\($0)")]) }
        let first = table.delete(ids[3]), again = table.delete(ids[3]), missing = table.delete(RowID(-1))
        #expect(first)
        #expect(!again)
        #expect(!missing)
        #expect(table[ids[3]] == nil)
        #expect(table[ids[4]] == [.int(4), .string("s4")])
        for id in ids[0..<Table.segmentSize] { table.delete(id) }
        #expect(table.count == 10)
        #expect(table.rowIDs == Array(ids[Table.segmentSize...]))
        #expect(table.row(ids.last!, reading: [1]) == [.null, .string("s\(Table.segmentSize + 9)")])
    }

    /// A to-many column whose lists are all empty holds none (`Column.lists`); the
    /// first list that is not empty, set or appended, makes them whole, and every
    /// position reads back what was put there.
    @Test func toManyListsReadBackWhetherHeldOrNot() {
        var table = Table(kinds: [.int, .references])
        var expected: [Row] = []
        for i in 0..<(Table.segmentSize + 100) {
            expected.append([.int(Int64(i)), .references([])])
        }
        let first = table.insert(contentsOf: expected)
        table._checkInvariants()
        let ids = (0..<Int64(expected.count)).map { RowID(first.rawValue + $0) }
        #expect(table[ids[17]] == [.int(17), .references([])])
        // A list set in the first segment, one appended to the second, one made nil.
        table.update(ids[100], to: [.int(100), .references([RowID(7), RowID(3)])])
        expected[100][1] = .references([RowID(7), RowID(3)])
        table.update(ids[101], to: [.int(101), .null])
        expected[101][1] = .null
        let last = table.insert([.int(-1), .references([RowID(9)])])
        table._checkInvariants()
        for (k, id) in ids.enumerated() where k % 37 == 0 || (99...102).contains(k) { #expect(table[id] == expected[k]) }
        #expect(table[last] == [.int(-1), .references([RowID(9)])])
        // Back to empty: still read as empty lists.
        table.update(ids[100], to: [.int(100), .references([])])
        #expect(table[ids[100]] == [.int(100), .references([])])
        var copy = table
        copy.update(ids[5], to: [.int(5), .references([RowID(1)])])
        #expect(table[ids[5]] == [.int(5), .references([])], "a copy's write leaves the original as it was")
        copy._checkInvariants()
    }

    /// A full segment encodes its string columns whose strings repeat (a city column,
    /// a mostly nil one) and not a column of distinct strings; every string reads back
    /// exactly (the same UTF-8, canonically equivalent spellings kept apart), through
    /// updates to strings it holds and new ones, nils, and copies.
    @Test func repeatedStringsReadBackExactlyThroughUpdates() {
        let cities = ["Oslo", "Zürich", "e\u{301}vian", "évian", "", String(repeating: "long city name ", count: 3)]
        func row(_ i: Int) -> Row {
            [.string(cities[i % cities.count]), .string("unique-\(i)"),
             i % 5 == 0 ? .string("a note that is long enough to be stored apart \(i)") : .null]
        }
        var table = Table(kinds: [.string, .string, .string])
        let expected = (0..<(2 * Table.segmentSize + 50)).map(row)
        let first = table.insert(contentsOf: Array(expected[..<(Table.segmentSize + 10)]))
        var ids = (0..<Int64(Table.segmentSize + 10)).map { RowID(first.rawValue + $0) }
        for i in (Table.segmentSize + 10)..<expected.count { ids.append(table.insert(expected[i])) }
        table._checkInvariants()
        func check(_ table: Table, _ expected: [Row]) {
            for (k, id) in ids.enumerated() where k % 13 == 0 || k < 8 || (Table.segmentSize - 4...Table.segmentSize + 4).contains(k) {
                let read = table[id]
                #expect(read == expected[k])
                // Exactly the bytes stored: `==` alone would take "évian" for "e\u{301}vian".
                if case let .string(a)? = read?[0], case let .string(b) = expected[k][0] {
                    #expect(Array(a.utf8) == Array(b.utf8))
                }
            }
        }
        check(table, expected)
        // Updates inside the first (full) segment: a string it holds, a new one, nil.
        let updates: [(Int, Row)] = [
            (3, [.string("Oslo"), .string("u3"), .null]),
            (4, [.string("Trondheim, new to the segment"), .string("u4"), .string("n")]),
            (5, [.null, .string("u5"), .null]),
            (6, [.string("évian"), .string("u6"), .null]),
        ]
        var copy = table
        for (k, new) in updates {
            copy.update(ids[k], to: new)
        }
        var updated = expected
        for (k, new) in updates { updated[k] = new }
        copy._checkInvariants()
        check(copy, updated)
        check(table, expected)
        // Two equal long strings made apart read back equal.
        let a = String(repeating: "x", count: 40), b = String(repeating: "x", count: 20) + String(repeating: "x", count: 20)
        copy.update(ids[7], to: [.string(a), .string(b), .string(a)])
        #expect(copy[ids[7]] == [.string(a), .string(b), .string(a)])
    }

    /// A row of an encoded column written again and again with new strings: the column
    /// is decoded once its dictionary is full, and every row reads back what was written.
    @Test func manyNewStringsWrittenToAnEncodedColumnReadBack() {
        var table = Table(kinds: [.string])
        let ids = (0..<Table.segmentSize).map { table.insert([.string($0.isMultiple(of: 2) ? "a" : "b")]) }
        for round in 0..<3_000 {
            table.update(ids[7], to: [.string("note \(round) of row 7, long enough to be stored apart")])
            if round.isMultiple(of: 500) { table.update(ids[8], to: [.string("r\(round)")]) }
        }
        table._checkInvariants()
        #expect(table[ids[7]] == [.string("note 2999 of row 7, long enough to be stored apart")])
        #expect(table[ids[8]] == [.string("r2500")])
        #expect(table[ids[9]] == [.string("b")])
        #expect(table[ids[10]] == [.string("a")])
    }

    @Test func copiesShareUntouchedRowsAndDivergeOnWrite() {
        var original = Table(kinds: [.int])
        let ids = (0..<3000).map { original.insert([.int(Int64($0))]) }
        var copy = original
        copy.update(ids[5], to: [.string("changed")])
        _ = copy.insert([.int(9999)])
        #expect(original[ids[5]] == [.int(5)])
        #expect(copy[ids[5]] == [.string("changed")])
        #expect(original.count == 3000)
        #expect(copy.count == 3001)
        var seen = 0
        original.forEach { id, row in
            seen += 1
            #expect(row == [.int(id.rawValue - 1)])
        }
        #expect(seen == 3000)
    }
    /// Every column kind round-trips every value exactly, nil included; a value of
    /// another kind turns its column into a `.value` column without losing the others.
    @Test func everyKindRoundTripsItsValues() {
        let kinds: [ColumnKind] = [.bool, .int, .uint, .double, .date, .string, .reference, .references, .value]
        let rows: [Row] = [
            [.bool(true), .int(-7), .uint(.max), .double(-0.0), .date(Date(timeIntervalSinceReferenceDate: 12.5)),
             .string("é"), .reference(RowID(-4)), .references([RowID(3), RowID(1)]), .uuid(UUID())],
            [.null, .null, .null, .null, .null, .null, .null, .null, .null],
            [.bool(false), .int(.min), .uint(0), .double(.nan), .date(.distantPast), .string(""), .reference(RowID(9)),
             .references([]), .array([.int(1)])],
            // Values of other kinds than their columns'.
            [.int(1), .double(2), .int(3), .int(4), .string("x"), .data(Data([1])), .int(5), .reference(RowID(2)), .null],
        ]
        var table = Table(kinds: kinds)
        let ids = rows.map { table.insert($0) }
        table._checkInvariants()
        for (id, row) in zip(ids, rows) {
            let stored = table[id]!
            #expect(stored.count == row.count)
            for (a, b) in zip(stored, row) {
                if case let .double(x) = a, case let .double(y) = b, x.isNaN { #expect(y.isNaN) } else { #expect(a == b) }
            }
        }
        #expect(table.value(ids[0], slot: 5) == .string("é"))
        #expect(table.value(RowID(99), slot: 5) == nil)
    }

    /// Inserting rows all at once (column by column) stores what inserting them one by
    /// one stores: across segment boundaries, after a partly filled segment and after
    /// identifiers with gaps, with nil and values of other kinds than their columns'
    /// (which turn a column into a `.value` column part-way through a batch).
    @Test(arguments: [UInt64(1), 2, 3])
    func insertingRowsAtOnceStoresWhatInsertingEachStores(seed: UInt64) {
        var rng = SplitMix(seed: seed)
        let kinds: [ColumnKind] = [.double, .date, .int, .string, .bool, .uint, .reference, .value]
        func value(_ kind: ColumnKind, _ step: Int) -> Value {
            switch Int.random(in: 0..<40, using: &rng) {
            case 0: return .null
            case 1: return .string("odd \(step)")  // another kind than the column's
            default: break
            }
            switch kind {
            case .double: return .double(Double(step) / 3)
            case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(step)))
            case .int: return .int(Int64(step) - 500)
            case .string: return .string("s\(step)")
            case .bool: return .bool(step % 3 == 0)
            case .uint: return .uint(UInt64(step))
            case .reference: return .reference(RowID(Int64(step % 17 + 1)))
            default: return .data(Data([UInt8(step & 0xFF)]))
            }
        }
        var single = Table(kinds: kinds), batched = Table(kinds: kinds)
        var step = 0
        // A partly filled first segment, identifiers with a gap, then batches of every size.
        for raw in [1, 2, 3, 10] as [Int64] {
            let row = kinds.map { value($0, step) }
            step += 1
            single.put(RowID(raw), row)
            batched.put(RowID(raw), row)
        }
        for size in [0, 1, 700, Table.segmentSize, 2 * Table.segmentSize + 5, 3] {
            let rows = (0..<size).map { _ in
                defer { step += 1 }
                return kinds.map { value($0, step) }
            }
            let ids = rows.map { single.insert($0) }
            let first = batched.insert(contentsOf: rows)
            #expect(ids.first.map { $0 == first } ?? true)
            batched._checkInvariants()
        }
        #expect(batched.count == single.count)
        #expect(batched.nextRawID == single.nextRawID)
        #expect(batched.rowIDs == single.rowIDs)
        var mismatched = 0
        single.forEach { id, row in if batched[id] != row { mismatched += 1 } }
        #expect(mismatched == 0)
    }

    /// Identifiers far apart cost one row each, not a slot per identifier below them
    /// (a document holding one row at 2³² made every entity allocate millions of slots).
    @Test func sparseIdentifiersCostRowsNotRange() {
        var table = Table(kinds: [.int])
        let far: [Int64] = [1, 2, 1 << 32, (1 << 32) + 1, 1 << 40, (1 << 62) - 5]
        for raw in far { table.put(RowID(raw), [.int(raw)]) }
        table._checkInvariants()
        #expect(table.count == far.count)
        for raw in far { #expect(table[RowID(raw)] == [.int(raw)]) }
        #expect(table[RowID(3)] == nil)
        #expect(table[RowID((1 << 32) - 1)] == nil)
        #expect(table.nextRawID == (1 << 62) - 4)
        let next = table.insert([.int(0)])
        #expect(next == RowID((1 << 62) - 4))
        #expect(table.rowIDs.map(\.rawValue) == far + [(1 << 62) - 4])
    }

    /// Rows put out of identifier order (an import can) still read back by identifier
    /// and iterate in order.
    @Test func rowsPutOutOfOrderKeepIdentifierOrder() {
        var table = Table(kinds: [.string])
        for raw in [10, 30, 20, 5, 25] as [Int64] { table.put(RowID(raw), [.string("r\(raw)")]) }
        table._checkInvariants()
        #expect(table.rowIDs.map(\.rawValue) == [5, 10, 20, 25, 30])
        #expect(table[RowID(20)] == [.string("r20")])
        table.put(RowID(20), [.string("again")])
        #expect(table[RowID(20)] == [.string("again")])
        #expect(table.count == 5)
    }

    /// Deleting most rows drops emptied segments and compacts sparse ones; the rows
    /// left keep their identifiers, and new inserts continue above every old one.
    @Test func deletesReleaseSegments() {
        var table = Table(kinds: [.int, .string])
        let n = Table.segmentSize * 3 + 100
        let ids = (0..<n).map { table.insert([.int(Int64($0)), .string("row \($0)")]) }
        // Empty the first segment, thin out the second, keep the third.
        for id in ids[0..<Table.segmentSize] { table.remove(id) }
        for (i, id) in ids[Table.segmentSize..<(2 * Table.segmentSize)].enumerated() where i % 10 != 0 { table.remove(id) }
        table._checkInvariants()
        let kept = ids.enumerated().filter { i, _ in
            i >= 2 * Table.segmentSize || (i >= Table.segmentSize && (i - Table.segmentSize) % 10 == 0)
        }
        #expect(table.count == kept.count)
        #expect(table.rowIDs == kept.map(\.element))
        for (i, id) in kept { #expect(table[id] == [.int(Int64(i)), .string("row \(i)")]) }
        for id in ids[0..<Table.segmentSize] { #expect(table[id] == nil) }
        let next = table.insert([.int(-1), .null])
        #expect(next.rawValue == Int64(n + 1))
        table._checkInvariants()
    }

    /// The next identifier can lie segments past the last row (after deletes and a
    /// reopen, or an import's `nextIDs`): inserts there work.
    @Test func insertsFarPastTheLastRow() {
        var table = Table(kinds: [.int])
        for raw in 1...2_100 as ClosedRange<Int64> { table.put(RowID(raw), [.int(raw)]) }
        for raw in 1_001...2_100 as ClosedRange<Int64> { table.remove(RowID(raw)) }
        table.reserveIdentifiers(below: 1_000_000)
        let id = table.insert([.int(0)])
        #expect(id == RowID(1_000_000))
        #expect(table[id] == [.int(0)])
        #expect(table.count == 1_001)
        table._checkInvariants()
    }

    /// A random mix of inserts, puts, updates and removes agrees with a dictionary,
    /// and copies taken along the way keep what they held.
    @Test(arguments: [UInt64(1), 2, 3])
    func randomOperationsMatchADictionary(seed: UInt64) {
        var rng = SplitMix(seed: seed)
        var table = Table(kinds: [.int, .string, .double])
        var model: [Int64: Row] = [:]
        var snapshots: [(Table, [Int64: Row])] = []
        for step in 0..<6_000 {
            let row: Row = [
                .int(Int64.random(in: -5...5, using: &rng)),
                Bool.random(using: &rng) ? .string("s\(step)") : .null,
                .double(Double(step)),
            ]
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<5:
                let id = table.insert(row)
                model[id.rawValue] = row
            case 5, 6:
                if let raw = model.keys.randomElement(using: &rng) {
                    table.update(RowID(raw), to: row)
                    model[raw] = row
                }
            case 7, 8:
                if let raw = model.keys.randomElement(using: &rng) {
                    #expect(table.remove(RowID(raw)) == model.removeValue(forKey: raw))
                }
            default:
                let raw = table.nextRawID + Int64.random(in: 0...3, using: &rng)
                table.put(RowID(raw), row)
                model[raw] = row
            }
            if step % 1_500 == 0 { snapshots.append((table, model)) }
        }
        table._checkInvariants()
        #expect(table.count == model.count)
        #expect(table.rowIDs.map(\.rawValue) == model.keys.sorted())
        for (raw, row) in model { #expect(table[RowID(raw)] == row) }
        for (copy, expected) in snapshots {
            copy._checkInvariants()
            #expect(copy.count == expected.count)
            for (raw, row) in expected { #expect(copy[RowID(raw)] == row) }
        }
    }
}

/// The total order stored values sort by.
@Suite struct ValueOrderTests {
    @Test func valuesOrderWithinAndAcrossKinds() {
        #expect(Value.int(-1) < .int(2))
        #expect(Value.int(1) < .double(1.5))
        #expect(Value.uint(3) > .int(-4))
        #expect(Value.string("B") < .string("a"))
        #expect(Value.null < .bool(false))
        #expect(Value.bool(false) < .bool(true))
        #expect(Value.bool(true) < .int(0))
        #expect(Value.array([.int(1)]) < .array([.int(1), .int(0)]))
        #expect([Value.string("b"), .null, .int(3)].sorted() == [.null, .int(3), .string("b")])
    }

    /// The B-tree's three-way comparison agrees with `<` on every pair.
    @Test func threeWayComparisonAgreesWithLessThan() {
        let pool: [Value] = [
            .null, .bool(false), .bool(true), .int(-2), .int(0), .int(7), .uint(7), .double(-0.0), .double(0), .double(6.5),
            .double(.nan), .double(-.infinity), .string(""), .string("a"), .string("B"), .string("é"), .string("e\u{301}"),
            .date(Date(timeIntervalSinceReferenceDate: -1)), .date(Date(timeIntervalSinceReferenceDate: 3)),
            .date(Date(timeIntervalSinceReferenceDate: .nan)), .data(Data([2])),
        ]
        for (i, a) in pool.enumerated() {
            for (j, b) in pool.enumerated() {
                let expected = a < b ? -1 : (b < a ? 1 : 0)
                #expect(Value.indexCompare(a, b) == expected, "pool[\(i)] vs pool[\(j)]")
            }
        }
    }
}
