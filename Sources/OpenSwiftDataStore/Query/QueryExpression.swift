/// A predicate compiled to the engine's own form: it runs on stored rows, so a
/// fetch tests rows without making model objects.
///
/// Row-valued expressions evaluate to `.reference(id)` of a known entity (or
/// `.null`); `attribute`, `toOne` and `toMany` step from such a row to its values.
public indirect enum QueryExpression: Hashable, Sendable {
    /// A constant (a captured value or a literal).
    case constant(Value)
    /// A placeholder for the constant at this position of a cached template; never
    /// evaluated (see `substitutingParameters`).
    case parameter(Int)
    /// The row being tested, of the fetch's entity.
    case root
    /// A variable bound by `optionalMap`, `containsWhere`, `allSatisfy` or `filter`.
    case variable(Int)
    /// Attribute `slot` of the row `base` evaluates to (a row of `entity`).
    case attribute(QueryExpression, entity: Int, slot: Int)
    /// The row (of `destination`) a to-one relationship of `base` refers to, or nil.
    case toOne(QueryExpression, entity: Int, slot: Int, destination: Int)
    /// The rows (of `destination`) a to-many relationship of `base` refers to.
    case toMany(QueryExpression, entity: Int, slot: Int, destination: Int)
    /// The member at `path` (coding keys, outermost first) of the `Codable` value
    /// `base` evaluates to, read from its stored JSON as a value of `type`; nil when
    /// `base` is nil or a member on the way is missing or null.
    case member(QueryExpression, path: [String], type: ValueType)

    case equal(QueryExpression, QueryExpression)
    case notEqual(QueryExpression, QueryExpression)
    case compare(ComparisonOperator, QueryExpression, QueryExpression)
    case and(QueryExpression, QueryExpression)
    case or(QueryExpression, QueryExpression)
    case not(QueryExpression)

    case arithmetic(ArithmeticOperator, QueryExpression, QueryExpression)
    case negate(QueryExpression)
    case conditional(QueryExpression, QueryExpression, QueryExpression)

    /// `wrapped ?? fallback`.
    case nilCoalesce(QueryExpression, QueryExpression)
    /// `wrapped.flatMap { variable in transform }`: nil when `wrapped` is nil.
    case optionalMap(QueryExpression, variable: Int, transform: QueryExpression)
    /// `wrapped!`: evaluating it on nil throws.
    case forceUnwrap(QueryExpression)

    /// `sequence.contains(element)`, for arrays, sets, to-many relationships and
    /// strings (substring containment).
    case contains(QueryExpression, QueryExpression)
    case containsWhere(QueryExpression, variable: Int, test: QueryExpression)
    case allSatisfy(QueryExpression, variable: Int, test: QueryExpression)
    case filter(QueryExpression, variable: Int, test: QueryExpression)
    case count(QueryExpression)
    case isEmpty(QueryExpression)
    case first(QueryExpression)
    case last(QueryExpression)
    case minimum(QueryExpression)
    case maximum(QueryExpression)
    case startsWith(QueryExpression, QueryExpression)
    /// Case- and diacritic-insensitive substring test.
    case localizedStandardContains(QueryExpression, QueryExpression)
    /// `ComparisonResult` of a case-insensitive comparison, as `.int(-1/0/1)`.
    case caseInsensitiveCompare(QueryExpression, QueryExpression)
    /// `String.localizedLowercase`.
    case localizedLowercase(QueryExpression)
    /// `String.localizedUppercase`.
    case localizedUppercase(QueryExpression)
    /// `(lower..<upper).contains(element)` or, when `closed`, `lower...upper`.
    case inRange(QueryExpression, lower: QueryExpression, upper: QueryExpression, closed: Bool)
    /// `collection[index]`.
    case subscripted(QueryExpression, QueryExpression)

    public enum ComparisonOperator: String, Hashable, Sendable {
        case lessThan = "<", lessThanOrEqual = "<=", greaterThan = ">", greaterThanOrEqual = ">="
    }

    public enum ArithmeticOperator: String, Hashable, Sendable {
        case add = "+", subtract = "-", multiply = "*", divide = "/", remainder = "%"
    }
}

extension QueryExpression.ComparisonOperator {
    /// Whether `a op b`: false when either is nil; Swift's operators on numbers (so
    /// NaN compares false, as in `Predicate.evaluate`), `Value`'s order otherwise.
    @inlinable
    public func holds(_ a: Value, _ b: Value) -> Bool {
        if case let .double(x) = a, case let .double(y) = b { return holds(x, y) }
        if a.isNull || b.isNull { return false }
        switch self {
        case .lessThan: return a < b
        case .lessThanOrEqual: return !(b < a)
        case .greaterThan: return b < a
        case .greaterThanOrEqual: return !(a < b)
        }
    }

    @inlinable
    public func holds<C: Comparable>(_ a: C, _ b: C) -> Bool {
        switch self {
        case .lessThan: a < b
        case .lessThanOrEqual: a <= b
        case .greaterThan: a > b
        case .greaterThanOrEqual: a >= b
        }
    }
}

extension QueryExpression {
    /// Whether evaluating the expression reads rows other than the root's.
    public var traversesRelationships: Bool {
        switch self {
        case .toOne, .toMany: return true
        case .constant, .parameter, .root, .variable: return false
        case let .attribute(e, _, _), let .member(e, _, _), let .not(e), let .negate(e), let .forceUnwrap(e), let .count(e), let .isEmpty(e),
             let .first(e), let .last(e), let .minimum(e), let .maximum(e), let .localizedLowercase(e),
             let .localizedUppercase(e):
            return e.traversesRelationships
        case let .equal(a, b), let .notEqual(a, b), let .compare(_, a, b), let .and(a, b), let .or(a, b),
             let .arithmetic(_, a, b), let .nilCoalesce(a, b), let .contains(a, b), let .startsWith(a, b),
             let .localizedStandardContains(a, b), let .caseInsensitiveCompare(a, b), let .subscripted(a, b):
            return a.traversesRelationships || b.traversesRelationships
        case let .optionalMap(a, _, b), let .containsWhere(a, _, b), let .allSatisfy(a, _, b), let .filter(a, _, b):
            return a.traversesRelationships || b.traversesRelationships
        case let .conditional(a, b, c), let .inRange(a, b, c, _):
            return a.traversesRelationships || b.traversesRelationships || c.traversesRelationships
        }
    }
}

extension QueryExpression {
    /// The expression with each `.parameter(i)` replaced by `value(i)`.
    public func substitutingParameters(_ value: (Int) throws -> QueryExpression) rethrows -> QueryExpression {
        func sub(_ e: QueryExpression) throws -> QueryExpression { try e.substitutingParameters(value) }
        switch self {
        case let .parameter(i): return try value(i)
        // Leaves and steps from the root hold no parameters: kept, not rebuilt.
        case .constant, .root, .variable, .attribute(.root, _, _), .toOne(.root, _, _, _), .toMany(.root, _, _, _): return self
        case let .attribute(e, entity, slot): return .attribute(try sub(e), entity: entity, slot: slot)
        case let .toOne(e, entity, slot, destination): return .toOne(try sub(e), entity: entity, slot: slot, destination: destination)
        case let .toMany(e, entity, slot, destination): return .toMany(try sub(e), entity: entity, slot: slot, destination: destination)
        case let .member(e, path, type): return .member(try sub(e), path: path, type: type)
        case let .equal(a, b): return .equal(try sub(a), try sub(b))
        case let .notEqual(a, b): return .notEqual(try sub(a), try sub(b))
        case let .compare(op, a, b): return .compare(op, try sub(a), try sub(b))
        case let .and(a, b): return .and(try sub(a), try sub(b))
        case let .or(a, b): return .or(try sub(a), try sub(b))
        case let .not(e): return .not(try sub(e))
        case let .arithmetic(op, a, b): return .arithmetic(op, try sub(a), try sub(b))
        case let .negate(e): return .negate(try sub(e))
        case let .conditional(t, a, b): return .conditional(try sub(t), try sub(a), try sub(b))
        case let .nilCoalesce(a, b): return .nilCoalesce(try sub(a), try sub(b))
        case let .optionalMap(a, v, b): return .optionalMap(try sub(a), variable: v, transform: try sub(b))
        case let .forceUnwrap(e): return .forceUnwrap(try sub(e))
        case let .contains(a, b): return .contains(try sub(a), try sub(b))
        case let .containsWhere(a, v, b): return .containsWhere(try sub(a), variable: v, test: try sub(b))
        case let .allSatisfy(a, v, b): return .allSatisfy(try sub(a), variable: v, test: try sub(b))
        case let .filter(a, v, b): return .filter(try sub(a), variable: v, test: try sub(b))
        case let .count(e): return .count(try sub(e))
        case let .isEmpty(e): return .isEmpty(try sub(e))
        case let .first(e): return .first(try sub(e))
        case let .last(e): return .last(try sub(e))
        case let .minimum(e): return .minimum(try sub(e))
        case let .maximum(e): return .maximum(try sub(e))
        case let .startsWith(a, b): return .startsWith(try sub(a), try sub(b))
        case let .localizedStandardContains(a, b): return .localizedStandardContains(try sub(a), try sub(b))
        case let .caseInsensitiveCompare(a, b): return .caseInsensitiveCompare(try sub(a), try sub(b))
        case let .localizedLowercase(e): return .localizedLowercase(try sub(e))
        case let .localizedUppercase(e): return .localizedUppercase(try sub(e))
        case let .inRange(e, lo, hi, closed): return .inRange(try sub(e), lower: try sub(lo), upper: try sub(hi), closed: closed)
        case let .subscripted(a, b): return .subscripted(try sub(a), try sub(b))
        }
    }
}

/// Why a compiled expression could not be evaluated on a row.
public enum QueryEvaluationError: Error, Hashable, Sendable {
    /// A forced unwrap met nil.
    case unwrappedNil
    /// Integer arithmetic overflowed or divided by zero.
    case arithmeticOverflow
    /// A subscript was out of bounds.
    case indexOutOfRange
    /// A range's upper bound was below its lower bound.
    case invalidRange
    /// Values of kinds the operator does not take (a damaged store, or a compiler bug).
    case typeMismatch(String)
}
