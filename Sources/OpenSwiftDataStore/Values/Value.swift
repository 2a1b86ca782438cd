import Foundation

/// A stored value, in the engine's own representation.
///
/// Rows hold `Value`s rather than Swift model properties so that the engine, the
/// document format and the CLI work without the application's model types. Model
/// values are converted once, at the boundary between a model object and its row.
public enum Value: Hashable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case string(String)
    case date(Date)
    case data(Data)
    case uuid(UUID)
    case url(URL)
    case decimal(Decimal)
    /// Arrays and sets of storable values (a set is stored in a canonical order).
    case array([Value])
    /// Dictionaries of storable values, as key/value pairs in a canonical order.
    case dictionary([Pair])
    /// A `Codable` composite (struct or enum) the engine does not look into yet,
    /// encoded as JSON with sorted keys so equal values have equal bytes.
    case codable(Data)
    /// A to-one relationship: the row of the destination entity.
    case reference(RowID)
    /// A to-many relationship: the rows of the destination entity, in order.
    case references([RowID])

    /// One key/value entry of a stored dictionary.
    public struct Pair: Hashable, Sendable {
        public var key: Value
        public var value: Value
        public init(key: Value, value: Value) {
            self.key = key
            self.value = value
        }
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The rows a relationship value refers to: one for `.reference`, the list for
    /// `.references`, none otherwise.
    public var referencedRows: [RowID] {
        switch self {
        case let .reference(id): [id]
        case let .references(ids): ids
        default: []
        }
    }

    /// Whether the two are the same value to the bit, where `==` says equal for some
    /// that are not: `-0.0` and `0.0`, and strings in different Unicode forms. Writes
    /// that skip "unchanged" values use it, so no such change is dropped. Collections
    /// and decimals are never identical here (the write happens).
    public func isIdentical(to other: Value) -> Bool {
        switch (self, other) {
        case let (.double(a), .double(b)): a.bitPattern == b.bitPattern
        case let (.date(a), .date(b)): a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern
        case let (.string(a), .string(b)): a.utf8.elementsEqual(b.utf8)
        case (.array, _), (.dictionary, _), (.decimal, _): false
        default: self == other
        }
    }

    /// Whether the two are the same stored value: `==`, except that a NaN matches a
    /// NaN (in collections too). An optimistic check compares rows with it, so a row
    /// holding a NaN is not "changed since read" forever.
    public func matches(_ other: Value) -> Bool {
        switch (self, other) {
        case let (.double(a), .double(b)): a == b || (a.isNaN && b.isNaN)
        case let (.array(a), .array(b)): a.count == b.count && zip(a, b).allSatisfy { $0.matches($1) }
        case let (.dictionary(a), .dictionary(b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.key.matches($1.key) && $0.value.matches($1.value) }
        default: self == other
        }
    }
}

extension Value: Comparable {
    /// A total order over values: first by kind, then by the kind's natural order.
    ///
    /// Sorting and index keys use this order. Strings compare by their NFC-normalized
    /// Unicode scalars (`StringOrder`), the order Swift documents for `String`.
    ///
    /// It keeps Comparable's laws with `==` (a law test checks them): numbers of
    /// different kinds compare exactly (`.int(2⁵³ + 1)` is above `.double(2⁵³)`, which
    /// converting to `Double` lost), and numerically equal ones of different kinds,
    /// which `==` tells apart, order by kind (`.int(1) < .uint(1) < .double(1)`);
    /// dictionaries compare by their pairs in order. NaN is above every number (so an
    /// index search never breaks on it); two NaNs are unordered, as `==` does not
    /// equal them either.
    public static func < (lhs: Value, rhs: Value) -> Bool {
        switch (lhs, rhs) {
        case let (.bool(a), .bool(b)): return !a && b
        case let (.int(a), .int(b)): return a < b
        case let (.uint(a), .uint(b)): return a < b
        case let (.double(a), .double(b)): return a < b || (!a.isNaN && b.isNaN)
        case (.int, .uint), (.uint, .int), (.int, .double), (.double, .int), (.uint, .double), (.double, .uint):
            return mixedNumberOrder(lhs, rhs) < 0
        case let (.string(a), .string(b)): return StringOrder.less(a, b)
        case let (.date(a), .date(b)):
            // As doubles: a NaN date (from a document or a computation) sorts above every other.
            let (s, t) = (a.timeIntervalSinceReferenceDate, b.timeIntervalSinceReferenceDate)
            return s < t || (!s.isNaN && t.isNaN)
        case let (.data(a), .data(b)): return a.lexicographicallyPrecedes(b)
        case let (.uuid(a), .uuid(b)): return a.uuidString < b.uuidString
        case let (.url(a), .url(b)): return a.absoluteString < b.absoluteString
        case let (.decimal(a), .decimal(b)): return a < b
        case let (.array(a), .array(b)): return a.lexicographicallyPrecedes(b)
        case let (.dictionary(a), .dictionary(b)): return a.lexicographicallyPrecedes(b)
        case let (.codable(a), .codable(b)): return a.lexicographicallyPrecedes(b)
        case let (.reference(a), .reference(b)): return a < b
        case let (.references(a), .references(b)): return a.lexicographicallyPrecedes(b)
        default: return lhs.kindRank < rhs.kindRank
        }
    }

    /// Three-way order of two numbers of different kinds: exactly by value, then
    /// `.int` before `.uint` before `.double`; NaN above every number.
    private static func mixedNumberOrder(_ lhs: Value, _ rhs: Value) -> Int {
        func rank(_ v: Value) -> Int {
            switch v {
            case .int: 0
            case .uint: 1
            default: 2
            }
        }
        let byValue: Int = switch (lhs, rhs) {
        case let (.int(a), .uint(b)): a < 0 ? -1 : compare(UInt64(a), b)
        case let (.uint(a), .int(b)): b < 0 ? 1 : compare(a, UInt64(b))
        case let (.int(a), .double(b)): compare(a, b)
        case let (.double(a), .int(b)): -compare(b, a)
        case let (.uint(a), .double(b)): compare(a, b)
        case let (.double(a), .uint(b)): -compare(b, a)
        default: 0
        }
        return byValue != 0 ? byValue : compare(rank(lhs), rank(rhs))
    }

    private static func compare<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : (b < a ? 1 : 0) }

    /// `a` against `b` exactly (no rounding of `a` to a `Double`); NaN is above.
    private static func compare(_ a: Int64, _ b: Double) -> Int {
        if b.isNaN || b >= 0x1p63 { return -1 }
        if b < -0x1p63 { return 1 }
        let floor = b.rounded(.down)
        let c = compare(a, Int64(floor))
        return c != 0 ? c : (b > floor ? -1 : 0)
    }

    /// `a` against `b` exactly; NaN is above.
    private static func compare(_ a: UInt64, _ b: Double) -> Int {
        if b.isNaN || b >= 0x1p64 { return -1 }
        if b < 0 { return 1 }
        let floor = b.rounded(.down)
        let c = compare(a, UInt64(floor))
        return c != 0 ? c : (b > floor ? -1 : 0)
    }

    private var kindRank: Int {
        switch self {
        case .null: 0
        case .bool: 1
        case .int, .uint, .double: 2
        case .decimal: 3
        case .string: 4
        case .date: 5
        case .data: 6
        case .uuid: 7
        case .url: 8
        case .array: 9
        case .dictionary: 10
        case .codable: 11
        case .reference: 12
        case .references: 13
        }
    }
}

extension Value.Pair: Comparable {
    public static func < (lhs: Value.Pair, rhs: Value.Pair) -> Bool {
        lhs.key == rhs.key ? lhs.value < rhs.value : lhs.key < rhs.key
    }
}

extension Value: CustomStringConvertible {
    public var description: String {
        switch self {
        case .null: "nil"
        case let .bool(v): "\(v)"
        case let .int(v): "\(v)"
        case let .uint(v): "\(v)"
        case let .double(v): "\(v)"
        case let .string(v): "\"\(v)\""
        case let .date(v): v.formatted(.iso8601)
        case let .data(v): "<\(v.count) bytes>"
        case let .uuid(v): v.uuidString
        case let .url(v): v.absoluteString
        case let .decimal(v): "\(v)"
        case let .array(v): "[\(v.map(\.description).joined(separator: ", "))]"
        case let .dictionary(v): "[\(v.map { "\($0.key): \($0.value)" }.joined(separator: ", "))]"
        case let .codable(v): String(decoding: v, as: UTF8.self)
        case let .reference(v): "→\(v)"
        case let .references(v): "→[\(v.map(\.description).joined(separator: ", "))]"
        }
    }
}
