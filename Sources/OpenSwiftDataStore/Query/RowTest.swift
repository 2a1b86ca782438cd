/// A predicate compiled to closures over one row's values, for the part of the
/// expression language that reads nothing but that row and cannot fail: the row's
/// attributes, constants, comparisons, equality and the connectives.
///
/// It gives the answers `RowEvaluator.test` gives, and scans use it in its place: the
/// interpreter spends most of a scan walking the expression and making a `Value` for
/// every node of every row, where these closures, built once per fetch, compare the
/// stored values in place.
public struct RowTest {
    private let body: (Row) -> Bool
    /// The slots the test reads: a row that holds only these (and nil elsewhere) gets
    /// the same answer as the whole row.
    public let slots: [Int]

    /// The test for `expression`, or nil when the expression reaches outside that part
    /// (the interpreter then runs it).
    public init?(_ expression: QueryExpression) {
        guard let body = Self.test(expression) else { return nil }
        self.body = body
        var slots = Set<Int>()
        Self.collectSlots(expression, into: &slots)
        self.slots = slots.sorted()
    }

    private static func collectSlots(_ expression: QueryExpression, into slots: inout Set<Int>) {
        switch expression {
        case let .attribute(.root, _, slot): slots.insert(slot)
        case let .and(l, r), let .or(l, r), let .equal(l, r), let .notEqual(l, r), let .compare(_, l, r):
            collectSlots(l, into: &slots)
            collectSlots(r, into: &slots)
        case let .not(e): collectSlots(e, into: &slots)
        default: break
        }
    }

    /// Whether the predicate holds for a row with these values.
    @inline(__always)
    public func callAsFunction(_ row: Row) -> Bool { body(row) }

    private typealias Operand = QueryOperand

    private static func test(_ expression: QueryExpression) -> ((Row) -> Bool)? {
        switch expression {
        case let .constant(value):
            let holds = value == .bool(true)
            return { _ in holds }
        case let .attribute(.root, _, slot):
            return { row in
                if case .bool(true) = row[slot] { return true }
                return false
            }
        case let .and(l, r):
            guard let a = test(l), let b = test(r) else { return nil }
            return { a($0) && b($0) }
        case let .or(l, r):
            guard let a = test(l), let b = test(r) else { return nil }
            return { a($0) || b($0) }
        case let .not(e):
            guard let a = test(e) else { return nil }
            return { !a($0) }
        case let .equal(l, r):
            guard let a = Operand(l), let b = Operand(r) else { return nil }
            return equality(a, b)
        case let .notEqual(l, r):
            guard let a = Operand(l), let b = Operand(r) else { return nil }
            let equal = equality(a, b)
            return { !equal($0) }
        case let .compare(op, l, r):
            guard let a = Operand(l), let b = Operand(r) else { return nil }
            return comparison(op, a, b)
        default:
            return nil
        }
    }

    /// `==` as `Value`'s: values of different kinds are never equal.
    private static func equality(_ a: Operand, _ b: Operand) -> (Row) -> Bool {
        switch (a, b) {
        case let (.constant(x), .constant(y)):
            let equal = x == y
            return { _ in equal }
        case let (.slot(s), .slot(t)):
            return { $0[s] == $0[t] }
        case let (.slot(s), .constant(c)), let (.constant(c), .slot(s)):
            switch c {
            case let .string(k):
                return { row in
                    if case let .string(v) = row[s] { return v == k }
                    return false
                }
            case let .double(k):
                return { row in
                    if case let .double(v) = row[s] { return v == k }
                    return false
                }
            case let .int(k):
                return { row in
                    if case let .int(v) = row[s] { return v == k }
                    return false
                }
            case let .bool(k):
                return { row in
                    if case let .bool(v) = row[s] { return v == k }
                    return false
                }
            case .null:
                return { $0[s].isNull }
            default:
                return { $0[s] == c }
            }
        }
    }

    /// `op` as `ComparisonOperator.holds` has it, with the common kinds compared in place.
    private static func comparison(_ op: QueryExpression.ComparisonOperator, _ a: Operand, _ b: Operand) -> (Row) -> Bool {
        switch (a, b) {
        case let (.constant(x), .constant(y)):
            let holds = op.holds(x, y)
            return { _ in holds }
        case let (.slot(s), .slot(t)):
            return { op.holds($0[s], $0[t]) }
        case let (.slot(s), .constant(c)):
            return ordered(op, slot: s, constant: c, constantFirst: false)
        case let (.constant(c), .slot(s)):
            return ordered(op, slot: s, constant: c, constantFirst: true)
        }
    }

    private static func ordered(
        _ op: QueryExpression.ComparisonOperator, slot s: Int, constant c: Value, constantFirst: Bool
    ) -> (Row) -> Bool {
        func holds(_ v: Value) -> Bool { constantFirst ? op.holds(c, v) : op.holds(v, c) }
        switch c {
        case let .double(k):
            return { row in
                if case let .double(v) = row[s] { return constantFirst ? op.holds(k, v) : op.holds(v, k) }
                return holds(row[s])
            }
        case let .int(k):
            return { row in
                if case let .int(v) = row[s] { return constantFirst ? op.holds(k, v) : op.holds(v, k) }
                return holds(row[s])
            }
        case let .date(k):
            return { row in
                if case let .date(v) = row[s] { return constantFirst ? op.holds(k, v) : op.holds(v, k) }
                return holds(row[s])
            }
        case let .string(k):
            return { row in
                if case let .string(v) = row[s] { return constantFirst ? op.holds(k, v) : op.holds(v, k) }
                return holds(row[s])
            }
        default:
            return { holds($0[s]) }
        }
    }
}
