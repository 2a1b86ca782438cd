/// A hash that is the same on every run and machine (Swift's `Hasher` is seeded per
/// process), and names shortened with it to fit a length limit.
public enum StableName {
    /// FNV-1a, 64-bit, of `text`'s UTF-8.
    public static func hash(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return hash
    }

    /// `name` when its UTF-8 fits in `limit` bytes; else a prefix of it that ends on
    /// a character boundary, `separator`, and the 16 hex digits of `hash(name)`, in
    /// `limit` bytes: two long names never become one, and the same name always
    /// gives the same result.
    public static func fitting(_ name: String, in limit: Int, separator: Character) -> String {
        let bytes = Array(name.utf8)
        guard bytes.count > limit else { return name }
        var prefix = bytes.prefix(limit - 16 - separator.utf8.count)
        // Drop a cut character: continuation bytes, then the lead byte they follow.
        while let last = prefix.last, last & 0xC0 == 0x80 { prefix.removeLast() }
        if let last = prefix.last, last & 0xC0 == 0xC0 { prefix.removeLast() }
        let hex = String(hash(name), radix: 16)
        return String(decoding: prefix, as: UTF8.self) + String(separator) + String(repeating: "0", count: 16 - hex.count) + hex
    }
}
