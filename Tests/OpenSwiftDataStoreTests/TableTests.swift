import OpenSwiftDataStore
import Testing

/// Chunked copy-on-write tables.
@Suite struct TableTests {
    @Test func insertReadUpdateRemove() {
        var table = Table()
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

    @Test func copiesShareUntouchedRowsAndDivergeOnWrite() {
        var original = Table()
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
}
