import Foundation

/// The engine's order of strings: by their NFC-normalized Unicode scalars, the order
/// Swift documents for `String`'s `<`, with `==` (canonical equivalence) as its ties.
///
/// Not Swift's `<` itself: on Swift 6.3 that is not a strict weak order for
/// strings that are not in NFC (it puts `"e\u{301}"` above `"éa"`, of which it is
/// a prefix; `"a\u{308}"` above `"ä\u{7F}"`; KELVIN SIGN and Hangul jamo break
/// transitivity), and a B-tree sorted by an order without transitivity loses rows
/// to searches. Indexes, sorts and predicates all compare strings here.
///
/// Most comparisons are decided by the UTF-8 bytes (UTF-8 keeps scalar order): when
/// the scalars where the strings part, and the ones after them, are of scripts NFC
/// leaves alone (`isInert`), both strings normalize alike up to there. Only the
/// others normalize both strings (an allocation each).
public enum StringOrder {
    /// Three-way comparison: negative when `a` comes first, zero when `a == b`.
    /// - Complexity: O(length of the common prefix); O(n) with normalization
    @inline(__always)
    public static func compare(_ a: String, _ b: String) -> Int {
        let (a0, a1) = words(a), (b0, b1) = words(b)
        if a1 >> 60 == 0xE, b1 >> 60 == 0xE { return smallASCIICompare(a0, a1, b0, b1) }
        return compareOther(a, b, ascii: isASCII(a0, a1) && isASCII(b0, b1))
    }

    /// Strings other than two small ASCII ones.
    @inline(never)
    static func compareOther(_ a: String, _ b: String, ascii: Bool) -> Int {
        // ASCII is NFC already, and Swift compares ASCII strings' bytes (memcmp).
        if ascii { return a < b ? -1 : (a == b ? 0 : 1) }
        if let c = bytewiseCompare(a, b) { return c }
        return normalizedCompare(a, b)
    }

    // A `String` is two words whose layout Swift's ABI fixes (`_StringObject`); the
    // engine reads three facts from them, which `_layoutHolds` checks (a test asserts
    // it): a small string (up to 15 bytes, held in the words themselves) has the top
    // bits `1x10` in its second word, `x` set when it is ASCII, the count in the next
    // four bits, its bytes in order from the first word and zeros after them; a large
    // one has its ASCII flag in the first word's top bit.

    /// The two words of `string`, read in place (a copy would retain its object).
    @inline(__always)
    static func words(_ string: borrowing String) -> (UInt64, UInt64) {
        withUnsafeBytes(of: string) { ($0.load(as: UInt64.self), $0.load(fromByteOffset: 8, as: UInt64.self)) }
    }

    /// Whether the string of these words is known to be ASCII.
    @inline(__always)
    static func isASCII(_ w0: UInt64, _ w1: UInt64) -> Bool {
        w1 & (1 << 61) != 0 ? w1 & (1 << 62) != 0 : w0 & (1 << 63) != 0
    }

    /// The comparison of two small ASCII strings, in place: byte order as integer
    /// order, then the shorter first (where zeros pad it).
    @inline(__always)
    static func smallASCIICompare(_ a0: UInt64, _ a1: UInt64, _ b0: UInt64, _ b1: UInt64) -> Int {
        let (x0, y0) = (a0.byteSwapped, b0.byteSwapped)
        if x0 != y0 { return x0 < y0 ? -1 : 1 }
        let (x1, y1) = ((a1 & 0x00FF_FFFF_FFFF_FFFF).byteSwapped, (b1 & 0x00FF_FFFF_FFFF_FFFF).byteSwapped)
        if x1 != y1 { return x1 < y1 ? -1 : 1 }
        let (m, n) = (a1 >> 56 & 0xF, b1 >> 56 & 0xF)
        return m == n ? 0 : (m < n ? -1 : 1)
    }

    /// The first eight bytes of a string known to be ASCII, as a big-endian integer
    /// padded with zeros: strings whose prefixes differ are in `compare`'s order
    /// (ASCII is NFC, and the padding puts a shorter string first), so bulk builds
    /// radix-sort by prefix and compare only within runs of equal prefixes. Nil for
    /// other strings.
    static func asciiPrefix(_ string: String) -> UInt64? {
        let (w0, w1) = words(string)
        if w1 >> 60 == 0xE { return w0.byteSwapped }
        guard isASCII(w0, w1) else { return nil }
        return string.utf8.withContiguousStorageIfAvailable { bytes in
            var prefix: UInt64 = 0
            for i in 0..<8 { prefix = prefix << 8 | UInt64(i < bytes.count ? bytes[i] : 0) }
            return prefix
        } ?? nil
    }

    /// Bytes `8 * chunk ..< 8 * chunk + 8` of a string `asciiPrefix` accepted, as a
    /// big-endian integer padded with zeros (chunk 0 is the prefix): strings whose
    /// earlier chunks are equal and whose chunk `chunk` differs are in that chunk's
    /// order, so long runs of one prefix sort by radix on the next chunk.
    static func asciiChunk(_ string: String, _ chunk: Int) -> UInt64 {
        let (w0, w1) = words(string)
        if w1 >> 60 == 0xE {
            switch chunk {
            case 0: return w0.byteSwapped
            case 1: return (w1 & 0x00FF_FFFF_FFFF_FFFF).byteSwapped
            default: return 0
            }
        }
        return string.utf8.withContiguousStorageIfAvailable { bytes in
            var value: UInt64 = 0
            let start = 8 * chunk
            for i in start..<(start + 8) { value = value << 8 | UInt64(i < bytes.count ? bytes[i] : 0) }
            return value
        } ?? 0
    }

    /// Whether strings are laid out as `compare` reads them.
    public static var _layoutHolds: Bool {
        var built = "ab"
        built += "c"
        let sliced = String("xyz-abc".dropFirst(4))
        let fifteen = String(repeating: "z", count: 14) + "y"
        let large = String(repeating: "q", count: 16)
        let largeNonASCII = String(repeating: "é", count: 10)
        let (l0, l1) = words(large), (n0, n1) = words(largeNonASCII)
        return words(built) == (0x63_6261, 0xE3 << 56) && words(sliced) == (0x63_6261, 0xE3 << 56)
            && words("") == (0, 0xE0 << 56)
            && words(fifteen) == (0x7A7A_7A7A_7A7A_7A7A, 0xEF79_7A7A_7A7A_7A7A)
            && words("é").1 >> 60 == 0xA
            && l1 >> 60 != 0xE && l1 & (1 << 61) == 0 && isASCII(l0, l1) && l0 & 0xFFFF_FFFF_FFFF == 16
            && n1 & (1 << 61) == 0 && !isASCII(n0, n1)
    }

    /// Whether `a` comes before `b`.
    @inline(__always)
    public static func less(_ a: String, _ b: String) -> Bool { compare(a, b) < 0 }

    /// The comparison of the UTF-8 bytes when it is the normalized one; nil when
    /// normalization might change the bytes where the strings part.
    @inline(__always)
    static func bytewiseCompare(_ a: String, _ b: String) -> Int? {
        let decided = a.utf8.withContiguousStorageIfAvailable { x -> Int? in
            let inner = b.utf8.withContiguousStorageIfAvailable { y -> Int? in
                let n = Swift.min(x.count, y.count)
                var i = 0
                while i < n, x[i] == y[i] { i += 1 }
                if i == n {
                    if x.count == y.count { return 0 }
                    // One is a prefix of the other: the shorter comes first unless what
                    // the longer goes on with may compose with what they share.
                    return x.count < y.count ? (startsInert(y, at: i) ? -1 : nil) : (startsInert(x, at: i) ? 1 : nil)
                }
                // Fast path: ASCII where they part, and after.
                if x[i] < 0x80, y[i] < 0x80, i + 1 == x.count || x[i + 1] < 0x80, i + 1 == y.count || y[i + 1] < 0x80 {
                    return x[i] < y[i] ? -1 : 1
                }
                // The scalars they part at start at the same place: the bytes before are equal.
                var start = i
                while start > 0, x[start] & 0xC0 == 0x80 { start -= 1 }
                guard let (_, xEnd) = inertScalar(x, at: start), let (_, yEnd) = inertScalar(y, at: start),
                      xEnd == x.count || startsInert(x, at: xEnd), yEnd == y.count || startsInert(y, at: yEnd)
                else { return nil }
                return x[i] < y[i] ? -1 : 1
            }
            return inner ?? nil
        }
        return decided ?? nil
    }

    /// Whether the scalar starting at `i` is inert.
    @inline(__always)
    private static func startsInert(_ bytes: UnsafeBufferPointer<UInt8>, at i: Int) -> Bool {
        bytes[i] < 0x80 || inertScalar(bytes, at: i) != nil
    }

    /// The scalar starting at byte `i` and where it ends, if it is inert.
    private static func inertScalar(_ bytes: UnsafeBufferPointer<UInt8>, at i: Int) -> (UInt32, Int)? {
        let lead = UInt32(bytes[i])
        let length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4
        guard i + length <= bytes.count else { return nil }
        var scalar = length == 1 ? lead : lead & (0x7F >> length)
        for k in 1..<max(length, 1) { scalar = scalar << 6 | UInt32(bytes[i + k] & 0x3F) }
        return isInert(scalar) ? (scalar, i + length) : nil
    }

    /// Whether NFC never changes `scalar` nor lets it change its neighbours: it
    /// decomposes to nothing else (no singleton), has combining class 0 and is never
    /// the second scalar of a composition. Whole script ranges where that holds:
    /// ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic letters (without their
    /// combining marks), CJK ideographs, kana, precomposed Hangul syllables.
    @inline(__always)
    static func isInert(_ scalar: UInt32) -> Bool {
        switch scalar {
        case 0x00...0x7F, 0xA0...0x17F: true
        case 0x391...0x3A9, 0x3B1...0x3C9: true
        case 0x400...0x482, 0x48A...0x52F: true
        case 0x3041...0x3096, 0x30A1...0x30FA: true
        case 0x4E00...0x9FFF, 0xAC00...0xD7A3: true
        default: false
        }
    }

    /// The comparison of the NFC forms; `==` decides ties, and Swift's `<` where the
    /// two normalizations disagree.
    @inline(never)
    static func normalizedCompare(_ a: String, _ b: String) -> Int {
        if a == b { return 0 }
        let x = a.precomposedStringWithCanonicalMapping.utf8, y = b.precomposedStringWithCanonicalMapping.utf8
        if x.lexicographicallyPrecedes(y) { return -1 }
        if y.lexicographicallyPrecedes(x) { return 1 }
        return a < b ? -1 : 1
    }
}
