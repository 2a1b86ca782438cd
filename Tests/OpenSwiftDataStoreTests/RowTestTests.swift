import Foundation
import OpenSwiftDataStore
import Testing

/// `RowTest` (closures a scan runs) against `RowEvaluator` (the interpreter), on
/// random expressions of the part `RowTest` takes and random rows with every kind
/// it compares in place, other kinds, nil and NaN.
@Suite struct RowTestTests {
    static let slots = 6
    static let pool: [Value] = [
        .null, .bool(true), .bool(false), .int(-1), .int(0), .int(3), .double(-0.0), .double(0), .double(2.5), .double(.nan),
        .double(.infinity), .string(""), .string("a"), .string("B"), .string("é"), .string("e\u{301}"),
        .date(Date(timeIntervalSinceReferenceDate: 0)), .date(Date(timeIntervalSinceReferenceDate: 10)), .uint(3),
        .data(Data([1])), .array([.int(1)]),
    ]

    func operand(_ rng: inout SplitMix) -> QueryExpression {
        Bool.random(using: &rng)
            ? .attribute(.root, entity: 0, slot: Int.random(in: 0..<Self.slots, using: &rng))
            : .constant(Self.pool.randomElement(using: &rng)!)
    }

    func expression(_ rng: inout SplitMix) -> QueryExpression {
        randomPredicate(&rng, operand: operand, booleanSlot: { _ in 0 })
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func closuresAnswerAsTheInterpreterDoes(seed: UInt64) throws {
        var rng = SplitMix(seed: seed)
        let schema = StoreSchema(entities: [
            EntityDescription(
                name: "Row",
                attributes: (0..<Self.slots).map { AttributeDescription(name: "a\($0)", type: .string, isOptional: true) },
                relationships: []),
        ])
        var evaluator = RowEvaluator(version: StoreVersion(schema: schema, tables: [Table(entity: schema.entities[0])], generation: 0))
        let rows: [Row] = (0..<60).map { _ in (0..<Self.slots).map { _ in Self.pool.randomElement(using: &rng)! } }
        var checked = 0, held = 0
        for _ in 0..<400 {
            let predicate = expression(&rng)
            let test = try #require(RowTest(predicate), "\(predicate)")
            for row in rows {
                let expected = try evaluator.test(predicate, row: row, id: RowID(1))
                #expect(test(row) == expected, "\(predicate) on \(row)")
                checked += 1
                if expected { held += 1 }
            }
        }
        #expect(held > checked / 10 && held < checked * 9 / 10)
    }

    @Test func expressionsOutsideThePartAreLeftToTheInterpreter() {
        #expect(RowTest(.arithmetic(.add, .constant(.int(1)), .constant(.int(2)))) == nil)
        #expect(RowTest(.equal(.attribute(.variable(0), entity: 0, slot: 1), .constant(.int(1)))) == nil)
        #expect(RowTest(.and(.constant(.bool(true)), .count(.attribute(.root, entity: 0, slot: 1)))) == nil)
    }

    /// NaN compares false both ways, as Swift's operators (and `Predicate.evaluate`) have it.
    @Test func notANumberComparesFalse() throws {
        var evaluator = RowEvaluator(version: StoreVersion(schema: StoreSchema(entities: []), tables: [], generation: 0))
        for op in [QueryExpression.ComparisonOperator.lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual] {
            let predicate = QueryExpression.compare(op, .attribute(.root, entity: 0, slot: 0), .constant(.double(1)))
            #expect(try evaluator.test(predicate, row: [.double(.nan)], id: RowID(1)) == false)
            let test = try #require(RowTest(predicate))
            #expect(test([.double(.nan)]) == false)
        }
    }
}
