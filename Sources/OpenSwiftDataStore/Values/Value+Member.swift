import Foundation

extension Value {
    /// The member at `path` of a stored `Codable` value, read from its JSON as a
    /// value of `type`: nil when `value` is nil or a member on the way is missing or
    /// null.
    ///
    /// The JSON is what Foundation's `JSONEncoder` wrote with its default strategies,
    /// so dates are seconds since 2001 and data is Base64. A member of a `.codable`
    /// type keeps its JSON bytes, which are the bytes encoding that member alone would
    /// give (the encoder writes nested values the same way, keys sorted).
    public static func member(at path: [String], of value: Value, as type: ValueType) throws(QueryEvaluationError) -> Value {
        guard case let .codable(data) = value else {
            if value.isNull { return .null }
            throw .typeMismatch("a member of \(value), which is not a stored Codable value")
        }
        let bytes = [UInt8](data)
        do {
            if case .codable = type {
                guard let span = try JSONParser.span(of: path, in: bytes) else { return .null }
                let member = bytes[span]
                return member.elementsEqual("null".utf8) ? .null : .codable(Data(member))
            }
            guard let json = try JSONParser.value(at: path, in: bytes) else { return .null }
            return try Value(json, as: type)
        } catch let failure as QueryEvaluationError {
            throw failure
        } catch {
            throw .typeMismatch("stored JSON cannot be read: \(error)")
        }
    }

    /// Whether `member(at:of:as:)` can read members of `type`.
    public static func canReadMember(as type: ValueType) -> Bool {
        switch type {
        case .bool, .int, .uint, .float, .double, .string, .date, .uuid, .data, .codable: true
        case let .array(element), let .set(element):
            if case .codable = element { false } else { canReadMember(as: element) }
        case .url, .decimal, .dictionary: false
        }
    }

    /// A JSON value as `JSONEncoder` writes a value of `type`.
    private init(_ json: JSON, as type: ValueType) throws(QueryEvaluationError) {
        func mismatch() -> QueryEvaluationError {
            .typeMismatch("stored JSON holds \(json.kindName) where \(type) was expected")
        }
        switch (type, json) {
        case (_, .null): self = .null
        case let (.bool, .bool(b)): self = .bool(b)
        case let (.int, .integer(i)): self = .int(i)
        case let (.uint, .integer(i)) where i >= 0: self = .uint(UInt64(i))
        case let (.uint, .unsignedInteger(u)): self = .uint(u)
        case (.double, _), (.float, _), (.date, _):
            let seconds: Double
            switch json {
            case let .number(d): seconds = d
            case let .integer(i): seconds = Double(i)
            case let .unsignedInteger(u): seconds = Double(u)
            default: throw mismatch()
            }
            switch type {
            case .float: self = .double(Double(Float(seconds)))
            case .date: self = .date(Date(timeIntervalSinceReferenceDate: seconds))
            default: self = .double(seconds)
            }
        case let (.string, .string(s)): self = .string(s)
        case let (.uuid, .string(s)):
            guard let uuid = UUID(uuidString: s) else { throw mismatch() }
            self = .uuid(uuid)
        case let (.data, .string(s)):
            guard let data = Data(base64Encoded: s) else { throw mismatch() }
            self = .data(data)
        case let (.array(element), .array(items)):
            var values: [Value] = []
            values.reserveCapacity(items.count)
            for item in items { values.append(try Value(item, as: element)) }
            self = .array(values)
        case let (.set(element), .array(items)):
            var values: [Value] = []
            values.reserveCapacity(items.count)
            for item in items { values.append(try Value(item, as: element)) }
            // Stored sets are sorted, so equal sets are equal values.
            self = .array(values.sorted())
        default:
            throw mismatch()
        }
    }
}
