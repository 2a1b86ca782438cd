import Foundation

/// Runs a `QueryExpression` on stored rows of one store version.
///
/// An interpreter over `Value`s: no model objects are made. Its semantics follow
/// Swift's (and so `Predicate.evaluate`'s): `nil == nil`, integer overflow and
/// forced unwraps of nil are errors rather than traps.
public struct RowEvaluator {
    public let version: StoreVersion
    /// Rows that differ from `version` for the caller (unsaved changes): a row, or
    /// nil for a row that is gone. Relationship traversals read through it.
    public var overlay: [EntityRow: Row?] = [:]
    private var variables: [Int: Value] = [:]
    private var rootID = RowID(0)
    private var rootRow: Row = []

    public init(version: StoreVersion) {
        self.version = version
    }

    /// Whether `predicate` holds for row `id` (whose values are `row`).
    public mutating func test(_ predicate: QueryExpression, row: Row, id: RowID) throws -> Bool {
        rootRow = row
        rootID = id
        return try evaluate(predicate) == .bool(true)
    }

    /// The value of `expression` for row `id`.
    public mutating func value(of expression: QueryExpression, row: Row, id: RowID) throws -> Value {
        rootRow = row
        rootID = id
        return try evaluate(expression)
    }

    private func row(_ reference: Value, of entity: Int) -> Row? {
        guard case let .reference(id) = reference else { return nil }
        return row(id, of: entity)
    }

    private func row(_ id: RowID, of entity: Int) -> Row? {
        if !overlay.isEmpty, let pending = overlay[EntityRow(entity: entity, id: id)] { return pending }
        return version.row(id, of: entity)
    }

    mutating func evaluate(_ expression: QueryExpression) throws -> Value {
        switch expression {
        case let .constant(value):
            return value
        case let .parameter(i):
            throw QueryEvaluationError.typeMismatch("unbound parameter \(i)")
        case .root:
            return .reference(rootID)
        case let .variable(id):
            return variables[id] ?? .null
        case let .attribute(.root, _, slot):
            return rootRow[slot]
        case let .attribute(base, entity, slot):
            return row(try evaluate(base), of: entity)?[slot] ?? .null
        case let .toOne(base, entity, slot, destination):
            let source: Row?
            if case .root = base { source = rootRow } else { source = row(try evaluate(base), of: entity) }
            guard case let .reference(id)? = source?[slot], row(id, of: destination) != nil else { return .null }
            return .reference(id)
        case let .toMany(base, entity, slot, destination):
            let source: Row?
            if case .root = base { source = rootRow } else { source = row(try evaluate(base), of: entity) }
            guard case let .references(ids)? = source?[slot] else { return .references([]) }
            return .references(ids.filter { row($0, of: destination) != nil })
        case let .member(base, path, type):
            return try Value.member(at: path, of: evaluate(base), as: type)

        case let .equal(l, r):
            return .bool(try evaluate(l) == evaluate(r))
        case let .notEqual(l, r):
            return .bool(try evaluate(l) != evaluate(r))
        case let .compare(op, l, r):
            return .bool(op.holds(try evaluate(l), try evaluate(r)))
        case let .and(l, r):
            return .bool(try evaluate(l) == .bool(true) && evaluate(r) == .bool(true))
        case let .or(l, r):
            return .bool(try evaluate(l) == .bool(true) || evaluate(r) == .bool(true))
        case let .not(e):
            return .bool(try evaluate(e) != .bool(true))

        case let .arithmetic(op, l, r):
            return try Self.arithmetic(op, evaluate(l), evaluate(r))
        case let .negate(e):
            switch try evaluate(e) {
            case let .int(i):
                guard i != .min else { throw QueryEvaluationError.arithmeticOverflow }
                return .int(-i)
            case let .double(d): return .double(-d)
            case let .decimal(d): return .decimal(-d)
            case let other: throw QueryEvaluationError.typeMismatch("-\(other)")
            }
        case let .conditional(test, a, b):
            return try evaluate(test) == .bool(true) ? evaluate(a) : evaluate(b)

        case let .nilCoalesce(l, r):
            let a = try evaluate(l)
            return a.isNull ? try evaluate(r) : a
        case let .optionalMap(wrapped, variable, transform):
            let a = try evaluate(wrapped)
            if a.isNull { return .null }
            return try bind(variable, to: a) { try $0.evaluate(transform) }
        case let .forceUnwrap(e):
            let a = try evaluate(e)
            if a.isNull { throw QueryEvaluationError.unwrappedNil }
            return a

        case let .contains(sequence, element):
            let s = try evaluate(sequence), e = try evaluate(element)
            switch s {
            case let .array(items): return .bool(items.contains(e))
            case let .references(ids):
                guard case let .reference(id) = e else { return .bool(false) }
                return .bool(ids.contains(id))
            case let .string(text):
                guard case let .string(other) = e else { return .bool(false) }
                return .bool(Self.contains(text, other))
            case .null: return .bool(false)
            default: throw QueryEvaluationError.typeMismatch("\(s).contains(\(e))")
            }
        case let .containsWhere(sequence, variable, test):
            for element in try elements(of: evaluate(sequence)) {
                if try bind(variable, to: element, { try $0.evaluate(test) }) == .bool(true) { return .bool(true) }
            }
            return .bool(false)
        case let .allSatisfy(sequence, variable, test):
            for element in try elements(of: evaluate(sequence)) {
                if try bind(variable, to: element, { try $0.evaluate(test) }) != .bool(true) { return .bool(false) }
            }
            return .bool(true)
        case let .filter(sequence, variable, test):
            let s = try evaluate(sequence)
            var kept: [Value] = []
            for element in try elements(of: s) where try bind(variable, to: element, { try $0.evaluate(test) }) == .bool(true) {
                kept.append(element)
            }
            if case .references = s { return .references(kept.compactMap { if case let .reference(id) = $0 { id } else { nil } }) }
            return .array(kept)
        case let .count(e):
            switch try evaluate(e) {
            case let .array(items): return .int(Int64(items.count))
            case let .references(ids): return .int(Int64(ids.count))
            case let .string(s): return .int(Int64(s.count))
            case let .dictionary(pairs): return .int(Int64(pairs.count))
            case let other: throw QueryEvaluationError.typeMismatch("count of \(other)")
            }
        case let .isEmpty(e):
            switch try evaluate(e) {
            case let .array(items): return .bool(items.isEmpty)
            case let .references(ids): return .bool(ids.isEmpty)
            case let .string(s): return .bool(s.isEmpty)
            case let .dictionary(pairs): return .bool(pairs.isEmpty)
            case let other: throw QueryEvaluationError.typeMismatch("isEmpty of \(other)")
            }
        case let .first(e):
            return try elements(of: evaluate(e)).first ?? .null
        case let .last(e):
            return try elements(of: evaluate(e)).last ?? .null
        case let .minimum(e):
            return try elements(of: evaluate(e)).min() ?? .null
        case let .maximum(e):
            return try elements(of: evaluate(e)).max() ?? .null
        case let .startsWith(l, r):
            switch (try evaluate(l), try evaluate(r)) {
            case let (.string(a), .string(b)): return .bool(a.starts(with: b))
            case let (.array(a), .array(b)): return .bool(a.starts(with: b))
            case let (a, b): throw QueryEvaluationError.typeMismatch("\(a).starts(with: \(b))")
            }
        case let .localizedStandardContains(l, r):
            guard case let .string(a) = try evaluate(l), case let .string(b) = try evaluate(r) else { return .bool(false) }
            return .bool(a.range(of: b, options: [.caseInsensitive, .diacriticInsensitive]) != nil)
        case let .caseInsensitiveCompare(l, r):
            guard case let .string(a) = try evaluate(l), case let .string(b) = try evaluate(r) else {
                throw QueryEvaluationError.typeMismatch("caseInsensitiveCompare")
            }
            return .int(Int64(a.caseInsensitiveCompare(b).rawValue))
        case let .localizedLowercase(e):
            guard case let .string(a) = try evaluate(e) else { return .null }
            return .string(a.localizedLowercase)
        case let .localizedUppercase(e):
            guard case let .string(a) = try evaluate(e) else { return .null }
            return .string(a.localizedUppercase)
        case let .inRange(e, lower, upper, closed):
            let x = try evaluate(e), lo = try evaluate(lower), hi = try evaluate(upper)
            // Swift refuses to form a range whose bounds are out of order.
            if hi < lo { throw QueryEvaluationError.invalidRange }
            return .bool(!(x < lo) && (closed ? !(hi < x) : x < hi))
        case let .subscripted(e, index):
            guard case let .int(i) = try evaluate(index) else { throw QueryEvaluationError.typeMismatch("subscript") }
            let items = try elements(of: evaluate(e))
            guard i >= 0, i < items.count else { throw QueryEvaluationError.indexOutOfRange }
            return items[Int(i)]
        }
    }

    /// Substring containment as the standard library's generic `Collection.contains`
    /// does it (an empty needle is contained), which is what `#Predicate` evaluates.
    static func contains<C: Collection>(_ text: C, _ needle: C) -> Bool where C.Element: Equatable {
        text.contains(needle)
    }

    private mutating func bind(_ variable: Int, to value: Value, _ body: (inout RowEvaluator) throws -> Value) rethrows -> Value {
        let saved = variables[variable]
        variables[variable] = value
        defer { variables[variable] = saved }
        return try body(&self)
    }

    private func elements(of value: Value) throws -> [Value] {
        switch value {
        case let .array(items): return items
        case let .references(ids): return ids.map(Value.reference)
        case .null: return []
        case let .string(s): return s.map { .string(String($0)) }
        default: throw QueryEvaluationError.typeMismatch("elements of \(value)")
        }
    }

    /// Integer arithmetic that reports overflow and division by zero instead of trapping.
    static func integer<I: FixedWidthInteger>(_ op: QueryExpression.ArithmeticOperator, _ x: I, _ y: I) throws -> I {
        let (result, overflow): (I, Bool) = switch op {
        case .add: x.addingReportingOverflow(y)
        case .subtract: x.subtractingReportingOverflow(y)
        case .multiply: x.multipliedReportingOverflow(by: y)
        case .divide: y == 0 ? (0, true) : x.dividedReportingOverflow(by: y)
        case .remainder: y == 0 ? (0, true) : x.remainderReportingOverflow(dividingBy: y)
        }
        if overflow { throw QueryEvaluationError.arithmeticOverflow }
        return result
    }

    static func arithmetic(_ op: QueryExpression.ArithmeticOperator, _ a: Value, _ b: Value) throws -> Value {
        switch (a, b) {
        case let (.int(x), .int(y)):
            return .int(try integer(op, x, y))
        case let (.uint(x), .uint(y)):
            return .uint(try integer(op, x, y))
        case let (.double(x), .double(y)):
            switch op {
            case .add: return .double(x + y)
            case .subtract: return .double(x - y)
            case .multiply: return .double(x * y)
            case .divide: return .double(x / y)
            case .remainder: return .double(x.truncatingRemainder(dividingBy: y))
            }
        case let (.decimal(x), .decimal(y)):
            switch op {
            case .add: return .decimal(x + y)
            case .subtract: return .decimal(x - y)
            case .multiply: return .decimal(x * y)
            case .divide: return .decimal(x / y)
            case .remainder: throw QueryEvaluationError.typeMismatch("Decimal %")
            }
        default:
            throw QueryEvaluationError.typeMismatch("\(a) \(op.rawValue) \(b)")
        }
    }
}
