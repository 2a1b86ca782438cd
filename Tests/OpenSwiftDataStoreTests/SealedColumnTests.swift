import Foundation
import OpenSwiftDataStore
import Testing

/// Full segments' columns in their small forms (`ColumnForm`): bit-packed numbers,
/// strings back to back, dictionaries shared between segments. Every value reads back
/// to the bit, through writes that fit the form and writes that do not, in copies
/// taken along the way, through kernels, and through a document.
@Suite struct SealedColumnTests {
    static let schema = StoreSchema(entities: [
        EntityDescription(
            name: "Trip",
            attributes: [
                AttributeDescription(name: "name", type: .string, isOptional: false),
                AttributeDescription(name: "city", type: .string, isOptional: false),
                AttributeDescription(name: "start", type: .date, isOptional: false),
                AttributeDescription(name: "price", type: .double, isOptional: false),
                AttributeDescription(name: "latitude", type: .double, isOptional: false),
                AttributeDescription(name: "nights", type: .int(bits: 64), isOptional: false),
                AttributeDescription(name: "notes", type: .string, isOptional: true),
                AttributeDescription(name: "code", type: .string, isOptional: false),
            ],
            relationships: [],
            uniqueness: [[0]],
            indices: [IndexDescription(kind: .binary, slots: [7])]),
    ])
    static let kinds = ColumnKind.kinds(of: schema.entities[0])

    /// A trip: a unique short name, one of 300 cities, a start in whole seconds, a price
    /// in cents, a latitude of any bits, a number of nights, a long note on about a
    /// third, and a long indexed code.
    static func row(_ i: Int, _ rng: inout SplitMix) -> Row {
        [
            .string("trip-\(i)"),
            .string("city \(Int.random(in: 0..<300, using: &rng))"),
            .date(Date(timeIntervalSinceReferenceDate: 631_152_000 + Double(Int.random(in: 0..<315_000_000, using: &rng)))),
            .double(Double(Int.random(in: 20...998_020, using: &rng)) / 100),
            .double(Double.random(in: -90...90, using: &rng)),
            .int(Int64.random(in: 1...21, using: &rng)),
            Int.random(in: 0..<3, using: &rng) == 0 ? .string("note \(Int.random(in: 0..<1_000_000, using: &rng)) for trip \(i)") : .null,
            .string("booking-code-\(i)-\(Int.random(in: 0..<1_000, using: &rng))"),
        ]
    }

    /// A value for `slot` that the slot's sealed form may not hold: a fraction finer
    /// than cents, a date off the second, -0.0, NaN, a number far outside the frame,
    /// nil, a long string, a value of another kind.
    static func awkward(_ slot: Int, _ rng: inout SplitMix) -> Value {
        let choices: [Value] = switch slot {
        case 2: [.date(Date(timeIntervalSinceReferenceDate: 1.5)), .date(Date(timeIntervalSinceReferenceDate: -0.0)),
                 .date(Date(timeIntervalSinceReferenceDate: 1e15)), .date(Date(timeIntervalSinceReferenceDate: .nan))]
        case 3, 4: [.double(0.1 + 0.2), .double(-0.0), .double(.nan), .double(.infinity), .double(1e300), .double(12.34), .null]
        case 5: [.int(.max), .int(.min), .int(0), .null, .string("not a number")]
        case 6: [.null, .string(""), .string("a note long enough to live out of line, é and e\u{301}")]
        default: [.string("x"), .string("a string longer than fifteen bytes"), .string("e\u{301}")]
        }
        return choices.randomElement(using: &rng)!
    }

    static func expectSame(_ table: Table, _ model: [Int64: Row], _ comment: Comment? = nil) {
        table._checkInvariants()
        #expect(table.count == model.count, comment)
        var differing = 0
        for (raw, row) in model {
            guard let stored = table[RowID(raw)], stored.count == row.count,
                  zip(stored, row).allSatisfy({ $0.isIdentical(to: $1) }) else {
                differing += 1
                continue
            }
        }
        #expect(differing == 0, comment)
    }

    @Test func fullSegmentsTakeTheirSmallForms() {
        var rng = SplitMix(seed: 7)
        var table = Table(entity: Self.schema.entities[0])
        let rows = (0..<(3 * Table.segmentSize + 100)).map { Self.row($0, &rng) }
        table.insert(contentsOf: rows)
        let storage = table._storage()
        // Three full segments sealed; the last, partly filled, stays plain.
        #expect(storage[0].forms == [ColumnForm.heap: 3, .plain: 1], "short unique names, back to back")
        #expect(storage[1].forms == [ColumnForm.dictionary: 3, .plain: 1], "cities")
        #expect(storage[2].forms == [ColumnForm.packed: 3, .plain: 1], "dates in whole seconds")
        #expect(storage[3].forms == [ColumnForm.packed: 3, .plain: 1], "prices in cents")
        #expect(storage[4].forms == [ColumnForm.plain: 4], "latitudes of any bits")
        #expect(storage[5].forms == [ColumnForm.packed: 3, .plain: 1], "nights")
        #expect(storage[6].forms == [ColumnForm.heap: 3, .plain: 1], "long notes no index reads")
        #expect(storage[7].forms == [ColumnForm.plain: 4], "long codes an index also holds")
        #expect(storage[2].rawBytes == 8 * table.count)
        #expect(storage[0].rawBytes == rows.reduce(0) { total, row in
            if case let .string(name) = row[0] { total + name.utf8.count } else { total }
        })
        // Dates of one decade in seconds take 29 bits, prices up to 9,980.20 in cents 20.
        let rowsStored = Double(table.count)
        #expect(Double(storage[2].bytes) / rowsStored < 4.5)
        #expect(Double(storage[3].bytes) / rowsStored < 3.5)
        #expect(Double(storage[4].bytes) / rowsStored > 8)
        // 300 cities: one dictionary for every segment, so about 2 bytes a row.
        #expect(Double(storage[1].bytes) / rowsStored < 4)
        Self.expectSame(table, Dictionary(uniqueKeysWithValues: rows.enumerated().map { (Int64($0 + 1), $1) }))
    }

    /// Rows inserted one by one seal as rows inserted at once do.
    @Test func rowsInsertedOneByOneSealTheSame() {
        var rng = SplitMix(seed: 8)
        var single = Table(entity: Self.schema.entities[0]), batched = single
        let rows = (0..<(2 * Table.segmentSize + 10)).map { Self.row($0, &rng) }
        for row in rows { _ = single.insert(row) }
        batched.insert(contentsOf: rows)
        #expect(single._storage() == batched._storage())
        Self.expectSame(single, Dictionary(uniqueKeysWithValues: rows.enumerated().map { (Int64($0 + 1), $1) }))
    }

    /// Random writes to sealed segments, some that fit the form and some that do not
    /// (which unpack the column), deletes and inserts, against a dictionary; copies
    /// taken along the way keep what they held.
    @Test(arguments: [UInt64(1), 2, 3])
    func writesToSealedColumnsMatchADictionary(seed: UInt64) {
        var rng = SplitMix(seed: seed)
        var table = Table(entity: Self.schema.entities[0])
        var next = 0
        let rows = (0..<(2 * Table.segmentSize + 500)).map { _ in defer { next += 1 }; return Self.row(next, &rng) }
        table.insert(contentsOf: rows)
        var model = Dictionary(uniqueKeysWithValues: rows.enumerated().map { (Int64($0 + 1), $1) })
        var copies: [(Table, [Int64: Row])] = [(table, model)]
        for step in 0..<3_000 {
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<6:
                // One slot of one row: a fitting value most times, an awkward one else.
                guard let raw = model.keys.randomElement(using: &rng) else { continue }
                var row = model[raw]!
                let slot = Int.random(in: 0..<Self.kinds.count, using: &rng)
                row[slot] = Int.random(in: 0..<8, using: &rng) == 0 ? Self.awkward(slot, &rng) : Self.row(next, &rng)[slot]
                next += 1
                table.update(RowID(raw), to: row)
                model[raw] = row
            case 6, 7:
                guard let raw = model.keys.randomElement(using: &rng) else { continue }
                #expect(table.remove(RowID(raw)).map { _ in true } == true)
                model[raw] = nil
            default:
                let row = Self.row(next, &rng)
                next += 1
                model[table.insert(row).rawValue] = row
            }
            if step % 1_000 == 999 { copies.append((table, model)) }
        }
        Self.expectSame(table, model)
        for (copy, expected) in copies { Self.expectSame(copy, expected, "a copy") }
    }

    /// Values that no form holds exactly stay plain, and read back to the bit.
    @Test func valuesNoFormHoldsStayPlain() {
        var rng = SplitMix(seed: 9)
        var table = Table(entity: Self.schema.entities[0])
        var rows: [Row] = []
        for i in 0..<Table.segmentSize {
            var row = Self.row(i, &rng)
            if i == 100 { row[2] = .date(Date(timeIntervalSinceReferenceDate: -0.0)) }
            if i == 200 { row[3] = .double(0.1 + 0.2) }
            if i == 300 { row[5] = .int(.max) }
            if i == 301 { row[5] = .int(.min) }
            rows.append(row)
        }
        table.insert(contentsOf: rows)
        let storage = table._storage()
        #expect(storage[2].forms == [ColumnForm.plain: 1])
        #expect(storage[3].forms == [ColumnForm.plain: 1])
        #expect(storage[5].forms == [ColumnForm.plain: 1])
        Self.expectSame(table, Dictionary(uniqueKeysWithValues: rows.enumerated().map { (Int64($0 + 1), $1) }))
    }

    /// Kernels over sealed columns answer as the interpreter does over their rows.
    @Test func kernelsOverSealedColumnsAnswerAsTheInterpreterDoes() throws {
        var rng = SplitMix(seed: 10)
        var table = Table(entity: Self.schema.entities[0])
        table.insert(contentsOf: (0..<(Table.segmentSize + 300)).map { Self.row($0, &rng) })
        for id in table.rowIDs where Int.random(in: 0..<9, using: &rng) == 0 { table.remove(id) }
        var evaluator = RowEvaluator(version: StoreVersion(schema: Self.schema, tables: [table], generation: 0))
        var rows: [(RowID, Row)] = []
        table.forEach { rows.append(($0, $1)) }
        // A stored row's values, so equality and the operators' ends meet stored ones.
        let probe = rows[rows.count / 3].1
        let constants: [(Int, Value)] = [
            (0, .string("trip-77")), (1, .string("city 12")), (2, probe[2]), (3, .double(4_990.5)), (3, .double(20.2)),
            (4, .double(0)), (5, .int(11)), (6, .null), (6, .string("note")), (7, .string("booking-code-5")),
            // Packed numbers compare in their frame: values held, between units, at and
            // past the frame's ends, infinities, -0.0, NaN.
            (3, probe[3]), (2, probe[2]), (5, probe[5]), (3, .double(20.205)), (3, .double(0.2)), (3, .double(9_980.2)), (3, .double(-0.0)),
            (3, .double(.infinity)), (3, .double(-.infinity)), (3, .double(.nan)), (3, .double(1e300)),
            (2, .date(Date(timeIntervalSinceReferenceDate: 631_152_000.5))), (2, .date(Date(timeIntervalSinceReferenceDate: .nan))),
            (2, .date(Date(timeIntervalSinceReferenceDate: -1e20))),
        ]
        var held = 0
        for (slot, constant) in constants {
            let attribute = QueryExpression.attribute(.root, entity: 0, slot: slot)
            let predicates: [QueryExpression] = [
                .equal(attribute, .constant(constant)), .notEqual(attribute, .constant(constant)),
                .compare(.lessThan, attribute, .constant(constant)), .compare(.greaterThanOrEqual, .constant(constant), attribute),
                .compare(.lessThanOrEqual, attribute, .constant(constant)), .compare(.greaterThan, attribute, .constant(constant)),
            ]
            for predicate in predicates {
                let filter = try #require(ColumnFilter(predicate, kinds: Self.kinds))
                var expected: [RowID] = []
                for (id, row) in rows where try evaluator.test(predicate, row: row, id: id) { expected.append(id) }
                var matched: [RowID] = []
                table.forEachMatch(filter) { matched.append($0) }
                #expect(matched == expected, "\(predicate)")
                held += expected.count
            }
        }
        #expect(held > rows.count)
    }
}
