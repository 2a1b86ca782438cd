import Foundation
import OpenSwiftDataStore
import Testing

/// `ColumnFilter` (bitmap kernels over columns) against `RowEvaluator` (the
/// interpreter), on random expressions over typed columns holding values of their
/// own kind, nil, NaN, and now and then a value of another kind.
@Suite struct ColumnFilterTests {
    static let kinds: [ColumnKind] = [.bool, .int, .double, .string, .date, .uint, .value]
    /// Values each column kind is filled from (nil is added to all).
    static let pools: [[Value]] = [
        [.bool(true), .bool(false)],
        [.int(-1), .int(0), .int(3), .int(.max)],
        [.double(-0.0), .double(0), .double(2.5), .double(.nan), .double(.infinity), .double(-1)],
        [.string(""), .string("a"), .string("B"), .string("é"), .string("e\u{301}")],
        [.date(Date(timeIntervalSinceReferenceDate: 0)), .date(Date(timeIntervalSinceReferenceDate: 10)),
         .date(Date(timeIntervalSinceReferenceDate: -5)), .date(Date(timeIntervalSinceReferenceDate: .nan)),
         .date(Date(timeIntervalSinceReferenceDate: -0.0))],
        [.uint(0), .uint(3), .uint(.max)],
        [.data(Data([1])), .array([.int(1)]), .int(3), .string("a")],
    ]
    /// Constants: every pool's values and some of other kinds.
    static let constants: [Value] = pools.flatMap { $0 } + [.null, .uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)))]

    func operand(_ rng: inout SplitMix) -> QueryExpression {
        Int.random(in: 0..<3, using: &rng) > 0
            ? .attribute(.root, entity: 0, slot: Int.random(in: 0..<Self.kinds.count, using: &rng))
            : .constant(Self.constants.randomElement(using: &rng)!)
    }

    func expression(_ rng: inout SplitMix) -> QueryExpression {
        randomPredicate(&rng, operand: operand, booleanSlot: { Int.random(in: 0..<Self.kinds.count, using: &$0) })
    }

    /// A table of `n` random rows across several segments, some deleted; with
    /// `mixed`, a few values of another kind than their column's.
    func table(_ n: Int, mixed: Bool, _ rng: inout SplitMix) -> Table {
        var table = Table(kinds: Self.kinds)
        for _ in 0..<n {
            let row: Row = Self.pools.map { pool in
                if Int.random(in: 0..<8, using: &rng) == 0 { return .null }
                if mixed, Int.random(in: 0..<500, using: &rng) == 0 { return Self.constants.randomElement(using: &rng)! }
                return pool.randomElement(using: &rng)!
            }
            _ = table.insert(row)
        }
        for id in table.rowIDs where Int.random(in: 0..<7, using: &rng) == 0 { table.remove(id) }
        table._checkInvariants()
        return table
    }

    @Test(arguments: [(UInt64(1), false), (2, false), (3, true), (4, true)])
    func kernelsAnswerAsTheInterpreterDoes(seed: UInt64, mixed: Bool) throws {
        var rng = SplitMix(seed: seed)
        let stored = table(Table.segmentSize + 700, mixed: mixed, &rng)
        let schema = StoreSchema(entities: [
            EntityDescription(
                name: "Row",
                attributes: Self.kinds.indices.map { AttributeDescription(name: "a\($0)", type: .string, isOptional: true) },
                relationships: []),
        ])
        var evaluator = RowEvaluator(version: StoreVersion(schema: schema, tables: [Table(entity: schema.entities[0])], generation: 0))
        var rows: [(RowID, Row)] = []
        stored.forEach { rows.append(($0, $1)) }
        var held = 0, checked = 0
        for _ in 0..<100 {
            let predicate = expression(&rng)
            let filter = try #require(ColumnFilter(predicate, kinds: Self.kinds), "\(predicate)")
            var expected: [RowID] = []
            for (id, row) in rows where try evaluator.test(predicate, row: row, id: id) { expected.append(id) }
            var matched: [RowID] = []
            stored.forEachMatch(filter) { matched.append($0) }
            #expect(matched == expected, "\(predicate)")
            #expect(stored.countMatches(filter) == expected.count, "\(predicate)")
            held += expected.count
            checked += rows.count
        }
        #expect(held > checked / 10 && held < checked * 9 / 10)
    }

    @Test func expressionsOutsideThePartAreLeftToTheInterpreter() {
        let kinds: [ColumnKind] = [.int, .int]
        #expect(ColumnFilter(.arithmetic(.add, .constant(.int(1)), .constant(.int(2))), kinds: kinds) == nil)
        #expect(ColumnFilter(.equal(.attribute(.variable(0), entity: 0, slot: 1), .constant(.int(1))), kinds: kinds) == nil)
        #expect(ColumnFilter(.equal(.attribute(.root, entity: 0, slot: 5), .constant(.int(1))), kinds: kinds) == nil)
        #expect(ColumnFilter(.and(.constant(.bool(true)), .count(.attribute(.root, entity: 0, slot: 1))), kinds: kinds) == nil)
    }
}
