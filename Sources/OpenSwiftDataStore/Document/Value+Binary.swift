import Foundation

/// The binary form of stored values, as documents hold them (see Docs/DocumentFormat.md).
///
/// Every value starts with a one-byte tag, so a reader needs no Swift types and no
/// schema to walk a row: the CLI dumps any document.
enum ValueTag: UInt8 {
    case null = 0, `false` = 1, `true` = 2, int = 3, uint = 4, double = 5, string = 6, date = 7
    case data = 8, uuid = 9, url = 10, decimal = 11, array = 12, dictionary = 13, codable = 14
    case reference = 15, references = 16
    /// External storage: 32-byte SHA-256 of the blob file's content, then its length.
    case blob = 17
}

/// The content hash and length of an external-storage blob.
public struct BlobReference: Hashable, Sendable {
    public var hash: [UInt8]
    public var length: Int

    public init(hash: [UInt8], length: Int) {
        self.hash = hash
        self.length = length
    }

    /// The blob's file name: the hash in lowercase hex.
    public var name: String { hash.map { String(format: "%02x", $0) }.joined() }

    /// The reference a blob file name stands for (`name` read back), with the
    /// length a document records; nil unless `name` is 64 lowercase hex digits.
    public init?(name: String, length: Int) {
        guard BlobStore.isBlobName(name) else { return nil }
        let digits = Array(name.utf8)
        hash = stride(from: 0, to: 64, by: 2).map { i in
            UInt8(String(decoding: digits[i..<(i + 2)], as: UTF8.self), radix: 16)!
        }
        self.length = length
    }
}

extension ByteWriter {
    mutating func value(_ value: Value) {
        switch value {
        case .null: byte(ValueTag.null.rawValue)
        case let .bool(b): byte(b ? ValueTag.true.rawValue : ValueTag.false.rawValue)
        case let .int(v):
            byte(ValueTag.int.rawValue)
            signed(v)
        case let .uint(v):
            byte(ValueTag.uint.rawValue)
            varint(v)
        case let .double(v):
            byte(ValueTag.double.rawValue)
            double(v)
        case let .string(s):
            byte(ValueTag.string.rawValue)
            string(s)
        case let .date(d):
            byte(ValueTag.date.rawValue)
            double(d.timeIntervalSinceReferenceDate)
        case let .data(d):
            byte(ValueTag.data.rawValue)
            blob(d)
        case let .uuid(u):
            byte(ValueTag.uuid.rawValue)
            withUnsafeBytes(of: u.uuid) { raw($0) }
        case let .url(u):
            byte(ValueTag.url.rawValue)
            string(u.absoluteString)
        case let .decimal(d):
            byte(ValueTag.decimal.rawValue)
            string(d.description)
        case let .array(items):
            byte(ValueTag.array.rawValue)
            varint(items.count)
            for item in items { self.value(item) }
        case let .dictionary(pairs):
            byte(ValueTag.dictionary.rawValue)
            varint(pairs.count)
            for pair in pairs {
                self.value(pair.key)
                self.value(pair.value)
            }
        case let .codable(json):
            byte(ValueTag.codable.rawValue)
            blob(json)
        case let .reference(id):
            byte(ValueTag.reference.rawValue)
            signed(id.rawValue)
        case let .references(ids):
            byte(ValueTag.references.rawValue)
            varint(ids.count)
            for id in ids { signed(id.rawValue) }
        }
    }

    mutating func blobReference(_ reference: BlobReference) {
        byte(ValueTag.blob.rawValue)
        raw(reference.hash)
        varint(reference.length)
    }
}

extension ByteReader {
    /// A stored reference: always a permanent row identifier.
    mutating func rowReference() throws(Failure) -> RowID {
        let raw = try signed()
        guard raw > 0, raw <= DocumentFormat.maximumRowID else { throw fail("reference to row \(raw) out of range") }
        return RowID(raw)
    }

    /// Values nest (arrays, dictionaries); deeper nesting than this is damage, not data.
    static let maximumDepth = 64

    /// A value; a blob tag yields its reference through `blob`, which returns the value.
    mutating func value(depth: Int = 0, blob: (BlobReference) throws(Failure) -> Value) throws(Failure) -> Value {
        guard depth < Self.maximumDepth else { throw fail("values nested deeper than \(Self.maximumDepth)") }
        let start = position
        let raw = try byte()
        guard let tag = ValueTag(rawValue: raw) else { throw Failure(offset: start, reason: "unknown value tag \(raw)") }
        switch tag {
        case .null: return .null
        case .false: return .bool(false)
        case .true: return .bool(true)
        case .int: return .int(try signed())
        case .uint: return .uint(try varint())
        case .double: return .double(try double())
        case .string: return .string(try string())
        case .date: return .date(Date(timeIntervalSinceReferenceDate: try double()))
        case .data: return .data(Data(try self.blob()))
        case .uuid:
            let b = Array(try self.raw(16))
            return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
        case .url:
            let s = try string()
            guard let url = URL(string: s) else { throw Failure(offset: start, reason: "invalid URL \(s)") }
            return .url(url)
        case .decimal:
            let s = try string()
            if s == "NaN" { return .decimal(.nan) }
            guard let d = Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")) else {
                throw Failure(offset: start, reason: "invalid decimal \(s)")
            }
            return .decimal(d)
        case .array:
            let n = try count(limit: bytes.count - position)
            var items: [Value] = []
            items.reserveCapacity(n)
            for _ in 0..<n { items.append(try value(depth: depth + 1, blob: blob)) }
            return .array(items)
        case .dictionary:
            let n = try count(limit: bytes.count - position)
            var pairs: [Value.Pair] = []
            pairs.reserveCapacity(n)
            for _ in 0..<n {
                let key = try value(depth: depth + 1, blob: blob)
                pairs.append(Value.Pair(key: key, value: try value(depth: depth + 1, blob: blob)))
            }
            return .dictionary(pairs)
        case .codable: return .codable(Data(try self.blob()))
        case .reference: return .reference(try rowReference())
        case .references:
            let n = try count(limit: bytes.count - position)
            var ids: [RowID] = []
            ids.reserveCapacity(n)
            for _ in 0..<n { ids.append(try rowReference()) }
            return .references(ids)
        case .blob:
            let hash = Array(try self.raw(32))
            let length = try count(limit: Int.max)
            return try blob(BlobReference(hash: hash, length: length))
        }
    }
}
