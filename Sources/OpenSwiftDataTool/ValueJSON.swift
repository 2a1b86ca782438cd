import Foundation
import OpenSwiftDataStore

/// The JSON form of stored values (Docs/CLI.md, "Values"): lossless both ways.
///
/// What plain JSON says unambiguously stays plain: null, booleans, strings,
/// 64-bit signed integers (digits only), finite doubles (always with a fraction or
/// exponent), arrays. Every other kind is an object with exactly one member whose
/// name is the kind: `{"uint": 7}`, `{"date": 1000.5}`, `{"data": "AAE="}`,
/// `{"uuid": "…"}`, `{"url": "…"}`, `{"decimal": "1.25"}`, `{"dict": [[k, v]]}`,
/// `{"codable": "{…}"}`, `{"ref": 3}`, `{"refs": [1, 2]}`, and non-finite doubles
/// `{"double": "nan" | "inf" | "-inf"}`.
enum ValueJSON {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Values nest at most as deep as a document can hold them.
    static let maximumDepth = 64

    static func json(_ value: Value) -> JSON {
        switch value {
        case .null: .null
        case let .bool(b): .bool(b)
        case let .int(i): .integer(i)
        case let .uint(u): tagged("uint", u <= UInt64(Int64.max) ? .integer(Int64(u)) : .unsignedInteger(u))
        case let .double(d): d.isFinite ? .number(d) : tagged("double", .string(nonFinite(d)))
        case let .string(s): .string(s)
        case let .date(date):
            // Seconds since 2001-01-01T00:00:00Z, the form documents store: exact.
            tagged("date", seconds(date.timeIntervalSinceReferenceDate))
        case let .data(data): tagged("data", .string(data.base64EncodedString()))
        case let .uuid(uuid): tagged("uuid", .string(uuid.uuidString))
        case let .url(url): tagged("url", .string(url.absoluteString))
        case let .decimal(decimal): tagged("decimal", .string(decimal.description))
        case let .array(items): .array(items.map(json))
        case let .dictionary(pairs): tagged("dict", .array(pairs.map { .array([json($0.key), json($0.value)]) }))
        case let .codable(bytes):
            if let text = String(validating: bytes, as: UTF8.self) {
                tagged("codable", .string(text))
            } else {
                tagged("codableData", .string(bytes.base64EncodedString()))
            }
        case let .reference(id): tagged("ref", .integer(id.rawValue))
        case let .references(ids): tagged("refs", .array(ids.map { .integer($0.rawValue) }))
        }
    }

    static func value(_ json: JSON, depth: Int = 0) throws(Failure) -> Value {
        guard depth < maximumDepth else { throw Failure(description: "values nested deeper than \(maximumDepth) levels") }
        switch json {
        case .null: return .null
        case let .bool(b): return .bool(b)
        case let .integer(i): return .int(i)
        case .unsignedInteger: throw Failure(description: "an integer above \(Int64.max) must be written {\"uint\": …}")
        case let .number(d): return .double(d)
        case let .string(s): return .string(s)
        case let .array(items):
            var values: [Value] = []
            values.reserveCapacity(items.count)
            for item in items { values.append(try value(item, depth: depth + 1)) }
            return .array(values)
        case let .object(members):
            guard members.count == 1 else {
                throw Failure(description: "a tagged value is an object with exactly one member, found \(members.count)")
            }
            return try tagged(members[0].key, members[0].value, depth: depth)
        }
    }

    private static func tagged(_ tag: String, _ content: JSON) -> JSON { .object([(tag, content)]) }

    private static func nonFinite(_ d: Double) -> String { d.isNaN ? "nan" : d > 0 ? "inf" : "-inf" }

    private static func seconds(_ d: Double) -> JSON { d.isFinite ? .number(d) : .string(nonFinite(d)) }

    private static func tagged(_ tag: String, _ content: JSON, depth: Int) throws(Failure) -> Value {
        func fail(_ expected: String) -> Failure {
            Failure(description: "{\"\(tag)\": …} holds \(content.kindName), expected \(expected)")
        }
        func text() throws(Failure) -> String {
            guard case let .string(s) = content else { throw fail("a string") }
            return s
        }
        func double() throws(Failure) -> Double {
            switch content {
            case let .number(d): return d
            case let .integer(i): return Double(i)
            case let .string(s):
                switch s {
                case "nan": return .nan
                case "inf": return .infinity
                case "-inf": return -.infinity
                default: throw fail("a number, \"nan\", \"inf\" or \"-inf\"")
                }
            default: throw fail("a number")
            }
        }
        func rowID(_ json: JSON) throws(Failure) -> RowID {
            guard case let .integer(i) = json, i > 0, i <= DocumentFormat.maximumRowID else {
                throw fail("row identifiers from 1 to \(DocumentFormat.maximumRowID)")
            }
            return RowID(i)
        }
        switch tag {
        case "uint":
            switch content {
            case let .integer(i) where i >= 0: return .uint(UInt64(i))
            case let .unsignedInteger(u): return .uint(u)
            default: throw fail("a non-negative integer")
            }
        case "double": return .double(try double())
        case "date": return .date(Date(timeIntervalSinceReferenceDate: try double()))
        case "data", "codableData":
            guard let data = Data(base64Encoded: try text()) else { throw Failure(description: "{\"\(tag)\": …} is not valid base64") }
            return tag == "data" ? .data(data) : .codable(data)
        case "uuid":
            guard let uuid = UUID(uuidString: try text()) else { throw Failure(description: "\(content) is not a UUID") }
            return .uuid(uuid)
        case "url":
            let s = try text()
            guard let url = URL(string: s) else { throw Failure(description: "\"\(s)\" is not a URL") }
            return .url(url)
        case "decimal":
            let s = try text()
            // Decimal(string:) reads "12abc" as 12: the whole text must be a number.
            guard isDecimalText(s) || s == "NaN",
                  let decimal = Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")) else {
                throw Failure(description: "\"\(s)\" is not a decimal number (digits, an optional '.' and exponent)")
            }
            return .decimal(decimal)
        case "dict":
            guard case let .array(entries) = content else { throw fail("an array of [key, value] pairs") }
            var pairs: [Value.Pair] = []
            pairs.reserveCapacity(entries.count)
            for entry in entries {
                guard case let .array(pair) = entry, pair.count == 2 else { throw fail("an array of [key, value] pairs") }
                pairs.append(Value.Pair(key: try value(pair[0], depth: depth + 1), value: try value(pair[1], depth: depth + 1)))
            }
            return .dictionary(pairs)
        case "codable": return .codable(Data(try text().utf8))
        case "ref": return .reference(try rowID(content))
        case "refs":
            guard case let .array(items) = content else { throw fail("an array of row identifiers") }
            var ids: [RowID] = []
            ids.reserveCapacity(items.count)
            for item in items { ids.append(try rowID(item)) }
            return .references(ids)
        default:
            throw Failure(description: "unknown value tag \"\(tag)\"")
        }
    }

    /// Whether `s` is a whole decimal number: `-?digits(.digits)?([eE][+-]?digits)?`.
    static func isDecimalText(_ s: String) -> Bool {
        var bytes = s.utf8[...]
        func digits() -> Int {
            let n = bytes.prefix(while: { (48...57).contains($0) }).count
            bytes = bytes.dropFirst(n)
            return n
        }
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        guard digits() > 0 else { return false }
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            guard digits() > 0 else { return false }
        }
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return bytes.isEmpty
    }
}
