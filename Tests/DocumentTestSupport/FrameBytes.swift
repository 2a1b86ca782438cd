import CZstd
import Foundation
import OpenSwiftDataStore

/// Document bytes built and edited by hand, from Docs/DocumentFormat.md: hostile
/// tests craft frames the writer never makes, and recompute checksums after edits
/// so the reader's other defences are the ones tested.
/// Where a frame sits in a file: what the reader reports (`FrameSummary`), or what
/// `FrameBytes.frames(in:)` finds by walking the headers of an edited file.
public protocol FramePlace {
    var kind: FrameKind { get }
    var offset: Int { get }
    var length: Int { get }
    var rawLength: Int { get }
}

extension DocumentReader.FrameSummary: FramePlace {}

public enum FrameBytes {
    public struct Place: FramePlace {
        public var kind: FrameKind
        public var offset: Int
        public var length: Int
        public var rawLength: Int
    }

    /// The frames of `file` found by following stored lengths from the document
    /// header, up to the first that is cut short or has an unknown kind. Checksums
    /// are not checked: the file may have been edited on purpose.
    public static func frames(in file: [UInt8]) -> [Place] {
        var places: [Place] = []
        var at = 32
        while file.count - at >= 24, let kind = FrameKind(rawValue: file[at + 4]) {
            func field(_ o: Int) -> Int { file[(at + o)..<(at + o + 4)].reversed().reduce(0) { $0 << 8 | Int($1) } }
            let length = 24 + field(8)
            guard file.count - at >= length else { break }
            places.append(Place(kind: kind, offset: at, length: length, rawLength: field(12)))
            at += length
        }
        return places
    }

    /// CRC-32C (Castagnoli, reflected, initial and final value all ones), a byte at a time.
    public static func crc32c<C: Collection>(_ bytes: C) -> UInt32 where C.Element == UInt8 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = (crc >> 8) ^ crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] }
        return ~crc
    }

    private static let crcTable: [UInt32] = (0..<256).map { (i: Int) -> UInt32 in
        var crc = UInt32(i)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        return crc
    }

    public static func fixed32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }

    public static func varint(_ value: UInt64) -> [UInt8] {
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
    public static func header(kind: FrameKind, codec: UInt8, stored: Int, raw: Int) -> [UInt8] {
        var h = fixed32(0x4644_534F) + [kind.rawValue, codec, 0, 0] + fixed32(UInt32(stored)) + fixed32(UInt32(raw))
        h += fixed32(crc32c(h))
        return h
    }

    /// A whole frame around `stored` bytes (already compressed when `codec` is 1).
    public static func frame(kind: FrameKind, codec: UInt8 = 0, stored: [UInt8], raw: Int? = nil) -> [UInt8] {
        header(kind: kind, codec: codec, stored: stored.count, raw: raw ?? stored.count) + stored + fixed32(crc32c(stored))
    }

    /// `payload` as one zstd frame.
    public static func zstd(_ payload: [UInt8], level: Int32 = 19) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: ZSTD_compressBound(payload.count))
        let n = payload.withUnsafeBytes { src in
            out.withUnsafeMutableBytes { ZSTD_compress($0.baseAddress, $0.count, src.baseAddress, src.count, level) }
        }
        precondition(ZSTD_isError(n) == 0)
        return Array(out[0..<n])
    }

    /// `payload` decompressed from one or more zstd frames into `size` bytes, or
    /// nil when it does not decompress to exactly that.
    public static func unzstd(_ payload: ArraySlice<UInt8>, size: Int) -> [UInt8]? {
        // An edited length must not make the editor allocate what the reader would not.
        guard size <= payload.count * 256 + (1 << 20) else { return nil }
        var out = [UInt8](repeating: 0, count: size)
        let n = Array(payload).withUnsafeBytes { src in
            out.withUnsafeMutableBytes { ZSTD_decompress($0.baseAddress, $0.count, src.baseAddress, src.count) }
        }
        return ZSTD_isError(n) == 0 && n == size ? out : nil
    }

    /// The raw payload of a whole frame of `file`: its stored bytes, decompressed
    /// when its codec byte says zstd.
    public static func payload(of frame: some FramePlace, in file: [UInt8]) -> [UInt8]? {
        let stored = file[(frame.offset + 20)..<(frame.offset + frame.length - 4)]
        return file[frame.offset + 5] == 1 ? unzstd(stored, size: frame.rawLength) : Array(stored)
    }

    /// `file` with its frame at `frame` stored uncompressed, as writers store
    /// frames that do not compress.
    public static func uncompressing(_ frame: some FramePlace, in file: [UInt8]) -> [UInt8] {
        guard file[frame.offset + 5] == 1, let payload = payload(of: frame, in: file) else { return file }
        return replacing(frame, in: file, stored: payload)
    }

    /// `file` with the frame at `frame` given a new payload (stored as is) and
    /// fresh checksums; the frames after it move.
    public static func replacing(
        _ frame: some FramePlace, in file: [UInt8], codec: UInt8 = 0, stored: [UInt8], raw: Int? = nil
    ) -> [UInt8] {
        Array(file[..<frame.offset]) + Self.frame(kind: frame.kind, codec: codec, stored: stored, raw: raw)
            + Array(file[(frame.offset + frame.length)...])
    }

    /// `file` with its 32-byte document header's checksum recomputed after an edit.
    public static func resealingHeader(_ file: [UInt8]) -> [UInt8] {
        guard file.count >= 32 else { return file }
        return Array(file[0..<28]) + fixed32(crc32c(file[0..<28])) + Array(file[32...])
    }

    /// `file` with the frame header at `offset` given a new checksum (over its first
    /// 16 bytes), so an edited length or kind gets past the header check.
    public static func resealingFrameHeader(_ file: [UInt8], at offset: Int) -> [UInt8] {
        guard offset >= 0, file.count - offset >= 20 else { return file }
        var out = file
        out.replaceSubrange((offset + 16)..<(offset + 20), with: fixed32(crc32c(file[offset..<(offset + 16)])))
        return out
    }
}
