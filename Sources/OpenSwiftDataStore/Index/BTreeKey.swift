import Foundation

/// A key a B-tree orders its entries by.
///
/// Indexes pick the narrowest key their slot allows (`OrderedIndex`): most hold one
/// number, date or string per entry, which a packed key compares in one instruction
/// and stores in 8 or 16 bytes, where a general `IndexKey` is an enum switch per
/// comparison and 32 bytes.
public protocol BTreeKey: Sendable {
    /// Three-way comparison in index order: negative, zero (tied) or positive.
    static func compare(_ a: Self, _ b: Self) -> Int
    /// What reading a key back as values needs besides the key (a packed key's kind).
    associatedtype Decoding: Sendable = Void
    /// Three-way comparison of the first `min(parts, prefix.count)` parts with
    /// `prefix`, in `Value.indexCompare`'s order: how bounds of values of another
    /// kind than the keys' (`.double(1.5)` on an integer index) compare.
    static func compare(_ key: Self, prefix: [Value], decoding: Decoding) -> Int
    /// Whether keys that tie (`compare` is zero) are interchangeable, so that a leaf
    /// may hold a run of them as one key (`BTree+Leaf.swift`).
    static var tiesAreInterchangeable: Bool { get }
}

extension IndexKey: BTreeKey {
    @inline(__always)
    public static func compare(_ key: IndexKey, prefix: [Value], decoding: Void) -> Int { compare(key, prefix: prefix) }

    /// False: general keys can tie and differ (two URLs tie by their strings and differ
    /// in their bases; NaNs tie and are unequal), and lookups by equal key
    /// (`OrderedIndex.forEachRow(equalTo:)`) tell them apart.
    public static var tiesAreInterchangeable: Bool { false }
}

/// A non-nil `Bool`, integer, `Double` or `Date` value as an order-preserving
/// unsigned integer: `a < b` in index order exactly when `a.bits < b.bits`.
///
/// `-0.0` packs as `0.0` and every NaN as one NaN above `+infinity`, as `Value`'s
/// order ties and places them.
///
/// The kind is the index's, not the key's: a key is its 8 bytes.
struct PackedKey: BTreeKey, Hashable {
    var bits: UInt64

    /// True: a tie is the same bits.
    static var tiesAreInterchangeable: Bool { true }

    @inline(__always)
    static func compare(_ a: PackedKey, _ b: PackedKey) -> Int {
        a.bits == b.bits ? 0 : (a.bits < b.bits ? -1 : 1)
    }

    static func compare(_ key: PackedKey, prefix: [Value], decoding kind: ScalarKind) -> Int {
        guard let first = prefix.first else { return 0 }
        return Value.indexCompare(kind.unpack(key), first)
    }
}

/// The kinds of value a `PackedKey` holds; one per index.
enum ScalarKind: Sendable, Hashable {
    case bool, int, uint, double, date

    /// The scalar kind of a column, when it has one.
    init?(_ kind: ColumnKind) {
        switch kind {
        case .bool: self = .bool
        case .int: self = .int
        case .uint: self = .uint
        case .double: self = .double
        case .date: self = .date
        default: return nil
        }
    }

    /// `value` packed, when it is a non-nil value of this kind; nil for any other
    /// (the index then holds general keys).
    @inline(__always)
    func pack(_ value: Value) -> PackedKey? {
        switch (self, value) {
        case let (.int, .int(v)): PackedKey(bits: Self.pack(v))
        case let (.uint, .uint(v)): PackedKey(bits: v)
        case let (.double, .double(v)): PackedKey(bits: Self.pack(v))
        case let (.date, .date(v)): PackedKey(bits: Self.pack(v.timeIntervalSinceReferenceDate))
        case let (.bool, .bool(v)): PackedKey(bits: v ? 1 : 0)
        default: nil
        }
    }

    /// The value `key` packs; `pack(unpack(k)) == k`. The value is the one packed
    /// but for `-0.0`, which comes back as `0.0` (still `==`), and NaN, which comes
    /// back as the standard NaN (never `==` anyway): index order and equality are
    /// the same, the bits may not be.
    func unpack(_ key: PackedKey) -> Value {
        switch self {
        case .int: .int(Int64(bitPattern: key.bits ^ (1 << 63)))
        case .uint: .uint(key.bits)
        case .double: .double(Self.unpack(key.bits))
        case .date: .date(Date(timeIntervalSinceReferenceDate: Self.unpack(key.bits)))
        case .bool: .bool(key.bits != 0)
        }
    }

    /// Whether two tied keys can differ as `Value`s (`==`): NaNs tie but are unequal.
    func isUnequalWhenTied(_ key: PackedKey) -> Bool {
        switch self {
        case .double, .date: key.bits == Self.pack(.nan)
        default: false
        }
    }

    /// Signed order as unsigned order: the sign bit flipped.
    @inline(__always)
    static func pack(_ v: Int64) -> UInt64 { UInt64(bitPattern: v) ^ (1 << 63) }

    /// IEEE 754 order as unsigned order: negative numbers have every bit flipped
    /// (larger magnitudes sort lower), the others only the sign bit.
    @inline(__always)
    static func pack(_ v: Double) -> UInt64 {
        let canonical = v.isNaN ? Double.nan : (v == 0 ? 0 : v)
        let bits = canonical.bitPattern
        return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
    }

    static func unpack(_ bits: UInt64) -> Double {
        Double(bitPattern: bits & (1 << 63) != 0 ? bits & ~(1 << 63) : ~bits)
    }
}

/// A non-nil `String` value: compared as `Value` compares strings (`StringOrder`).
struct StringKey: BTreeKey {
    var string: String

    /// True: strings tie exactly when they are `==`.
    static var tiesAreInterchangeable: Bool { true }

    @inline(__always)
    static func compare(_ a: StringKey, _ b: StringKey) -> Int { StringOrder.compare(a.string, b.string) }

    static func compare(_ key: StringKey, prefix: [Value], decoding: Void) -> Int {
        guard let first = prefix.first else { return 0 }
        return Value.indexCompare(.string(key.string), first)
    }
}
