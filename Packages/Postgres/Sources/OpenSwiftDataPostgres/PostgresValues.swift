import Foundation
import NIOCore
@_spi(DataStores) import OpenSwiftData
import OpenSwiftDataStore
import PostgresNIO

/// How engine values are kept in PostgreSQL columns, and read back.
///
/// Dates are `double precision` seconds since 2001 (Foundation's reference date),
/// exactly as Swift holds them: `timestamptz` keeps microseconds and would change a
/// date on the way back. Collections, dictionaries and `Codable` composites are
/// `text` holding their self-describing JSON (`TaggedValue`), read back without the
/// schema; predicates on them are evaluated by the context.
enum PostgresValues {
    /// The column type of an attribute of `type`.
    static func columnType(_ type: ValueType) -> String {
        switch type {
        case .bool: "boolean"
        case .int: "bigint"
        case .uint: "numeric(20)"
        case .float, .double, .date: "double precision"
        case .string, .url: "text COLLATE \"C\""
        case .data: "bytea"
        case .uuid: "uuid"
        case .decimal: "numeric"
        case .array, .set, .dictionary, .codable: "text"
        }
    }

    /// Whether a column of `type` holds the value itself (SQL can compare and sort it).
    static func isScalar(_ type: ValueType) -> Bool {
        switch type {
        case .array, .set, .dictionary, .codable: false
        default: true
        }
    }

    /// Collections and composites as text (non-finite doubles as strings, which JSON
    /// lacks).
    static func json(_ value: Value) throws -> String {
        let encoder = JSONEncoder()
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
        return String(decoding: try encoder.encode(TaggedValue(value: value)), as: UTF8.self)
    }

    static func value(json text: String) throws -> Value {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
        return try decoder.decode(TaggedValue.self, from: Data(text.utf8)).value
    }

    /// Appends `value` to `binds` in its column form. Strings are stored in
    /// Unicode's composed form (NFC), so strings Swift calls equal are equal in SQL.
    /// - Throws: `PostgresStoreError.unsupportedValue` for a NaN `Decimal`, which
    ///   PostgreSQL's numeric has, but postgres-nio cannot send.
    static func append(_ value: Value, to binds: inout PostgresBindings) throws {
        switch value {
        case .null: binds.appendNull()
        case let .bool(v): binds.append(v)
        case let .int(v): binds.append(v)
        case let .uint(v):
            // Through its digits: exact for every UInt64.
            guard let decimal = Decimal(string: String(v)) else { throw PostgresStoreError.unsupportedValue("\(v)") }
            try binds.append(decimal)
        case let .double(v): binds.append(v)
        case let .string(v):
            // PostgreSQL's text holds no NUL character: refused here, typed, rather
            // than by the server mid-save.
            guard !v.utf8.contains(0) else { throw PostgresStoreError.unsupportedValue("a string holding a NUL character") }
            binds.append(v.precomposedStringWithCanonicalMapping)
        case let .date(v): binds.append(v.timeIntervalSinceReferenceDate)
        case let .data(v): binds.append(ByteBuffer(bytes: v))
        case let .uuid(v): binds.append(v)
        case let .url(v):
            guard !v.absoluteString.utf8.contains(0) else { throw PostgresStoreError.unsupportedValue("a URL holding a NUL character") }
            binds.append(v.absoluteString)
        case let .decimal(v):
            guard !v.isNaN else { throw PostgresStoreError.unsupportedValue("Decimal.nan") }
            try binds.append(v)
        case .array, .dictionary, .codable:
            binds.append(try json(value))
        case let .reference(id): binds.append(id.rawValue)
        case let .references(ids): binds.append(ids.map(\.rawValue))
        }
    }

    /// The type `append` sends `value` as, a letter a type (`.date`'s is `.double`'s:
    /// both are `double precision`).
    static func bindKind(_ value: Value) -> Character {
        switch value {
        case .null: "0"
        case .bool: "b"
        case .int, .reference: "i"
        case .uint, .decimal: "n"
        case .double, .date: "d"
        case .string, .url, .array, .dictionary, .codable: "s"
        case .data: "x"
        case .uuid: "u"
        case .references: "I"
        }
    }

    /// A list of values of one kind as one array parameter (`= ANY($n)`), or nil when
    /// the kinds differ or have no array form.
    static func appendList(_ values: [Value], to binds: inout PostgresBindings) -> Bool {
        var ints: [Int64] = [], doubles: [Double] = [], strings: [String] = [], uuids: [UUID] = []
        // Which kinds the list holds, one bit each: the array parameter has one type.
        var kinds: UInt8 = 0
        for value in values {
            switch value {
            case let .int(v): ints.append(v); kinds |= 1
            case let .reference(id): ints.append(id.rawValue); kinds |= 1
            // A NaN is left out: it equals nothing in Swift, where PostgreSQL's
            // `= ANY` finds the NaNs stored. (A list of NaNs alone binds empty.)
            case let .double(v): if !v.isNaN { doubles.append(v) }; kinds |= 2
            case let .date(v):
                if !v.timeIntervalSinceReferenceDate.isNaN { doubles.append(v.timeIntervalSinceReferenceDate) }
                kinds |= 2
            case let .string(v): strings.append(v.precomposedStringWithCanonicalMapping); kinds |= 4
            case let .uuid(v): uuids.append(v); kinds |= 8
            default: return false
            }
        }
        switch kinds {
        case 1: binds.append(ints)
        case 2: binds.append(doubles)
        case 4: binds.append(strings)
        case 8: binds.append(uuids)
        default: return false
        }
        return true
    }

    /// The value a column of an attribute of `type` holds.
    static func value(_ cell: PostgresCell, as type: ValueType) throws -> Value {
        guard let bytes = cell.bytes else { return .null }
        if cell.format == .binary, let value = binaryValue(bytes, of: cell.dataType, as: type) { return value }
        switch type {
        case .bool: return try cell.decode(Bool?.self).map(Value.bool) ?? .null
        case .int: return try cell.decode(Int64?.self).map(Value.int) ?? .null
        case .uint:
            guard let decimal = try cell.decode(Decimal?.self) else { return .null }
            guard let value = UInt64((decimal as NSDecimalNumber).stringValue) else {
                throw PostgresStoreError.unsupportedValue("\(decimal) as UInt64")
            }
            return .uint(value)
        case .float, .double: return try cell.decode(Double?.self).map(Value.double) ?? .null
        case .date: return try cell.decode(Double?.self).map { .date(Date(timeIntervalSinceReferenceDate: $0)) } ?? .null
        case .string: return try cell.decode(String?.self).map(Value.string) ?? .null
        case .url: return try cell.decode(String?.self).flatMap(URL.init(string:)).map(Value.url) ?? .null
        case .data: return try cell.decode(ByteBuffer?.self).map { .data(Data($0.readableBytesView)) } ?? .null
        case .uuid: return try cell.decode(UUID?.self).map(Value.uuid) ?? .null
        case .decimal: return try cell.decode(Decimal?.self).map(Value.decimal) ?? .null
        case .array, .set, .dictionary, .codable:
            guard let text = try cell.decode(String?.self) else { return .null }
            return try value(json: text)
        }
    }

    /// The commonest cells read straight from their binary form (a fetch reads every
    /// cell: through postgres-nio's generic decoding, the cells of a 100-row fetch took
    /// 28 µs, read here 18 µs); nil for any other type or an unexpected length, which
    /// `value(_:as:)` decodes as postgres-nio does, and reports as it does.
    private static func binaryValue(_ bytes: ByteBuffer, of column: PostgresDataType, as type: ValueType) -> Value? {
        let at = bytes.readerIndex
        switch (type, column) {
        case (.int, .int8):
            return bytes.readableBytes == 8 ? bytes.getInteger(at: at, as: Int64.self).map(Value.int) : nil
        case (.double, .float8), (.float, .float8):
            guard bytes.readableBytes == 8, let bits = bytes.getInteger(at: at, as: UInt64.self) else { return nil }
            return .double(Double(bitPattern: bits))
        case (.date, .float8):
            guard bytes.readableBytes == 8, let bits = bytes.getInteger(at: at, as: UInt64.self) else { return nil }
            return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits)))
        case (.string, .text), (.string, .varchar):
            return .string(String(buffer: bytes))
        case (.bool, .bool):
            guard bytes.readableBytes == 1, let byte = bytes.getInteger(at: at, as: UInt8.self), byte <= 1 else { return nil }
            return .bool(byte == 1)
        default:
            return nil
        }
    }
}

/// The longest identifier PostgreSQL keeps (longer ones it cuts, silently).
let maximumIdentifierBytes = 63

/// A generated identifier (an index's name) that fits: `name` itself, or a prefix
/// and a stable hash of the whole (`StableName`), so two long names never become one.
func fittingIdentifier(_ name: String) -> String {
    StableName.fitting(name, in: maximumIdentifierBytes, separator: "_")
}

/// `name` as a quoted SQL identifier. (Every fetch quotes its table and columns:
/// names without a quote, nearly all, skip Foundation's replacing, a tenth of a
/// statement's making.)
func quoted(_ name: String) -> String {
    guard name.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + name + "\"" }
    return "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}
