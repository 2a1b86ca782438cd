import Foundation

/// The byte layout of a document file; Docs/DocumentFormat.md is its specification.
///
/// A document is a 32-byte header, then frames back to back: the snapshot (one
/// schema frame, row frames, one snapshot-end frame), then journal frames, one per
/// save. Every frame carries its own checksums, so a reader can tell a torn last
/// frame (dropped) from damage anywhere else (an error).
public enum DocumentFormat {
    /// Incompatible changes bump `major`: readers refuse documents of another major.
    public static let major = 1
    /// Additions an older reader can ignore bump `minor` (today: header flag bits
    /// and reserved fields only). Readers try newer minors and report
    /// `unsupportedFormat` if they meet something unknown; writers refuse them.
    public static let minor = 0

    static let magic: [UInt8] = Array("OSDDOC\r\n".utf8)
    static let headerSize = 32
    /// "OSDF" as bytes.
    static let frameMarker: UInt32 = 0x4644_534F
    static let frameHeaderSize = 20
    static let frameTrailerSize = 4
    /// Row frames hold at most this many rows, so sections stay well under 4 GiB
    /// and compress in pieces.
    static let rowsPerFrame = 16_384
    /// Row frames are also cut once their payload passes this many bytes.
    static let bytesPerFrame = 64 << 20
    /// Frame lengths are 32-bit.
    static let maximumFrameBytes = Int(UInt32.max)
    /// Readers refuse frames that claim more than this raw size (2 GiB), before
    /// allocating for them.
    static let maximumRawFrameBytes = Int(Int32.max)
    /// Row identifiers above this are damage: tables allocate by identifier.
    public static let maximumRowID: Int64 = 1 << 32
    /// Payloads below this size are stored rather than compressed.
    static let compressionThreshold = 128
}

/// What a frame holds.
public enum FrameKind: UInt8, Sendable, CustomStringConvertible {
    case schema = 1
    case rows = 2
    case snapshotEnd = 3
    case commit = 4
    /// The rows of one ordered index, in index order: opening builds the B-tree
    /// from it in O(n) instead of sorting.
    case indexOrder = 5

    public var description: String {
        switch self {
        case .schema: "schema"
        case .rows: "rows"
        case .snapshotEnd: "snapshot end"
        case .commit: "commit"
        case .indexOrder: "index order"
        }
    }
}

/// The fixed header at the start of a document.
struct DocumentHeader: Equatable {
    var major = DocumentFormat.major
    var minor = DocumentFormat.minor
    var flags: UInt32 = 0
    /// The store generation the snapshot holds; journal frames continue from it.
    var generation: UInt64

    func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: DocumentFormat.headerSize)
        w.raw(DocumentFormat.magic)
        w.fixed32(UInt32(major) | UInt32(minor) << 16)
        w.fixed32(flags)
        w.fixed64(generation)
        w.fixed32(0)
        w.fixed32(CRC32C.checksum(w.bytes))
        return w.bytes
    }

    static func decode(_ bytes: [UInt8], path: String) throws(DocumentError) -> DocumentHeader {
        guard bytes.count >= DocumentFormat.magic.count, Array(bytes[0..<8]) == DocumentFormat.magic else {
            throw .notADocument(path: path)
        }
        guard bytes.count >= DocumentFormat.headerSize else {
            throw .damaged(path: path, offset: bytes.count, reason: "the header is cut short")
        }
        func field32(_ at: Int) -> UInt32 {
            bytes.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: UInt32.self)) }
        }
        guard field32(28) == CRC32C.checksum(Array(bytes[0..<28])) else {
            throw .damaged(path: path, offset: 28, reason: "header checksum mismatch")
        }
        let version = field32(8)
        let generation = bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 16, as: UInt64.self)) }
        let header = DocumentHeader(
            major: Int(version & 0xFFFF), minor: Int(version >> 16), flags: field32(12), generation: generation)
        guard header.major == DocumentFormat.major else {
            throw .unsupportedFormat(path: path, major: header.major, minor: header.minor)
        }
        guard header.generation < UInt64(Int64.max) else {
            throw .damaged(path: path, offset: 16, reason: "generation \(header.generation) out of range")
        }
        return header
    }
}

/// Frame encoding and scanning.
enum Frame {
    /// The bytes of one frame holding `payload`, compressed at `level` when that
    /// helps; stored when `level` is nil.
    static func encode(kind: FrameKind, payload: [UInt8], level: Int32?) throws(DocumentError) -> [UInt8] {
        var codec: UInt8 = 0
        var stored = payload
        if let level, payload.count >= DocumentFormat.compressionThreshold {
            let compressed = payload.withUnsafeBytes { Zstd.compress($0, level: level) }
            if compressed.count < payload.count {
                codec = 1
                stored = compressed
            }
        }
        guard payload.count <= DocumentFormat.maximumFrameBytes else {
            throw .io(operation: "writing a \(kind) frame of \(payload.count) bytes (the limit is 4 GiB)", path: "", errno: EFBIG)
        }
        var w = ByteWriter(capacity: stored.count + DocumentFormat.frameHeaderSize + DocumentFormat.frameTrailerSize)
        w.fixed32(DocumentFormat.frameMarker)
        w.byte(kind.rawValue)
        w.byte(codec)
        w.byte(0)
        w.byte(0)
        w.fixed32(UInt32(stored.count))
        w.fixed32(UInt32(payload.count))
        w.fixed32(CRC32C.checksum(w.bytes))
        w.raw(stored)
        w.fixed32(stored.withUnsafeBytes { CRC32C.checksum($0) })
        return w.bytes
    }

    /// Whether a frame header with a valid checksum starts anywhere after `offset`.
    /// - Complexity: O(bytes after `offset`); only damaged files pay it.
    static func intactHeaderExists(in file: [UInt8], after offset: Int) -> Bool {
        var at = offset + 1
        let size = DocumentFormat.frameHeaderSize
        while at + size <= file.count {
            if file[at] == 0x4F, file[at + 1] == 0x53, file[at + 2] == 0x44, file[at + 3] == 0x46 {
                let stored = file.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: at + 16, as: UInt32.self)) }
                if stored == CRC32C.checksum(Array(file[at..<(at + 16)])), FrameKind(rawValue: file[at + 4]) != nil {
                    return true
                }
            }
            at += 1
        }
        return false
    }

    /// A frame read back, payload decompressed.
    struct Scanned {
        var kind: FrameKind
        var offset: Int
        var length: Int
        var payload: [UInt8]
    }

    enum Scan {
        case frame(Scanned)
        /// The file ends inside this frame, or its checksum fails and nothing follows it.
        case torn(offset: Int, reason: String)
        case end
    }

    /// Reads the frame at `offset` of `file`.
    ///
    /// A frame is torn when the file ends inside it, or when its header or payload
    /// checksum fails and no intact frame header follows it anywhere in the file
    /// (an append a crash cut short: after power loss any of its pages, the header's
    /// included, may be missing). A mismatch with an intact frame after it is damage.
    static func scan(_ file: [UInt8], at offset: Int, path: String) throws(DocumentError) -> Scan {
        let remaining = file.count - offset
        if remaining == 0 { return .end }
        if remaining < DocumentFormat.frameHeaderSize {
            return .torn(offset: offset, reason: "the file ends inside a frame header")
        }
        let header = Array(file[offset..<(offset + DocumentFormat.frameHeaderSize)])
        func field(_ at: Int) -> UInt32 {
            header.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: UInt32.self)) }
        }
        let marker = field(0)
        let kindByte = header[4]
        let codec = header[5]
        let storedLength = Int(field(8))
        let rawLength = Int(field(12))
        let headerCRC = field(16)
        guard marker == DocumentFormat.frameMarker, headerCRC == CRC32C.checksum(Array(header[0..<16])) else {
            if !intactHeaderExists(in: file, after: offset) {
                return .torn(offset: offset, reason: "an incomplete frame header ends the file")
            }
            throw .damaged(path: path, offset: offset, reason: "frame header checksum mismatch")
        }
        guard let kind = FrameKind(rawValue: kindByte) else {
            throw .damaged(path: path, offset: offset + 4, reason: "unknown frame kind \(kindByte)")
        }
        guard rawLength <= DocumentFormat.maximumRawFrameBytes else {
            throw .damaged(path: path, offset: offset + 12, reason: "frame of \(rawLength) bytes exceeds the \(DocumentFormat.maximumRawFrameBytes)-byte limit")
        }
        let length = DocumentFormat.frameHeaderSize + storedLength + DocumentFormat.frameTrailerSize
        if remaining < length {
            return .torn(offset: offset, reason: "the file ends inside a \(kind) frame")
        }
        let payloadStart = offset + DocumentFormat.frameHeaderSize
        let stored = Array(file[payloadStart..<(payloadStart + storedLength)])
        var trailer = ByteReader(Array(file[(payloadStart + storedLength)..<(offset + length)]))
        let payloadCRC = (try? trailer.fixed32()) ?? 0
        guard payloadCRC == stored.withUnsafeBytes({ CRC32C.checksum($0) }) else {
            if !intactHeaderExists(in: file, after: offset) {
                return .torn(offset: offset, reason: "the last \(kind) frame's checksum fails")
            }
            throw .damaged(path: path, offset: payloadStart, reason: "\(kind) frame checksum mismatch")
        }
        let payload: [UInt8]
        switch codec {
        case 0:
            guard rawLength == storedLength else {
                throw .damaged(path: path, offset: offset + 12, reason: "stored frame with two lengths")
            }
            payload = stored
        case 1:
            switch stored.withUnsafeBytes({ Zstd.decompress($0, size: rawLength) }) {
            case let .success(bytes): payload = bytes
            case let .failure(failure):
                throw .damaged(path: path, offset: payloadStart, reason: "\(kind) frame does not decompress: \(failure.reason)")
            }
        default:
            throw .damaged(path: path, offset: offset + 5, reason: "unknown codec \(codec)")
        }
        return .frame(Scanned(kind: kind, offset: offset, length: length, payload: payload))
    }
}
