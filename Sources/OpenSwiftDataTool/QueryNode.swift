/// The parsed form of a `--where` filter or a `--sort` key (Docs/CLI.md, "Query
/// syntax"), before names are resolved against a schema.
indirect enum QueryNode {
    case literal(QueryLiteral, column: Int)
    /// An attribute or relationship, possibly through to-one relationships
    /// (`destination.name`); `#id` is the row's identifier.
    case path([String], column: Int)
    case comparison(QueryOperator, QueryNode, QueryNode, column: Int)
    case and(QueryNode, QueryNode)
    case or(QueryNode, QueryNode)
    case not(QueryNode, column: Int)

    var column: Int {
        switch self {
        case let .literal(_, column), let .path(_, column), let .comparison(_, _, _, column), let .not(_, column): column
        case let .and(l, _), let .or(l, _): l.column
        }
    }
}

enum QueryLiteral {
    /// Numbers keep their text: a decimal attribute takes it digit for digit.
    case integer(Int64, text: String)
    /// An integer above `Int64.max`, for UInt attributes.
    case unsignedInteger(UInt64, text: String)
    case number(Double, text: String)
    case string(String)
    case bool(Bool)
    case null

    var text: String {
        switch self {
        case let .integer(_, text), let .unsignedInteger(_, text), let .number(_, text): text
        case let .string(s): JSONWriter.quoted(s)
        case let .bool(b): b ? "true" : "false"
        case .null: "nil"
        }
    }
}

enum QueryOperator: String {
    case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case contains, startsWith
}
