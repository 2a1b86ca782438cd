import OpenSwiftDataStore

/// Random predicates of the part `RowTest` and `ColumnFilter` compile: comparisons,
/// equality, Boolean attributes and constants, joined by `&&`, `||` and `!`.
/// `operand` draws the sides of a comparison; `booleanSlot` the attribute read as a
/// Boolean on its own.
func randomPredicate(
    depth: Int = 0, _ rng: inout SplitMix,
    operand: (inout SplitMix) -> QueryExpression, booleanSlot: (inout SplitMix) -> Int
) -> QueryExpression {
    func next(_ rng: inout SplitMix) -> QueryExpression {
        randomPredicate(depth: depth + 1, &rng, operand: operand, booleanSlot: booleanSlot)
    }
    switch Int.random(in: 0...(depth > 3 ? 4 : 8), using: &rng) {
    case 0: return .equal(operand(&rng), operand(&rng))
    case 1: return .notEqual(operand(&rng), operand(&rng))
    case 2, 3:
        let op = [QueryExpression.ComparisonOperator.lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual]
            .randomElement(using: &rng)!
        return .compare(op, operand(&rng), operand(&rng))
    case 4:
        return Bool.random(using: &rng)
            ? .attribute(.root, entity: 0, slot: booleanSlot(&rng))
            : .constant(.bool(Bool.random(using: &rng)))
    case 5, 6: return .and(next(&rng), next(&rng))
    case 7: return .or(next(&rng), next(&rng))
    default: return .not(next(&rng))
    }
}
