import Foundation

/// The byte layout of a document file; Docs/DocumentFormat.md is its specification.
///
/// A document is a 32-byte header, then frames back to back: the snapshot (one
/// schema frame, row frames, one snapshot-end frame), then journal frames, one per
/// save. Every frame carries its own checksums, so a reader can tell a torn last
/// frame (dropped) from damage anywhere else (an error).
public enum DocumentFormat {
    /// Incompatible changes bump `major`. Format 2 stores snapshot rows in column
    /// frames; format 3 ends the snapshot-end frame with the store identifier;
    /// format 4 keeps history (commit frames end with a history section, snapshots
    /// hold history frames). This build reads formats 1 to 4 and writes 4 (a
    /// writable open rewrites an older document once). Readers refuse other majors.
    public static let major = 4
    /// Additions an older reader can ignore bump `minor` (today: header flag bits
    /// and reserved fields only). Readers try newer minors and report
    /// `unsupportedFormat` if they meet something unknown; writers refuse them.
    /// (Format 3.1 gave the header's reserved word the schema version stamp,
    /// which format 4 keeps. Format 4.1 lets a commit frame name the generation of
    /// the frame before it, history flag 4, which the documents of a group need:
    /// their generations skip.)
    public static let minor = 1
    /// The majors this build reads, each with the newest minor it knows.
    static let knownMinors: [Int: Int] = [1: 0, 2: 0, 3: 1, 4: 1]

    /// Whether commit frames of a `major` document end with a history section.
    static func keepsHistory(major: Int) -> Bool { major >= 4 }

    /// Whether `major.minor` is newer than this build knows (a reader tries it; a
    /// writer refuses it).
    static func isNewer(major: Int, minor: Int) -> Bool {
        guard let known = knownMinors[major] else { return true }
        return minor > known
    }

    static let magic: [UInt8] = Array("OSDDOC\r\n".utf8)
    static let headerSize = 32
    /// "OSDF" as bytes.
    static let frameMarker: UInt32 = 0x4644_534F
    static let frameHeaderSize = 20
    static let frameTrailerSize = 4
    /// A column frame whose payload passes this many bytes is split (row frames of
    /// format 1 were cut there too).
    static let bytesPerFrame = 64 << 20
    /// Readers refuse frames that claim more than this raw size (2 GiB), before
    /// allocating for them.
    static let maximumRawFrameBytes = Int(Int32.max)
    /// Row identifiers above this are damage.
    public static let maximumRowID: Int64 = 1 << 32
    /// A compressed frame holds at most this many payload bytes per stored byte:
    /// writers pad a frame that compresses better (with a skippable zstd frame, at
    /// most 0.4 % of its payload), and readers refuse a document whose frames claim
    /// more than this many times its size (plus `expansionAllowance`) in all. A
    /// hostile file's cost is thereby a fixed multiple of its size, not of the
    /// lengths it claims.
    static let maximumExpansion = 256
    /// Decompressed bytes every document may use whatever its size (documents of
    /// earlier builds were not padded).
    static let expansionAllowance = 16 << 20

    /// The payload bytes a reader decompresses at most for a file of `fileSize` bytes.
    static func expansionBudget(fileSize: Int) -> Int {
        fileSize.multipliedReportingOverflow(by: maximumExpansion).partialValue + expansionAllowance
    }
    /// Payloads below this size are stored rather than compressed.
    static let compressionThreshold = 128
    /// Memory a reader may spend on one cell (row × slot) of a columns frame, charged
    /// against the expansion budget before decoding: a column of nils takes two
    /// payload bytes but a buffer per row, so the budget counts cells, not bytes.
    static let bytesPerDecodedCell = 16
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
    /// Up to 4,096 rows of one entity, column by column (format 2 snapshots).
    case columns = 6
    /// History transactions (format 4 snapshots).
    case history = 7

    public var description: String {
        switch self {
        case .schema: "schema"
        case .rows: "rows"
        case .snapshotEnd: "snapshot end"
        case .commit: "commit"
        case .indexOrder: "index order"
        case .columns: "columns"
        case .history: "history"
        }
    }
}

/// The fixed header at the start of a document.
struct DocumentHeader: Equatable {
    var major = DocumentFormat.major
    /// 0 unless the document needs what a newer minor added: 4.1 for a group's
    /// documents (`Document.generationsMaySkip`), so every other document stays
    /// readable by 4.0 builds.
    var minor = 0
    var flags: UInt32 = 0
    /// The store generation the snapshot holds; journal frames continue from it.
    var generation: UInt64
    /// The application schema's version the snapshot was written in (format 3.1,
    /// the reserved word; older documents hold 0 there, which reads as none).
    var schemaVersion: SchemaVersionStamp?

    func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: DocumentFormat.headerSize)
        w.raw(DocumentFormat.magic)
        let stamp = SchemaVersionStamp.word(schemaVersion)
        w.fixed32(UInt32(major) | UInt32(minor) << 16)
        w.fixed32(flags)
        w.fixed64(generation)
        w.fixed32(stamp)
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
            major: Int(version & 0xFFFF), minor: Int(version >> 16), flags: field32(12), generation: generation,
            schemaVersion: SchemaVersionStamp(word: field32(24)))
        guard DocumentFormat.knownMinors[header.major] != nil else {
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
    /// helps; stored when `level` is nil. `decoded` is what a reader spends on the
    /// payload when that is more than its size (a columns frame's cells): the frame
    /// is padded so that stays within the expansion readers allow.
    static func encode(
        kind: FrameKind, payload: [UInt8], level: Int32?, decoded: Int = 0, context: Zstd.Context? = nil
    ) throws(DocumentError) -> [UInt8] {
        // The reader's limit (a larger frame would be written and never read again).
        guard payload.count <= DocumentFormat.maximumRawFrameBytes else {
            throw .io(operation: "writing a \(kind) frame of \(payload.count) bytes (the limit is 2 GiB)", path: "", errno: EFBIG)
        }
        // Keep the expansion readers allow (see maximumExpansion).
        let minimum = (max(payload.count, decoded) + DocumentFormat.maximumExpansion - 1) / DocumentFormat.maximumExpansion
        let compressing = level != nil && (payload.count >= DocumentFormat.compressionThreshold || minimum > payload.count)
        let header = DocumentFormat.frameHeaderSize
        let bound = compressing ? Zstd.bound(payload.count) : 0
        // Room for the payload as it is, or compressed plus the padding to `minimum`.
        let body = max(payload.count, bound + max(8, minimum))
        // One buffer, written once: zstd compresses straight behind the header, so
        // the compressed bytes are neither zero-filled first nor copied again.
        return [UInt8](unsafeUninitializedCapacity: header + body + DocumentFormat.frameTrailerSize) { buffer, count in
            let base = UnsafeMutableRawPointer(buffer.baseAddress!)
            let stored = base + header
            // 1: zstd; 0: stored as it is.
            var codec: UInt8 = 0
            var storedCount = payload.count
            if let level, compressing {
                let written = payload.withUnsafeBytes { Zstd.compress($0, level: level, into: stored, context: context) }
                if written < payload.count || minimum > payload.count {
                    codec = 1
                    storedCount = written
                    if written < minimum {
                        storedCount += Zstd.writeSkippableFrame(length: max(8, minimum - written), at: stored + written)
                    }
                }
            }
            if codec == 0, !payload.isEmpty {
                payload.withUnsafeBytes { stored.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            }
            func put32(_ value: UInt32, at offset: Int) {
                withUnsafeBytes(of: value.littleEndian) { (base + offset).copyMemory(from: $0.baseAddress!, byteCount: 4) }
            }
            put32(DocumentFormat.frameMarker, at: 0)
            base.storeBytes(of: kind.rawValue, toByteOffset: 4, as: UInt8.self)
            base.storeBytes(of: codec, toByteOffset: 5, as: UInt8.self)
            base.storeBytes(of: 0, toByteOffset: 6, as: UInt8.self)
            base.storeBytes(of: 0, toByteOffset: 7, as: UInt8.self)
            put32(UInt32(storedCount), at: 8)
            put32(UInt32(payload.count), at: 12)
            put32(CRC32C.checksum(UnsafeRawBufferPointer(start: base, count: 16)), at: 16)
            put32(CRC32C.checksum(UnsafeRawBufferPointer(start: stored, count: storedCount)), at: header + storedCount)
            count = header + storedCount + DocumentFormat.frameTrailerSize
        }
    }

    /// Whether a frame header that holds (marker, a known kind, header checksum)
    /// starts at `at`.
    static func headerHolds(in file: [UInt8], at: Int) -> Bool {
        guard at >= 0, at + DocumentFormat.frameHeaderSize <= file.count,
              file[at] == 0x4F, file[at + 1] == 0x53, file[at + 2] == 0x44, file[at + 3] == 0x46,
              FrameKind(rawValue: file[at + 4]) != nil
        else { return false }
        return file.withUnsafeBytes { raw in
            UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: at + 16, as: UInt32.self))
                == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[at..<(at + 16)]))
        }
    }

    /// The offset of the first frame after `offset` whose header holds, or nil:
    /// where a salvaging read resumes.
    /// - Complexity: O(bytes after `offset`)
    static func nextHeader(in file: [UInt8], after offset: Int) -> Int? {
        var at = offset + 1
        while at + DocumentFormat.frameHeaderSize <= file.count {
            if headerHolds(in: file, at: at) { return at }
            at += 1
        }
        return nil
    }

    /// The whole length of the frame at `offset` when its header holds (marker, a
    /// known kind, header checksum), else nil.
    static func lengthIfHeaderHolds(in file: [UInt8], at offset: Int) -> Int? {
        guard headerHolds(in: file, at: offset) else { return nil }
        let stored = file.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self))) }
        return DocumentFormat.frameHeaderSize + stored + DocumentFormat.frameTrailerSize
    }

    /// Whether the frame at `offset`, whose header checksum failed, is damage rather
    /// than a torn last append: frames follow it, to the end of the file.
    ///
    /// Only a crash tears, and only the last append: a process killed mid-write leaves
    /// a prefix of it (the file ends inside the frame, which `scan` calls torn before
    /// asking), and power loss can leave any page of an unsynced last append unwritten,
    /// its header's included. Either way no frame follows a torn one. So the reader
    /// fails closed: a failed frame is damage when, from some later position, frames
    /// whose headers hold lead one to the next (each header's length says where the
    /// next starts) up to the end of the file, or to a last frame the file cuts short.
    /// Later saves behind a damaged frame form such a chain however many of their
    /// payloads are damaged (only headers are read), unless the last frame's header
    /// is lost too: that takes a second fault, power loss on top of damage, and then
    /// reads as a tear. A torn frame's own payload (user data, which may hold
    /// anything) passes for damage only when it holds such a chain: lookalike frames
    /// leading to the end of the file, or one lookalike header whose length runs past
    /// it; failing closed, that is an error to salvage from, never a loss. (A frame
    /// whose header holds is torn only when it ends the file: `scan`.) A file that
    /// makes the search take more than a few steps per header-sized stretch of it is
    /// called damaged.
    /// - Complexity: O(bytes after `offset`), which only damaged or torn files pay.
    static func followed(in file: [UInt8], at offset: Int) -> Bool {
        var steps = 0
        let limit = 4 * (file.count / DocumentFormat.frameHeaderSize + 1)
        var candidate = offset
        while let start = nextHeader(in: file, after: candidate) {
            var at = start
            while true {
                steps += 1
                if steps > limit { return true }
                if file.count - at < DocumentFormat.frameHeaderSize { return true }
                guard let length = lengthIfHeaderHolds(in: file, at: at) else { break }
                if at + length >= file.count { return true }
                at += length
            }
            candidate = start
        }
        return false
    }

    /// A frame read back, payload decompressed (unless `compressedRawLength` is set).
    struct Scanned {
        var kind: FrameKind
        var offset: Int
        var length: Int
        var payload: [UInt8]
        /// The raw length of a payload left compressed (`scan(…, deferring:)`):
        /// `decompressed(path:)` gives the payload.
        var compressedRawLength: Int?

        /// The payload's raw length.
        var rawLength: Int { compressedRawLength ?? payload.count }

        /// The payload, decompressed if the scan left it compressed. Safe to call
        /// from several threads at once for different frames.
        func decompressed(path: String) throws(DocumentError) -> [UInt8] {
            guard let rawLength = compressedRawLength else { return payload }
            switch payload.withUnsafeBytes({ Zstd.decompress($0, size: rawLength) }) {
            case let .success(bytes): return bytes
            case let .failure(failure):
                throw .damaged(
                    path: path, offset: offset + DocumentFormat.frameHeaderSize,
                    reason: "\(kind) frame does not decompress: \(failure.reason)")
            }
        }
    }

    enum Scan {
        case frame(Scanned)
        /// The file ends inside this frame, or its checksum fails and it can be the last append.
        case torn(offset: Int, reason: String)
        case end
    }

    /// Reads the frame at `offset` of `file` (bytes in memory, or an open file read a
    /// frame at a time: `DocumentBytes`).
    ///
    /// A frame is torn when the file ends inside it; when its payload checksum fails
    /// and it ends the file; or when its header checksum fails and no chain of frames
    /// follows it (see `followed`): an append a crash cut short. Any other mismatch
    /// is damage.
    ///
    /// - Parameters:
    ///   - budget: payload bytes the reader may still decompress; the frame's raw
    ///     length is taken from it before anything is allocated.
    ///   - deferring: kinds whose payload is returned still compressed, for the
    ///     caller to decompress (on other threads).
    static func scan(
        _ file: some DocumentBytes, at offset: Int, path: String, budget: inout Int,
        deferring: FrameKind? = nil
    ) throws(DocumentError) -> Scan {
        let remaining = file.count - offset
        if remaining == 0 { return .end }
        let header = remaining < DocumentFormat.frameHeaderSize
            ? [] : try file.bytes(offset..<(offset + DocumentFormat.frameHeaderSize))
        if header.count < DocumentFormat.frameHeaderSize {
            return .torn(offset: offset, reason: "the file ends inside a frame header")
        }
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
            if !followed(in: try file.all(), at: offset) {
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
        let payloadStart = offset + DocumentFormat.frameHeaderSize
        // The payload and its trailer, read at once; the trailer then comes off the end.
        var stored = remaining < length ? [] : try file.bytes(payloadStart..<(offset + length))
        if stored.count < storedLength + DocumentFormat.frameTrailerSize {
            return .torn(offset: offset, reason: "the file ends inside a \(kind) frame")
        }
        var trailer = ByteReader(Array(stored[storedLength...]))
        stored.removeLast(DocumentFormat.frameTrailerSize)
        let payloadCRC = (try? trailer.fixed32()) ?? 0
        guard payloadCRC == stored.withUnsafeBytes({ CRC32C.checksum($0) }) else {
            // A torn append ends the file: a failed frame with any byte after it is damage.
            if offset + length == file.count {
                return .torn(offset: offset, reason: "the last \(kind) frame's checksum fails")
            }
            throw .damaged(path: path, offset: payloadStart, reason: "\(kind) frame checksum mismatch")
        }
        guard rawLength <= budget else {
            throw .damaged(
                path: path, offset: offset + 12,
                reason: "the frames claim more than \(DocumentFormat.maximumExpansion) times the file's size once decompressed")
        }
        budget -= rawLength
        let payload: [UInt8]
        switch codec {
        case 0:
            guard rawLength == storedLength else {
                throw .damaged(path: path, offset: offset + 12, reason: "stored frame with two lengths")
            }
            payload = stored
        case 1:
            if kind == deferring {
                return .frame(Scanned(kind: kind, offset: offset, length: length, payload: stored, compressedRawLength: rawLength))
            }
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
