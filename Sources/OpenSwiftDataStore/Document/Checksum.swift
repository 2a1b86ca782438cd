import CCRC32C

/// CRC-32C (Castagnoli), the checksum of every document header, section and
/// journal frame.
///
/// Chosen over a cryptographic hash because it only has to catch accidents (torn
/// writes, flipped bits). The processor's instruction computes it where there is one
/// (SSE 4.2, AArch64's CRC extension: `CCRC32C`), several times faster than the
/// tables; elsewhere, slicing-by-8 in plain Swift.
enum CRC32C {
    /// Whether `checksum` uses the processor's instruction.
    static let usesHardware = osd_crc32c_hardware_available() != 0

    /// Eight 256-entry tables, one after another.
    private static let table: [UInt32] = {
        var tables = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
        for i in 0..<256 {
            var crc = UInt32(i)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            tables[0][i] = crc
        }
        for i in 0..<256 {
            for t in 1..<8 {
                let previous = tables[t - 1][i]
                tables[t][i] = (previous >> 8) ^ tables[0][Int(previous & 0xFF)]
            }
        }
        return tables.flatMap { $0 }
    }()

    /// The checksum of `bytes`.
    /// - Complexity: O(n)
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard usesHardware, let base = bytes.baseAddress else { return tableChecksum(bytes) }
        return ~osd_crc32c_update(0xFFFF_FFFF, base, bytes.count)
    }

    /// The checksum of `bytes` by the tables, eight bytes a step.
    /// - Complexity: O(n)
    static func tableChecksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        table.withUnsafeBufferPointer { t in
            var crc: UInt32 = 0xFFFF_FFFF
            var i = 0
            let n = bytes.count
            while i + 8 <= n {
                let lo = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: i, as: UInt32.self)) ^ crc
                let hi = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: i + 4, as: UInt32.self))
                crc = t[7 * 256 + Int(lo & 0xFF)] ^ t[6 * 256 + Int((lo >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((lo >> 16) & 0xFF)] ^ t[4 * 256 + Int(lo >> 24)]
                    ^ t[3 * 256 + Int(hi & 0xFF)] ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
                i += 8
            }
            while i < n {
                crc = (crc >> 8) ^ t[Int((crc ^ UInt32(bytes[i])) & 0xFF)]
                i += 1
            }
            return ~crc
        }
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }
}
