/// A sealed segment's strings as one buffer of UTF-8 bytes and the packed end of each.
///
/// A `String` takes 16 bytes inline, and one longer than 15 bytes a heap object of its
/// own besides (a 32-byte header and the allocator's rounding: about 80 bytes for a
/// 27-byte note). Back to back they take their bytes and 2 or 3 bytes of offset. A
/// string is made again when read, allocating when it is long.
struct StringHeap: Sendable {
    private(set) var bytes: [UInt8]
    /// The offset one past each position's last byte.
    private(set) var ends: PackedInts

    /// The strings at the positions `present` marks (the rest are stored empty).
    /// - Complexity: O(total bytes)
    init(_ strings: some RandomAccessCollection<String>, present: [UInt64]) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(strings.reduce(0) { $0 + $1.utf8.count })
        var ends = [Int64](repeating: 0, count: strings.count)
        for (i, string) in strings.enumerated() {
            if Bitmap.test(present, i) { bytes.append(contentsOf: string.utf8) }
            ends[i] = Int64(bytes.count)
        }
        self.bytes = bytes
        // Offsets of at most 2⁶³: always packable.
        self.ends = ends.withUnsafeBufferPointer { PackedInts($0, maximumWidth: 63)! }
    }

    var count: Int { ends.count }

    /// The string at `position`.
    /// - Complexity: O(its length)
    @inline(__always)
    subscript(position: Int) -> String {
        let start = position == 0 ? 0 : Int(ends[position - 1])
        let end = Int(ends[position])
        return bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[start..<end]), as: UTF8.self) }
    }

    /// Every string, in order.
    /// - Complexity: O(total bytes)
    func unpacked() -> [String] { (0..<count).map { self[$0] } }

    /// Calls `body` with each position of `positions` and its string's UTF-8 bytes in
    /// place, making no `String` (a document's save copies them as they are).
    /// - Complexity: O(`positions.count`)
    @inline(__always)
    func forEachUTF8(in positions: Range<Int>, _ body: (Int, UnsafeBufferPointer<UInt8>) -> Void) {
        guard !positions.isEmpty else { return }
        var start = positions.lowerBound == 0 ? 0 : Int(ends[positions.lowerBound - 1])
        bytes.withUnsafeBufferPointer { all in
            ends.forEach(in: positions) { p, end in
                body(p, UnsafeBufferPointer(rebasing: all[start..<Int(end)]))
                start = Int(end)
            }
        }
    }

    /// The bytes the heap takes.
    var byteCount: Int { bytes.count + ends.byteCount }

    /// What a heap of `strings` (those `present` marks) takes, `byteCount` before it
    /// is built.
    static func byteCount(of strings: some RandomAccessCollection<String>, present: [UInt64]) -> Int {
        var total = 0
        for (i, string) in strings.enumerated() where Bitmap.test(present, i) { total += string.utf8.count }
        let width = total == 0 ? 0 : 64 - UInt64(total).leadingZeroBitCount
        return total + (width == 0 ? 0 : ((strings.count * width + 63) >> 6 + 1) * 8)
    }

    /// What `strings` take as an array of `String`s: 16 bytes each, and for each one
    /// stored out of line its object (header, bytes, terminator, allocator rounding).
    static func arrayByteCount(_ strings: some RandomAccessCollection<String>) -> Int {
        strings.reduce(strings.count * 16) { total, string in
            let n = string.utf8.count
            return n <= 15 ? total : total + ((32 + n + 1 + 8 + 15) & ~15)
        }
    }

    /// Whether any of `strings` is stored out of line (longer than a small string).
    static func holdsLongStrings(_ strings: some RandomAccessCollection<String>) -> Bool {
        strings.contains { $0.utf8.count > 15 }
    }
}
