import Foundation
import OpenSwiftDataStore
import Testing

/// `Value`'s `<` keeps Comparable's laws together with `==`, in the manner of
/// swift-collections' `checkComparable`: irreflexive, asymmetric, transitive, and
/// for any two values exactly one of `a < b`, `a == b`, `b < a`. Sorting and every
/// B-tree rely on it. (NaN is left out: `==` does not equal it to itself.)
@Suite struct ValueOrderLawTests {
    static let pool: [Value] = [
        .null, .bool(false), .bool(true),
        // Numbers of every kind, equal across kinds, and at the edges of Double's precision.
        .int(-1), .int(0), .int(1), .uint(0), .uint(1), .double(-0.5), .double(0), .double(1), .double(1.5),
        .int(9_007_199_254_740_992), .int(9_007_199_254_740_993), .double(9_007_199_254_740_992),
        .int(.max), .uint(UInt64(Int64.max)), .uint(.max), .double(0x1p63), .double(0x1p64), .int(.min), .double(-0x1p63),
        .double(.infinity), .double(-.infinity),
        .decimal(Decimal(string: "1.25")!), .decimal(2),
        .string(""), .string("a"), .string("B"), .string("é"), .string("e\u{301}"), .string("ab"),
        // Strings Swift 6.3's own `<` orders without transitivity (`StringOrder`).
        .string("éa"), .string("a\u{308}"), .string("ä\u{7F}"), .string("\u{212A}"), .string("K"), .string("K-가K"),
        .string("\u{1100}\u{1161}"), .string("가é"), .string("é\r"), .string("я"), .string("日本"),
        .string("a longer string than fifteen bytes"), .string("a longer string than fifteen bytes, é"),
        .date(Date(timeIntervalSinceReferenceDate: -1)), .date(Date(timeIntervalSinceReferenceDate: 3)),
        .data(Data()), .data(Data([1])), .data(Data([1, 0])),
        .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1))), .url(URL(string: "https://a.example")!),
        .array([]), .array([.int(1)]), .array([.int(1), .null]), .array([.double(1)]),
        .dictionary([]), .dictionary([Value.Pair(key: .string("a"), value: .int(1))]),
        .dictionary([Value.Pair(key: .string("a"), value: .int(2))]), .dictionary([Value.Pair(key: .string("b"), value: .int(0))]),
        .codable(Data("{}".utf8)), .reference(RowID(1)), .reference(RowID(2)), .references([RowID(1)]), .references([]),
    ]

    @Test func lessThanKeepsComparablesLawsWithEquality() {
        let pool = Self.pool
        for (i, a) in pool.enumerated() {
            #expect(!(a < a), "pool[\(i)] < itself")
            for (j, b) in pool.enumerated() {
                let outcomes = [a < b, a == b, b < a].filter { $0 }.count
                #expect(outcomes == 1, "pool[\(i)] \(a) and pool[\(j)] \(b): \(a < b) \(a == b) \(b < a)")
            }
        }
        for a in pool {
            for b in pool where a < b {
                for c in pool where b < c {
                    #expect(a < c, "\(a) < \(b) < \(c) but not \(a) < \(c)")
                }
            }
        }
    }

    /// `StringOrder` (strings in `Value`'s order, string indexes) is NFC scalar order
    /// with `==` as ties, for small strings (held in the `String` value) and large
    /// ones, ASCII or not, decided by bytes or by normalizing.
    @Test func stringsOrderByNormalizedScalars() {
        #expect(StringOrder._layoutHolds, "String's layout is not the one StringOrder reads")
        let pieces = [
            "a", "e", "K", "z", "0", "-", "\r", "\n", "\u{0}", "\u{7F}", "\u{301}", "\u{308}", "é", "ä", "\u{212A}", "\u{1100}",
            "\u{1161}", "가", "🙂", "я", "и\u{306}", "日本", "が", "か\u{3099}", "Ω", "\u{2126}", "trip-", "a-longer-piece-of-ascii",
        ]
        var rng = SplitMix(seed: 12)
        func text() -> String { (0..<Int.random(in: 0...7, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined() }
        func normalized(_ s: String) -> [UInt32] { s.precomposedStringWithCanonicalMapping.unicodeScalars.map(\.value) }
        for _ in 0..<20_000 {
            let (a, b) = (text(), text())
            let expected = a == b ? 0 : (normalized(a).lexicographicallyPrecedes(normalized(b)) ? -1 : 1)
            #expect(StringOrder.compare(a, b).signum() == expected, "\(a.unicodeScalars.map(\.value)) vs \(b.unicodeScalars.map(\.value))")
        }
    }

    @Test func numbersOfDifferentKindsCompareExactlyThenByKind() {
        #expect(Value.int(9_007_199_254_740_993) > .double(9_007_199_254_740_992))
        #expect(Value.double(9_007_199_254_740_992) > .int(9_007_199_254_740_991))
        #expect(Value.int(1) < .uint(1) && Value.uint(1) < .double(1))
        #expect(Value.uint(.max) < .double(0x1p64))
        #expect(Value.int(-1) < .uint(0))
        #expect(Value.double(.nan) > .int(.max) && Value.double(.nan) > .double(.infinity))
        #expect(Value.dictionary([Value.Pair(key: .string("a"), value: .int(1))]) < .dictionary([Value.Pair(key: .string("a"), value: .int(2))]))
    }
}
