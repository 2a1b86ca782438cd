/// A comparison operand the compiled filters (`RowTest`, `ColumnFilter`) read in
/// place: an attribute of the row being tested, or a constant.
enum QueryOperand {
    case slot(Int)
    case constant(Value)

    init?(_ expression: QueryExpression) {
        switch expression {
        case let .attribute(.root, _, slot): self = .slot(slot)
        case let .constant(value): self = .constant(value)
        default: return nil
        }
    }
}
