/// Builds the raw (uncompressed) bytes of a section or frame payload.
///
/// Integers are little-endian; counts, lengths and identifiers are LEB128
/// varints, signed ones zigzag-encoded, so small numbers take one byte.
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    mutating func varint(_ value: Int) { varint(UInt64(value)) }

    /// Zigzag: 0, -1, 1, -2, … become 0, 1, 2, 3, …
    mutating func signed(_ value: Int64) { varint(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

    mutating func fixed32(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func fixed64(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func double(_ value: Double) { fixed64(value.bitPattern) }

    mutating func raw<C: Collection>(_ data: C) where C.Element == UInt8 { bytes.append(contentsOf: data) }

    /// A varint length, then the bytes.
    mutating func blob<C: Collection>(_ data: C) where C.Element == UInt8 {
        varint(data.count)
        bytes.append(contentsOf: data)
    }

    mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { blob($0) }
    }

    mutating func optionalString(_ value: String?) {
        if let value {
            byte(1)
            string(value)
        } else {
            byte(0)
        }
    }
}

/// Reads what `ByteWriter` wrote, checking every length against the bytes left.
struct ByteReader {
    struct Failure: Error {
        var offset: Int
        var reason: String
    }

    let bytes: [UInt8]
    private(set) var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { position == bytes.count }

    func fail(_ reason: String) -> Failure { Failure(offset: position, reason: reason) }

    mutating func byte() throws(Failure) -> UInt8 {
        guard position < bytes.count else { throw fail("unexpected end of data") }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func varint() throws(Failure) -> UInt64 {
        // Most varints (lengths, counts, small keys) are one byte.
        if position < bytes.count, bytes[position] < 0x80 {
            defer { position += 1 }
            return UInt64(bytes[position])
        }
        return try longVarint()
    }

    private mutating func longVarint() throws(Failure) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try byte()
            if shift == 63 && b > 1 { throw fail("varint overflows 64 bits") }
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
            if shift > 63 { throw fail("varint longer than 10 bytes") }
        }
    }

    /// A varint that must fit in `0...limit` (a count or length).
    mutating func count(limit: Int = Int(Int32.max)) throws(Failure) -> Int {
        let v = try varint()
        guard v <= UInt64(limit) else { throw fail("count \(v) exceeds \(limit)") }
        return Int(v)
    }

    mutating func signed() throws(Failure) -> Int64 {
        let v = try varint()
        return Int64(bitPattern: (v >> 1) ^ (0 &- (v & 1)))
    }

    mutating func fixed32() throws(Failure) -> UInt32 {
        guard bytes.count - position >= 4 else { throw fail("unexpected end of data") }
        defer { position += 4 }
        return bytes.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: position, as: UInt32.self)) }
    }

    mutating func fixed64() throws(Failure) -> UInt64 {
        guard bytes.count - position >= 8 else { throw fail("unexpected end of data") }
        defer { position += 8 }
        return bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: position, as: UInt64.self)) }
    }

    mutating func double() throws(Failure) -> Double { Double(bitPattern: try fixed64()) }

    mutating func raw(_ n: Int) throws(Failure) -> ArraySlice<UInt8> {
        bytes[try take(n)]
    }

    /// The positions of the next `n` bytes, which it moves past; a failure when
    /// fewer are left.
    private mutating func take(_ n: Int) throws(Failure) -> Range<Int> {
        guard n >= 0, bytes.count - position >= n else { throw fail("length \(n) runs past the end of the data") }
        defer { position += n }
        return position..<(position + n)
    }

    mutating func blob() throws(Failure) -> ArraySlice<UInt8> {
        try raw(try count(limit: bytes.count - position))
    }

    /// A length-prefixed UTF-8 string, read in place (no slice of the bytes is made:
    /// its retain and release cost more than the check of a short string).
    mutating func string() throws(Failure) -> String {
        let start = position
        // (The limit is taken before the length's own bytes are read: `take` checks again.)
        let range = try take(try count(limit: bytes.count - position))
        let string: String? = bytes.withUnsafeBufferPointer { all in
            let utf8 = UnsafeBufferPointer(rebasing: all[range])
            // ASCII needs no validation; the generic validating initializer is slow.
            if Self.isASCII(utf8) { return String(decoding: utf8, as: UTF8.self) }
            return String(validating: utf8, as: UTF8.self)
        }
        guard let string else { throw Failure(offset: start, reason: "string is not valid UTF-8") }
        return string
    }

    /// Whether every byte is below 0x80, tested eight at a time.
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        var bits: UInt64 = 0
        var i = 0
        while i + 8 <= bytes.count {
            bits |= raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < bytes.count {
            bits |= UInt64(base[i])
            i += 1
        }
        return bits & 0x8080_8080_8080_8080 == 0
    }

    mutating func optionalString() throws(Failure) -> String? {
        switch try byte() {
        case 0: return nil
        case 1: return try string()
        case let b: throw fail("optional marker \(b)")
        }
    }
}
