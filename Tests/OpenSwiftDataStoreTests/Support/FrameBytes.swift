import CZstd
import Foundation
import OpenSwiftDataStore

/// Document bytes built and edited by hand, from Docs/DocumentFormat.md: hostile
/// tests craft frames the writer never makes, and recompute checksums after edits
/// so the reader's other defences are the ones tested.
enum FrameBytes {
    /// CRC-32C (Castagnoli, reflected, initial and final value all ones), bit by bit.
    static func crc32c<C: Collection>(_ bytes: C) -> UInt32 where C.Element == UInt8 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return ~crc
    }

    static func fixed32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }

    static func varint(_ value: UInt64) -> [UInt8] {
        var v = value
        var out: [UInt8] = []
        while v >= 0x80 {
            out.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
        return out
    }

    /// A frame header: marker, kind, codec, two zero bytes, stored and raw lengths, checksum.
    static func header(kind: FrameKind, codec: UInt8, stored: Int, raw: Int) -> [UInt8] {
        var h = fixed32(0x4644_534F) + [kind.rawValue, codec, 0, 0] + fixed32(UInt32(stored)) + fixed32(UInt32(raw))
        h += fixed32(crc32c(h))
        return h
    }

    /// A whole frame around `stored` bytes (already compressed when `codec` is 1).
    static func frame(kind: FrameKind, codec: UInt8 = 0, stored: [UInt8], raw: Int? = nil) -> [UInt8] {
        header(kind: kind, codec: codec, stored: stored.count, raw: raw ?? stored.count) + stored + fixed32(crc32c(stored))
    }

    /// `payload` as one zstd frame.
    static func zstd(_ payload: [UInt8], level: Int32 = 19) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: ZSTD_compressBound(payload.count))
        let n = payload.withUnsafeBytes { src in
            out.withUnsafeMutableBytes { ZSTD_compress($0.baseAddress, $0.count, src.baseAddress, src.count, level) }
        }
        precondition(ZSTD_isError(n) == 0)
        return Array(out[0..<n])
    }

    /// `payload` decompressed from one or more zstd frames into `size` bytes.
    static func unzstd(_ payload: ArraySlice<UInt8>, size: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: size)
        let n = Array(payload).withUnsafeBytes { src in
            out.withUnsafeMutableBytes { ZSTD_decompress($0.baseAddress, $0.count, src.baseAddress, src.count) }
        }
        precondition(ZSTD_isError(n) == 0 && n == size)
        return out
    }

    /// `file` with its frame at `frame` stored uncompressed, as writers store
    /// frames that do not compress.
    static func uncompressing(_ frame: DocumentReader.FrameSummary, in file: [UInt8]) -> [UInt8] {
        let start = frame.offset + 20
        let stored = file[start..<(frame.offset + frame.length - 4)]
        guard file[frame.offset + 5] == 1 else { return file }
        return replacing(frame, in: file, stored: unzstd(stored, size: frame.rawLength))
    }

    /// `file` with the frame at `frame` given a new payload (stored as is) and
    /// fresh checksums; the frames after it move.
    static func replacing(
        _ frame: DocumentReader.FrameSummary, in file: [UInt8], codec: UInt8 = 0, stored: [UInt8], raw: Int? = nil
    ) -> [UInt8] {
        Array(file[..<frame.offset]) + Self.frame(kind: frame.kind, codec: codec, stored: stored, raw: raw)
            + Array(file[(frame.offset + frame.length)...])
    }
}
