import Foundation
import OpenSwiftDataStore
import Testing

/// Indexes over one number, date, `Bool` or string hold packed keys; they must keep
/// the order, ties, bounds and equality that general `Value` keys give.
@Suite struct PackedIndexTests {
    /// One entity with every packable attribute kind, each indexed, and a unique `Double`.
    static let schema = StoreSchema(entities: [
        EntityDescription(
            name: "Sample",
            attributes: [
                AttributeDescription(name: "i", type: .int(bits: 64), isOptional: false),
                AttributeDescription(name: "u", type: .uint(bits: 64), isOptional: false),
                AttributeDescription(name: "d", type: .double, isOptional: false),
                AttributeDescription(name: "t", type: .date, isOptional: false),
                AttributeDescription(name: "b", type: .bool, isOptional: false),
                AttributeDescription(name: "s", type: .string, isOptional: false),
                AttributeDescription(name: "key", type: .double, isOptional: false, isUnique: true),
            ],
            relationships: [],
            uniqueness: [[6]],
            indices: (0..<6).map { IndexDescription(kind: .binary, slots: [$0]) }),
    ])

    static let ints: [Int64] = [.min, .min + 1, -2, -1, 0, 1, 2, .max - 1, .max]
    static let uints: [UInt64] = [0, 1, 2, 1 << 63, .max - 1, .max]
    static let doubles: [Double] = [
        -.infinity, -.greatestFiniteMagnitude, -1.5, -.leastNonzeroMagnitude, -0.0, 0.0, .leastNonzeroMagnitude, 1, 1.5,
        .greatestFiniteMagnitude, .infinity, .nan, -Double.nan, .signalingNaN,
    ]
    static let strings = ["", "a", "ab", "b", "Z", "ä", "a\u{308}", "é", "🙂", "a\u{0}", "zzzzzzzzzzzzzzzzzzzz"]

    static func value(_ slot: Int, using rng: inout SplitMix) -> Value {
        switch slot {
        case 0: .int(ints.randomElement(using: &rng)!)
        case 1: .uint(uints.randomElement(using: &rng)!)
        case 2: .double(doubles.randomElement(using: &rng)!)
        case 3: .date(Date(timeIntervalSinceReferenceDate: doubles.randomElement(using: &rng)!))
        case 4: .bool(Bool.random(using: &rng))
        default: .string(strings.randomElement(using: &rng)!)
        }
    }

    /// Bounds of the index's kind and of others (a `.double` on an `.int` index, nil, a string).
    static func bound(_ slot: Int, using rng: inout SplitMix) -> IndexBound {
        let foreign: [Value] = [.null, .int(1), .uint(1), .double(1.5), .double(.nan), .string("a"), .bool(true),
                                .date(Date(timeIntervalSinceReferenceDate: 1))]
        let value = Int.random(in: 0..<4, using: &rng) == 0 ? foreign.randomElement(using: &rng)! : Self.value(slot, using: &rng)
        return IndexBound([value], inclusive: Bool.random(using: &rng))
    }

    /// `Value.indexCompare` is the general index's order; rows break ties.
    static func expectedOrder(_ rows: [(RowID, Row)], slot: Int) -> [RowID] {
        rows.sorted { a, b in
            let c = Value.indexCompare(a.1[slot], b.1[slot])
            return c != 0 ? c < 0 : a.0 < b.0
        }.map(\.0)
    }

    static func scan(_ index: OrderedIndex, from lower: IndexBound?, to upper: IndexBound?, reverse: Bool = false) -> [RowID] {
        var rows: [RowID] = []
        index.scan(from: lower, to: upper, reverse: reverse) { rows.append($0.row); return true }
        return rows
    }

    static func check(_ version: StoreVersion, using rng: inout SplitMix) {
        version._checkInvariants()
        var rows: [(RowID, Row)] = []
        version.tables[0].forEach { rows.append(($0, $1)) }
        let byID = Dictionary(uniqueKeysWithValues: rows)
        for slot in 0..<6 {
            let index = version.orderedIndexes[0][slot]
            let order = expectedOrder(rows, slot: slot)
            #expect(scan(index, from: nil, to: nil) == order, "slot \(slot)")
            #expect(scan(index, from: nil, to: nil, reverse: true) == order.reversed(), "slot \(slot) reversed")
            for _ in 0..<20 {
                let lower = bound(slot, using: &rng), upper = bound(slot, using: &rng)
                let within = order.filter { id in
                    let v = byID[id]![slot]
                    let l = Value.indexCompare(v, lower.prefix[0]), u = Value.indexCompare(v, upper.prefix[0])
                    return (l > 0 || (l == 0 && lower.inclusive)) && (u < 0 || (u == 0 && upper.inclusive))
                }
                #expect(scan(index, from: lower, to: upper) == within, "slot \(slot) from \(lower) to \(upper)")
                #expect(scan(index, from: lower, to: upper, reverse: true) == within.reversed())
            }
        }
    }

    @Test(arguments: [1, 2, 3])
    func packedIndexesOrderAndBoundAsValuesDo(seed: UInt64) throws {
        var rng = SplitMix(seed: seed)
        let store = Store(schema: Self.schema)
        var live: [RowID] = []
        var nextKey = 0.0
        for round in 0..<12 {
            var changes = ChangeSet()
            for i in 0..<Int.random(in: 20...120, using: &rng) {
                nextKey += 1
                var row = (0..<6).map { Self.value($0, using: &rng) }
                row.append(.double(nextKey))
                changes.inserts.append(.init(entity: 0, temporaryID: RowID(Int64(-1 - i)), row: row))
            }
            for id in live.shuffled(using: &rng).prefix(15) {
                let slot = Int.random(in: 0..<6, using: &rng)
                changes.updates.append(.init(entity: 0, id: id, values: [slot: Self.value(slot, using: &rng)]))
            }
            let updated = Set(changes.updates.map(\.id))
            for id in live.shuffled(using: &rng).prefix(round % 3 * 10) where !updated.contains(id) {
                changes.deletes.append(.init(entity: 0, id: id))
            }
            _ = try store.commit(changes)
            live = store.current.tables[0].rowIDs
            Self.check(store.current, using: &rng)
        }
        // A bulk build (how documents open) gives the same indexes.
        let rebuilt = StoreVersion(schema: Self.schema, tables: store.current.tables, generation: 1)
        for slot in 0..<6 {
            #expect(Self.scan(rebuilt.orderedIndexes[0][slot], from: nil, to: nil)
                        == Self.scan(store.current.orderedIndexes[0][slot], from: nil, to: nil))
        }
        Self.check(rebuilt, using: &rng)
    }

    static func sample(key: Double) -> Row {
        [.int(0), .uint(0), .double(0), .date(Date(timeIntervalSinceReferenceDate: 0)), .bool(false), .string("x"), .double(key)]
    }

    @Test func packedUniqueKeysAreEqualAsValues() throws {
        let store = Store(schema: Self.schema)
        var changes = ChangeSet()
        changes.inserts.append(.init(entity: 0, temporaryID: RowID(-1), row: Self.sample(key: 0.0)))
        changes.inserts.append(.init(entity: 0, temporaryID: RowID(-2), row: Self.sample(key: .nan)))
        changes.inserts.append(.init(entity: 0, temporaryID: RowID(-3), row: Self.sample(key: .nan)))
        let result = try store.commit(changes)
        // Two NaNs are not equal, so they do not clash, and no lookup finds one.
        #expect(store.current.tables[0].count == 3)
        #expect(store.current.lookup(unique: [.double(.nan)], constraint: 0, of: 0) == nil)
        // -0.0 == 0.0: the same key.
        let zero = try #require(result.assigned[EntityRow(entity: 0, id: RowID(-1))])
        #expect(store.current.lookup(unique: [.double(-0.0)], constraint: 0, of: 0) == zero)
        // An insert under an existing key updates that row (SwiftData's upsert).
        var upsert = ChangeSet()
        upsert.inserts.append(.init(entity: 0, temporaryID: RowID(-1), row: Self.sample(key: -0.0)))
        let upserted = try store.commit(upsert)
        #expect(upserted.assigned[EntityRow(entity: 0, id: RowID(-1))] == zero)
        #expect(store.current.tables[0].count == 3)
        // A value of another kind is never equal to a packed one.
        #expect(store.current.lookup(unique: [.int(0)], constraint: 0, of: 0) == nil)
        store.current._checkInvariants()
    }

    /// A value the packed kind cannot hold (an integer in a `Double` column, as an
    /// imported document may have; a nil in a non-optional attribute) turns the index
    /// general, and every entry stays.
    @Test func aValueThatDoesNotPackMakesTheIndexGeneral() throws {
        var rng = SplitMix(seed: 5)
        let store = Store(schema: Self.schema)
        var first = ChangeSet()
        for i in 0..<300 { first.inserts.append(.init(entity: 0, temporaryID: RowID(Int64(-1 - i)), row: Self.sample(key: Double(i)))) }
        _ = try store.commit(first)
        var odd = ChangeSet()
        var row = Self.sample(key: 1_000)
        row[2] = .int(3)
        row[5] = .null
        row[6] = .int(7)
        odd.inserts.append(.init(entity: 0, temporaryID: RowID(-1), row: row))
        let oddID = try #require(try store.commit(odd).assigned[EntityRow(entity: 0, id: RowID(-1))])
        Self.check(store.current, using: &rng)
        // `.int(7)` and `.double(7)` are different keys (`Value`'s `==`).
        #expect(store.current.lookup(unique: [.int(7)], constraint: 0, of: 0) == oddID)
        #expect(store.current.lookup(unique: [.double(7)], constraint: 0, of: 0) == RowID(8))
        #expect(store.current.lookup(unique: [.double(299)], constraint: 0, of: 0) != nil)
        // The bulk build takes the same turn.
        Self.check(StoreVersion(schema: Self.schema, tables: store.current.tables, generation: 2), using: &rng)
    }

    /// Commits inserting at least 1,024 rows of an entity, and as many as it holds,
    /// index them in bulk (sorted and merged): the indexes must be those row-by-row
    /// inserts give, into an empty entity, into one holding rows, and beside updates
    /// and deletes; NaN unique keys clash with nothing.
    @Test func bulkInsertsIndexAsRowByRowInsertsDo() throws {
        var rng = SplitMix(seed: 7)
        let store = Store(schema: Self.schema)
        var nextKey = 0.0
        var live: [RowID] = []
        for (round, count) in [1_500, 2_000, 1_100, 4_700, 1_024].enumerated() {
            var changes = ChangeSet()
            for i in 0..<count {
                nextKey += 1
                var row = (0..<6).map { Self.value($0, using: &rng) }
                row.append(.double(i % 97 == 0 ? .nan : nextKey))
                changes.inserts.append(.init(entity: 0, temporaryID: RowID(Int64(-1 - i)), row: row))
            }
            if round == 3 {
                for id in live.shuffled(using: &rng).prefix(40) { changes.updates.append(.init(entity: 0, id: id, values: [5: .string("moved")])) }
                let updated = Set(changes.updates.map(\.id))
                for id in live.shuffled(using: &rng).prefix(30) where !updated.contains(id) { changes.deletes.append(.init(entity: 0, id: id)) }
            }
            let deleted = changes.deletes.count
            let before = store.current.tables[0].count
            let result = try store.commit(changes)
            #expect(result.upserted.isEmpty)
            #expect(store.current.tables[0].count == before + count - deleted)
            live = store.current.tables[0].rowIDs
            Self.check(store.current, using: &rng)
        }
        #expect(store.current.lookup(unique: [.double(nextKey)], constraint: 0, of: 0) == live.last)
    }

    /// A large insert whose unique keys clash, with a stored row's or with each other,
    /// upserts as a small one does: the later row takes over the earlier one's.
    @Test func bulkInsertsWithClashingKeysUpsert() throws {
        var rng = SplitMix(seed: 8)
        let store = Store(schema: Self.schema)
        var first = ChangeSet()
        first.inserts.append(.init(entity: 0, temporaryID: RowID(-1), row: Self.sample(key: 5)))
        let stored = try #require(try store.commit(first).assigned[EntityRow(entity: 0, id: RowID(-1))])

        var second = ChangeSet()
        for i in 0..<2_000 { second.inserts.append(.init(entity: 0, temporaryID: RowID(Int64(-1 - i)), row: Self.sample(key: Double(i)))) }
        let upsert = try store.commit(second)
        #expect(upsert.upserted == [EntityRow(entity: 0, id: RowID(-6))])
        #expect(upsert.assigned[EntityRow(entity: 0, id: RowID(-6))] == stored)
        #expect(store.current.tables[0].count == 2_000)
        Self.check(store.current, using: &rng)

        var third = ChangeSet()
        for i in 0..<3_000 {
            let key = i == 2_999 ? 10_000 : Double(10_000 + i)
            third.inserts.append(.init(entity: 0, temporaryID: RowID(Int64(-1 - i)), row: Self.sample(key: key)))
        }
        let twice = try store.commit(third)
        #expect(twice.upserted == [EntityRow(entity: 0, id: RowID(-3_000))])
        #expect(twice.assigned[EntityRow(entity: 0, id: RowID(-3_000))] == twice.assigned[EntityRow(entity: 0, id: RowID(-1))])
        #expect(store.current.tables[0].count == 4_999)
        Self.check(store.current, using: &rng)
    }

    /// String indexes order by NFC-normalized scalars with `==` as ties, a strict
    /// weak order even where Swift 6.3's `<` is not one: across strings
    /// normalization changes (combining marks, precomposed letters, Hangul jamo and
    /// syllables, the KELVIN and ANGSTROM SIGNs, a ligature, CR LF, DEL) and scripts
    /// the byte comparison decides alone (Cyrillic, CJK), built in bulk and row by row.
    @Test func stringIndexesOrderByNormalizedScalars() throws {
        let schema = StoreSchema(entities: [
            EntityDescription(
                name: "Text", attributes: [AttributeDescription(name: "s", type: .string, isOptional: false)],
                relationships: [], indices: [IndexDescription(kind: .binary, slots: [0])]),
        ])
        let pieces = [
            "a", "e", "K", "k", "z", "A", "0", " ", "-", "\r", "\n", "\u{0}", "\u{7F}", "\u{301}", "\u{308}", "\u{327}",
            "é", "ä", "\u{212A}", "\u{212B}", "Å", "\u{1100}", "\u{1161}", "\u{11A8}", "가", "🙂", "\u{FB01}", "ü",
            "я", "й", "и\u{306}", "日", "本", "か", "\u{3099}", "が", "Ω", "\u{2126}",
        ]
        var rng = SplitMix(seed: 11)
        func text() -> String { (0..<Int.random(in: 0...6, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined() }
        let store = Store(schema: schema)
        var bulk = ChangeSet()
        for i in 0..<1_500 { bulk.inserts.append(.init(entity: 0, temporaryID: RowID(Int64(-1 - i)), row: [.string(text())])) }
        _ = try store.commit(bulk)
        for _ in 0..<10 {
            var small = ChangeSet()
            for i in 0..<50 { small.inserts.append(.init(entity: 0, temporaryID: RowID(Int64(-1 - i)), row: [.string(text())])) }
            _ = try store.commit(small)
        }
        let version = store.current
        version._checkInvariants()
        var rows: [(id: RowID, text: String)] = []
        version.tables[0].forEach { id, row in
            if case let .string(text) = row[0] { rows.append((id, text)) }
        }
        // The reference: Foundation's NFC, scalar by scalar; rows break ties.
        func normalized(_ s: String) -> [UInt32] { s.precomposedStringWithCanonicalMapping.unicodeScalars.map(\.value) }
        let expected = rows.map { ($0.id, normalized($0.text)) }.sorted { a, b in
            a.1 != b.1 ? a.1.lexicographicallyPrecedes(b.1) : a.0 < b.0
        }.map(\.0)
        let index = version.orderedIndexes[0][0]
        #expect(Self.scan(index, from: nil, to: nil) == expected)
        for row in rows.shuffled(using: &rng).prefix(200) {
            let bound = IndexBound([.string(row.text)], inclusive: true)
            let tied = Self.scan(index, from: bound, to: bound)
            let equal = rows.filter { $0.text == row.text }.map(\.id)
            #expect(Set(tied) == Set(equal), "ties of \(row.text.unicodeScalars.map(\.value))")
        }
    }

    /// A large insert of ASCII strings sorts by radix on their first eight bytes, long
    /// runs of one prefix by radix on the next eight (to 32 bytes), then by comparison
    /// within what is left tied: shared prefixes, NULs against the padding in either
    /// chunk, strings on both sides of the small-string limit (15 bytes) and
    /// duplicates (kept in row order) come out as `String`s do.
    @Test func bulkInsertsOfASCIIStringsSortByPrefixThenString() throws {
        let schema = StoreSchema(entities: [
            EntityDescription(
                name: "Text", attributes: [AttributeDescription(name: "s", type: .string, isOptional: false)],
                relationships: [], indices: [IndexDescription(kind: .binary, slots: [0])]),
        ])
        var rng = SplitMix(seed: 13)
        let stems = [
            "", "a", "trip-", "trip-1", "trip-12\u{0}", "trip-123", "trip-1234\u{0}", "trip-12345678",
            "a much longer ascii stem, past fifteen bytes ",
        ]
        let store = Store(schema: schema)
        var changes = ChangeSet()
        var texts: [String] = []
        for i in 0..<6_000 {
            let text = stems.randomElement(using: &rng)! + String(Int.random(in: 0..<400, using: &rng)) + (i % 5 == 0 ? "\u{0}" : "")
            texts.append(text)
            changes.inserts.append(.init(entity: 0, temporaryID: RowID(Int64(-1 - i)), row: [.string(text)]))
        }
        _ = try store.commit(changes)
        store.current._checkInvariants()
        // Row i + 1 holds texts[i]; ties keep row order.
        let expected = texts.indices.sorted { a, b in
            texts[a] != texts[b] ? Array(texts[a].utf8).lexicographicallyPrecedes(Array(texts[b].utf8)) : a < b
        }.map { RowID(Int64($0 + 1)) }
        #expect(Self.scan(store.current.orderedIndexes[0][0], from: nil, to: nil) == expected)
    }

    /// A large insert with a value the packed kind cannot hold indexes that index row
    /// by row (turning it general), and the others in bulk.
    @Test func bulkInsertsWithAValueThatDoesNotPack() throws {
        var rng = SplitMix(seed: 9)
        let store = Store(schema: Self.schema)
        var changes = ChangeSet()
        for i in 0..<1_500 {
            var row = Self.sample(key: Double(i))
            if i == 700 { row[2] = .int(3) }
            changes.inserts.append(.init(entity: 0, temporaryID: RowID(Int64(-1 - i)), row: row))
        }
        _ = try store.commit(changes)
        #expect(store.current.tables[0].count == 1_500)
        Self.check(store.current, using: &rng)
        #expect(store.current.lookup(unique: [.double(700)], constraint: 0, of: 0) == RowID(701))
    }
}

/// A scan whose body throws ends cleanly: bounds, keys and entries are released
/// once (a double release here freed strings the table still held).
@Suite struct IndexScanThrowTests {
    struct Stop: Error {}

    @Test func throwingOutOfAStringScanReleasesNothingTwice() throws {
        let store = Store(schema: PackedIndexTests.schema)
        var changes = ChangeSet()
        for i in 0..<200 {
            var row = PackedIndexTests.sample(key: Double(i))
            row[5] = .string(String(repeating: "long string value ", count: 2) + "\(i)")
            changes.inserts.append(.init(entity: 0, temporaryID: RowID(Int64(-1 - i)), row: row))
        }
        _ = try store.commit(changes)
        for round in 0..<500 {
            let version = store.current
            let lower = IndexBound([.string(String(repeating: "long string value ", count: 2) + "\(round % 50)")], inclusive: true)
            let upper = IndexBound([.string(String(repeating: "long string value ", count: 2) + "z")], inclusive: round % 2 == 0)
            #expect(throws: Stop.self) {
                try version.orderedIndexes[0][5].scan(from: lower, to: upper) { _ in throw Stop() }
            }
            #expect(throws: Stop.self) {
                try version.orderedIndexes[0][0].scan(from: IndexBound([.int(0)], inclusive: true), to: nil) { _ in throw Stop() }
            }
        }
        store.current._checkInvariants()
        var count = 0
        store.current.orderedIndexes[0][5].scan { entry in
            if case .string = entry.key.head { count += 1 }
            return true
        }
        #expect(count == 200)
    }
}

/// Documents store each index's row order; opening rebuilds packed and general
/// indexes from it, including one that turned general before the snapshot.
@Suite struct PackedIndexDocumentTests {
    let folder: TemporaryFolder
    init() throws { folder = try TemporaryFolder() }

    func open(_ path: String) throws -> Store { try DocumentFixture.openStore(path, schema: PackedIndexTests.schema) }

    static func scans(_ version: StoreVersion) -> [[RowID]] {
        version.orderedIndexes[0].map { PackedIndexTests.scan($0, from: nil, to: nil) }
    }

    @Test func indexesReopenFromTheStoredOrder() throws {
        defer { folder.remove() }
        let path = folder.path("packed.store")
        var rng = SplitMix(seed: 8)
        let expected: [[RowID]]
        do {
            let store = try open(path)
            var changes = ChangeSet()
            for i in 0..<400 {
                var row = (0..<6).map { PackedIndexTests.value($0, using: &rng) }
                row.append(.double(Double(i)))
                changes.inserts.append(.init(entity: 0, temporaryID: RowID(Int64(-1 - i)), row: row))
            }
            let ids = try store.commit(changes).assigned.values
            // Slot 2 turns general (an integer in a `Double` column), then the snapshot.
            var odd = ChangeSet()
            odd.updates.append(.init(entity: 0, id: ids[0], values: [2: .int(5)]))
            _ = try store.commit(odd)
            try store.compact()
            // The journal touches rows after the snapshot, one with a value that does not pack.
            var later = ChangeSet()
            later.updates.append(.init(entity: 0, id: ids[1], values: [0: .int(-3), 5: .string("zz")]))
            later.updates.append(.init(entity: 0, id: ids[2], values: [3: .null]))
            later.deletes.append(.init(entity: 0, id: ids[3]))
            _ = try store.commit(later)
            store.current._checkInvariants()
            expected = Self.scans(store.current)
        }
        let reopened = try open(path)
        reopened.current._checkInvariants()
        #expect(Self.scans(reopened.current) == expected)
        PackedIndexTests.check(reopened.current, using: &rng)
    }
}
