import Foundation
import OpenSwiftDataStore
import PostgresNIO

/// A compiled predicate (the engine's `QueryExpression`) as a SQL condition on one
/// entity's table, where it can be: comparisons, equality and inequality with
/// Swift's nil semantics, `&&`, `||`, `!`, lists (`= ANY`), ranges, substring and
/// prefix tests, identifiers and to-one references. Anything else (relationship
/// paths beyond a reference, collections, string case folding, arithmetic) gives
/// nil, and the store asks the context to filter (`preferInMemoryFilter`).
struct PostgresPredicate {
    let entity: EntityDescription
    let entityIndex: Int
    /// The values of the expression's `.parameter(i)` placeholders (a compiled
    /// template's, `StoreQueryCompiler.compileTemplate`).
    let parameters: [Value]
    var binds = PostgresBindings()
    /// Each parameter's type as sent (`PostgresValues.bindKind`): a statement prepared
    /// with some types must not be given others (`PostgresStore+Prepared`).
    private(set) var bindKinds = ""
    /// Where each of `binds` came from, in order: what binding the same condition
    /// to other values of the template's parameters repeats (`PostgresConditions`).
    private(set) var sources: [BindSource] = []

    init(entity: EntityDescription, entityIndex: Int, parameters: [Value] = []) {
        self.entity = entity
        self.entityIndex = entityIndex
        self.parameters = parameters
    }

    /// Where a bound value comes from.
    enum BindSource: Sendable {
        /// The template's parameter.
        case parameter(Int)
        /// The template's parameter, an array, as one array parameter (`= ANY`).
        case list(Int)
        /// A constant of the expression itself.
        case constant(Value)
        /// A constant array of the expression as one array parameter.
        case constantList([Value])
    }

    /// One side of a comparison.
    private enum Operand {
        /// A column; `type` nil for identifiers and references (bigint).
        case column(String, type: ValueType?)
        /// A value: a constant of the expression, or its parameter `parameter`'s.
        case constant(Value, parameter: Int?)
    }

    /// The next parameter's placeholder, `value` bound to it.
    private mutating func parameter(_ value: Value, from parameter: Int?) throws -> String {
        try PostgresValues.append(value, to: &binds)
        bindKinds.append(PostgresValues.bindKind(value))
        sources.append(parameter.map(BindSource.parameter) ?? .constant(value))
        return "$\(sources.count)"
    }

    private mutating func listParameter(_ values: [Value], from parameter: Int?) -> String? {
        guard PostgresValues.appendList(values, to: &binds) else { return nil }
        bindKinds += "[" + String(values.first.map(PostgresValues.bindKind) ?? "-")
        sources.append(parameter.map(BindSource.list) ?? .constantList(values))
        return "$\(sources.count)"
    }

    /// The value an expression states, when it is a constant or a parameter, and the
    /// parameter's number.
    private func constant(_ expression: QueryExpression) -> (value: Value, parameter: Int?)? {
        switch expression {
        case let .constant(value): (value, nil)
        case let .parameter(i) where parameters.indices.contains(i): (parameters[i], i)
        default: nil
        }
    }

    private func operand(_ expression: QueryExpression) -> Operand? {
        switch expression {
        case .root:
            return .column(quoted("_id"), type: nil)
        case let .attribute(.root, entity, slot) where entity == entityIndex && slot < self.entity.attributes.count:
            let attribute = self.entity.attributes[slot]
            guard PostgresValues.isScalar(attribute.type) else { return nil }
            return .column(quoted(attribute.name), type: attribute.type)
        case let .toOne(.root, entity, slot, _) where entity == entityIndex:
            let j = slot - self.entity.attributes.count
            guard self.entity.relationships.indices.contains(j) else { return nil }
            return .column(quoted(self.entity.relationships[j].name), type: nil)
        case .constant, .parameter:
            return constant(expression).map { .constant($0.value, parameter: $0.parameter) }
        default:
            return nil
        }
    }

    /// The SQL of an operand, binding a constant.
    private mutating func sql(_ operand: Operand) throws -> String {
        switch operand {
        case let .column(name, _):
            // (Text columns are declared COLLATE "C": code point order, as the engine's.)
            return name
        case let .constant(value, from):
            return try parameter(value, from: from)
        }
    }

    private static func isNaN(_ operand: Operand) -> Bool {
        switch operand {
        case let .constant(.double(value), _): value.isNaN
        case let .constant(.date(value), _): value.timeIntervalSinceReferenceDate.isNaN
        default: false
        }
    }

    /// Whether `operand` is a column that can hold NaN (`Double`, `Float`, `Date`).
    private func isFloatingPoint(_ operand: Operand) -> Bool {
        guard case let .column(_, type?) = operand else { return false }
        return type == .double || type == .float || type == .date
    }

    /// ` AND column <> 'NaN'` for each floating-point column of a comparison: a NaN
    /// stored there matches no comparison in Swift. (PostgreSQL puts NaN above every
    /// number, so a column compared with a number needs it only where NaN would pass:
    /// `>` and `>=`.)
    private func notNaN(_ operands: Operand...) -> String {
        operands.map { operand in
            guard isFloatingPoint(operand), case let .column(name, _) = operand else { return "" }
            return " AND \(name) <> 'NaN'"
        }.joined()
    }

    /// The condition `expression` states, or nil when SQL cannot state it.
    mutating func condition(_ expression: QueryExpression) throws -> String? {
        switch expression {
        case .constant, .parameter:
            guard case let .bool(value)? = constant(expression)?.value else { return nil }
            return value ? "TRUE" : "FALSE"
        case .attribute:
            guard case let .column(name, .bool?)? = operand(expression) else { return nil }
            return name
        case let .and(a, b):
            guard let x = try condition(a), let y = try condition(b) else { return nil }
            return "(\(x) AND \(y))"
        case let .or(a, b):
            guard let x = try condition(a), let y = try condition(b) else { return nil }
            return "(\(x) OR \(y))"
        case let .not(a):
            // SQL's NULL is false at the top of a WHERE, but NOT NULL is NULL too.
            guard let x = try condition(a) else { return nil }
            return "(NOT COALESCE(\(x), FALSE))"
        case let .equal(a, b), let .notEqual(a, b):
            let isEqual = if case .equal = expression { true } else { false }
            guard let x = operand(a), let y = operand(b) else { return nil }
            // NaN equals nothing in Swift; PostgreSQL says NaN = NaN.
            if Self.isNaN(x) || Self.isNaN(y) { return isEqual ? "FALSE" : "TRUE" }
            switch (x, y) {
            case (.constant(.null, _), .column(let name, _)), (.column(let name, _), .constant(.null, _)):
                return "(\(name) IS \(isEqual ? "" : "NOT ")NULL)"
            case (.constant, .constant):
                return nil
            case (.column, .column):
                // nil equals nil, as `IS NOT DISTINCT FROM` says; a NaN equals nothing, itself
                // included, where PostgreSQL says NaN = NaN.
                let floating = try [x, y].filter(isFloatingPoint).map { try sql($0) }
                if isEqual {
                    let withoutNaN = floating.map { " AND (\($0) IS NULL OR \($0) <> 'NaN')" }.joined()
                    return "(\(try sql(x)) IS NOT DISTINCT FROM \(try sql(y))\(withoutNaN))"
                }
                let orNaN = floating.map { " OR (\($0) IS NOT NULL AND \($0) = 'NaN')" }.joined()
                return "(\(try sql(x)) IS DISTINCT FROM \(try sql(y))\(orNaN))"
            default:
                // A nil column equals no value; it differs from every value. (A NaN
                // column equals no number in SQL either.)
                return isEqual ? "(\(try sql(x)) = \(try sql(y)))" : "(\(try sql(x)) IS DISTINCT FROM \(try sql(y)))"
            }
        case let .compare(op, a, b):
            guard let x = operand(a), let y = operand(b) else { return nil }
            if case .constant = x, case .constant = y { return nil }
            // NaN compares false with everything in Swift; PostgreSQL puts it above all numbers.
            if Self.isNaN(x) || Self.isNaN(y) { return "FALSE" }
            let isAbove = op == .greaterThan || op == .greaterThanOrEqual
            let withoutNaN = switch (x, y) {
            case (.column, .constant): isAbove ? notNaN(x) : ""
            case (.constant, .column): isAbove ? "" : notNaN(y)
            default: notNaN(x, y)
            }
            return "(\(try sql(x)) \(op.rawValue) \(try sql(y))\(withoutNaN))"
        case let .inRange(e, lower, upper, closed):
            guard let x = operand(e), case .column = x, let lo = operand(lower), let hi = operand(upper) else { return nil }
            let column = try sql(x)
            return "(\(column) >= \(try sql(lo)) AND \(column) \(closed ? "<=" : "<") \(try sql(hi)))"
        case let .contains(haystack, needle):
            if case let (.array(values), from)? = constant(haystack) {
                // A list holding a column's value.
                guard let x = operand(needle), case .column = x else { return nil }
                if values.isEmpty { return "FALSE" }
                let column = try sql(x)
                guard let list = listParameter(values, from: from) else { return nil }
                return "(\(column) = ANY(\(list)))"
            }
            // Substring containment of a text column.
            guard case let .column(name, .string?)? = operand(haystack), case let .constant(.string(text), from)? = operand(needle) else {
                return nil
            }
            return "(strpos(\(name), \(try parameter(.string(text), from: from))) > 0)"
        case let .startsWith(text, prefix):
            guard case let .column(name, .string?)? = operand(text), case let .constant(.string(start), from)? = operand(prefix) else {
                return nil
            }
            return "starts_with(\(name), \(try parameter(.string(start), from: from)))"
        default:
            return nil
        }
    }
}
