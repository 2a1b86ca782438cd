import Foundation
import OpenSwiftDataStore

/// Resolves a parsed filter against one entity of a schema and compiles it to
/// the engine's `QueryExpression`, which `RowEvaluator` runs on stored rows.
///
/// Literals take the type of what they are compared with: `price == 3` compares
/// a Decimal, `big > 3` a UInt, `start > "2024-05-01"` a Date; to-one
/// relationships and `#id` compare with row identifiers.
struct QueryCompiler {
    let schema: StoreSchema
    let entity: Int
    let source: String
    let option: String

    /// What an operand is, for checking and for typing literals.
    enum Kind {
        case condition
        case attribute(ValueType, name: String)
        case toOne(destination: Int, name: String)
        case toMany(destination: Int, name: String)
        case rowID
    }

    enum Operand {
        case typed(QueryExpression, Kind)
        case literal(QueryLiteral, column: Int)
    }

    private func fail(_ message: String, at column: Int) -> QuerySyntaxError {
        QuerySyntaxError(option: option, source: source, column: column, message: message)
    }

    /// A filter: an expression that holds or not.
    func predicate(_ node: QueryNode) throws(QuerySyntaxError) -> QueryExpression {
        switch node {
        case let .and(l, r): return .and(try predicate(l), try predicate(r))
        case let .or(l, r): return .or(try predicate(l), try predicate(r))
        case let .not(e, _): return .not(try predicate(e))
        case let .comparison(op, l, r, column): return try comparison(op, l, r, column: column)
        case let .literal(.bool(b), _): return .constant(.bool(b))
        case let .literal(literal, column):
            throw fail("\(literal.text) is not a condition", at: column)
        case let .path(_, column):
            guard case let .typed(expression, kind) = try operand(node) else { throw fail("not a condition", at: column) }
            if case .attribute(.bool, _) = kind { return expression }
            throw fail("\(describe(kind)) is not a condition; compare it (== != < <= > >=)", at: column)
        }
    }

    /// A path's expression and kind; `#id` is the row itself.
    func operand(_ node: QueryNode) throws(QuerySyntaxError) -> Operand {
        switch node {
        case let .literal(literal, column): return .literal(literal, column: column)
        case let .path(names, column):
            if names == ["#id"] { return .typed(.root, .rowID) }
            var base = QueryExpression.root
            var current = entity
            for (i, name) in names.enumerated() {
                let description = schema.entities[current]
                guard let slot = description.slot(named: name) else {
                    let known = (description.attributes.map(\.name) + description.relationships.map(\.name)).joined(separator: ", ")
                    throw fail("\(description.name) has no attribute or relationship \(name) (it has: \(known))", at: column)
                }
                let isLast = i == names.count - 1
                if slot < description.attributes.count {
                    guard isLast else { throw fail("\(name) is an attribute, not a relationship to follow", at: column) }
                    return .typed(.attribute(base, entity: current, slot: slot), .attribute(description.attributes[slot].type, name: name))
                }
                let relationship = description.relationships[slot - description.attributes.count]
                guard let destination = schema.entityIndex(named: relationship.destination) else {
                    throw fail("\(name) leads to \(relationship.destination), which the schema does not have", at: column)
                }
                if relationship.isToMany {
                    guard isLast else { throw fail("\(name) is to-many; paths follow only to-one relationships", at: column) }
                    return .typed(.toMany(base, entity: current, slot: slot, destination: destination), .toMany(destination: destination, name: name))
                }
                base = .toOne(base, entity: current, slot: slot, destination: destination)
                if isLast { return .typed(base, .toOne(destination: destination, name: name)) }
                current = destination
            }
            throw fail("empty path", at: column)
        default:
            return .typed(try predicate(node), .condition)
        }
    }

    private func comparison(_ op: QueryOperator, _ l: QueryNode, _ r: QueryNode, column: Int) throws(QuerySyntaxError) -> QueryExpression {
        let left = try operand(l), right = try operand(r)
        let (a, b): (QueryExpression, QueryExpression)
        switch (left, right) {
        case let (.typed(x, kind), .literal(literal, at)):
            (a, b) = (x, .constant(try value(literal, for: kind, operator: op, column: at)))
        case let (.literal(literal, at), .typed(y, kind)):
            guard op != .contains, op != .startsWith else { throw fail("\(op.rawValue) needs an attribute on its left", at: column) }
            (a, b) = (.constant(try value(literal, for: kind, operator: op, column: at)), y)
        case let (.literal(x, _), .literal(y, _)):
            (a, b) = (.constant(plain(x)), .constant(plain(y)))
        case let (.typed(x, _), .typed(y, _)):
            (a, b) = (x, y)
        }
        for case let .typed(_, kind) in [left, right] {
            if case .toMany = kind, op != .contains { throw fail("\(describe(kind)) can only be tested with contains", at: column) }
        }
        switch op {
        case .equal: return .equal(a, b)
        case .notEqual: return .notEqual(a, b)
        case .less: return .compare(.lessThan, a, b)
        case .lessOrEqual: return .compare(.lessThanOrEqual, a, b)
        case .greater: return .compare(.greaterThan, a, b)
        case .greaterOrEqual: return .compare(.greaterThanOrEqual, a, b)
        case .contains:
            guard case let .typed(_, kind) = left else { throw fail("contains needs an attribute on its left", at: column) }
            switch kind {
            case .attribute(.string, _), .attribute(.array, _), .attribute(.set, _), .toMany: return .contains(a, b)
            default: throw fail("\(describe(kind)) is not a string, an array or a to-many relationship", at: column)
            }
        case .startsWith:
            guard case .typed(_, .attribute(.string, _)) = left else { throw fail("startsWith needs a String attribute on its left", at: column) }
            return .startsWith(a, b)
        }
    }

    private func describe(_ kind: Kind) -> String {
        switch kind {
        case .condition: "a condition"
        case let .attribute(type, name): "\(name) (\(type))"
        case let .toOne(destination, name): "\(name) (→ \(schema.entities[destination].name))"
        case let .toMany(destination, name): "\(name) (→ [\(schema.entities[destination].name)])"
        case .rowID: "#id"
        }
    }

    /// A literal compared with another literal: integers are Int, fractions Double.
    private func plain(_ literal: QueryLiteral) -> Value {
        switch literal {
        case let .integer(i, _): .int(i)
        case let .unsignedInteger(u, _): .uint(u)
        case let .number(d, _): .double(d)
        case let .string(s): .string(s)
        case let .bool(b): .bool(b)
        case .null: .null
        }
    }

    /// `literal` as a value of the kind it is compared with (for `contains` on a
    /// collection, of its elements).
    private func value(_ literal: QueryLiteral, for kind: Kind, operator op: QueryOperator, column: Int) throws(QuerySyntaxError) -> Value {
        if case .null = literal { return .null }
        let mismatch = fail("\(literal.text) cannot be compared with \(describe(kind))", at: column)
        switch kind {
        case .condition:
            guard case let .bool(b) = literal else { throw mismatch }
            return .bool(b)
        case .rowID, .toOne, .toMany:
            guard case let .integer(i, _) = literal, i > 0 else {
                throw fail("\(describe(kind)) compares with a row identifier (a positive integer)", at: column)
            }
            return .reference(RowID(i))
        case let .attribute(type, _):
            var type = type
            if op == .contains {
                switch type {
                case let .array(element), let .set(element): type = element
                default: break
                }
            }
            guard let value = Self.value(literal, as: type) else { throw mismatch }
            return value
        }
    }

    /// `literal` as a value of attribute type `type`, or nil when it is not one.
    static func value(_ literal: QueryLiteral, as type: ValueType) -> Value? {
        switch (type, literal) {
        case let (.bool, .bool(b)): return .bool(b)
        case let (.int, .integer(i, _)): return .int(i)
        case let (.int, .number(d, _)): return d.rounded() == d && abs(d) < 9.2e18 ? .int(Int64(d)) : .double(d)
        case let (.uint, .integer(i, _)): return i >= 0 ? .uint(UInt64(i)) : .int(i)
        case let (.uint, .unsignedInteger(u, _)): return .uint(u)
        case let (.float, .unsignedInteger(u, _)), let (.double, .unsignedInteger(u, _)): return .double(Double(u))
        case let (.uint, .number(d, _)): return d.rounded() == d && d >= 0 && d < 1.8e19 ? .uint(UInt64(d)) : nil
        case let (.float, .integer(i, _)), let (.double, .integer(i, _)): return .double(Double(i))
        case let (.float, .number(d, _)), let (.double, .number(d, _)): return .double(d)
        case let (.decimal, .integer(_, text)), let (.decimal, .unsignedInteger(_, text)), let (.decimal, .number(_, text)),
             let (.decimal, .string(text)):
            return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")).map(Value.decimal)
        case let (.string, .string(s)): return .string(s)
        case let (.date, .string(s)): return QueryDates.parse(s).map(Value.date)
        case let (.date, .integer(i, _)): return .date(Date(timeIntervalSinceReferenceDate: Double(i)))
        case let (.date, .number(d, _)): return .date(Date(timeIntervalSinceReferenceDate: d))
        case let (.uuid, .string(s)): return UUID(uuidString: s).map(Value.uuid)
        case let (.url, .string(s)): return URL(string: s).map(Value.url)
        case let (.codable, .string(s)): return .codable(Data(s.utf8))
        default: return nil
        }
    }
}

/// Dates in filters: ISO 8601, with or without time, fraction and zone (UTC when
/// none is given), such as `2024-05-01`, `2024-05-01T12:30:00`, `2024-05-01T12:30:00.250+02:00`.
enum QueryDates {
    static func parse(_ text: String) -> Date? {
        var candidates = [text]
        if text.count == 10 { candidates.append(text + "T00:00:00Z") }
        candidates.append(text + "Z")
        for candidate in candidates {
            if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(candidate) { return date }
            if let date = try? Date.ISO8601FormatStyle().parse(candidate) { return date }
        }
        return nil
    }
}
