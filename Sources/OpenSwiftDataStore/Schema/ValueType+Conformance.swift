import Foundation

extension ValueType {
    /// Why a value cannot be stored under a type.
    public struct Mismatch: Error, CustomStringConvertible {
        public var description: String
    }

    /// `value` in the stored form of this type, or why it has none.
    ///
    /// Importers use it so a document never holds what the application would
    /// misread or trap on: a string where a number belongs, `Int8` 300, a NaN date,
    /// a decimal that only starts like one, Codable data that is not JSON. Exact
    /// conversions are made (an integer for a `Double` or `UInt` attribute, when the
    /// value survives it); sets and dictionaries come back sorted, as the model layer
    /// stores them. `nil` at the top is not checked here (whether it is allowed is the
    /// attribute's business); `nil` elements, keys and values of collections pass,
    /// because the types do not record optional elements (`[Int?]` is `[Int]` here).
    /// - Complexity: O(size of `value`)
    public func conforming(_ value: Value) throws(Mismatch) -> Value {
        func fail(_ what: String? = nil) -> Mismatch {
            Mismatch(description: what ?? "\(value.kindName) where \(self) belongs")
        }
        switch (self, value) {
        case (.bool, .bool), (.string, .string), (.data, .data), (.uuid, .uuid), (.url, .url):
            return value
        case let (.int(bits), .int(i)):
            guard bits >= 64 || (i >= -(1 << (bits - 1)) && i < 1 << (bits - 1)) else { throw fail("\(i) does not fit in \(self)") }
            return value
        case let (.int, .uint(u)):
            guard u <= UInt64(Int64.max) else { throw fail("\(u) does not fit in \(self)") }
            return try conforming(.int(Int64(u)))
        case let (.uint(bits), .uint(u)):
            guard bits >= 64 || u < UInt64(1) << UInt64(bits) else { throw fail("\(u) does not fit in \(self)") }
            return value
        case let (.uint, .int(i)):
            guard i >= 0 else { throw fail("\(i) does not fit in \(self)") }
            return try conforming(.uint(UInt64(i)))
        case (.double, .double), (.float, .double):
            return value
        case let (.double, .int(i)), let (.float, .int(i)):
            guard let d = Double(exactly: i) else { throw fail("\(i) is not exactly a \(self)") }
            return .double(d)
        case let (.date, .date(date)):
            guard date.timeIntervalSinceReferenceDate.isFinite else { throw fail("a date must be a finite number of seconds") }
            return value
        case (.decimal, .decimal):
            return value
        case let (.array(element), .array(items)):
            var out: [Value] = []
            out.reserveCapacity(items.count)
            for item in items { out.append(try element.conformingElement(item)) }
            return .array(out)
        case let (.set(element), .array(items)):
            var out: [Value] = []
            out.reserveCapacity(items.count)
            for item in items { out.append(try element.conformingElement(item)) }
            out.sort()
            for (a, b) in zip(out, out.dropFirst()) where a == b { throw fail("a set holds \(a) twice") }
            return .array(out)
        case let (.dictionary(keyType, valueType), .dictionary(pairs)):
            var out: [Value.Pair] = []
            out.reserveCapacity(pairs.count)
            for pair in pairs {
                out.append(Value.Pair(key: try keyType.conformingElement(pair.key), value: try valueType.conformingElement(pair.value)))
            }
            out.sort()
            for (a, b) in zip(out, out.dropFirst()) where a.key == b.key { throw fail("a dictionary has the key \(a.key) twice") }
            return .dictionary(out)
        case let (.codable, .codable(bytes)):
            // JSONSerialization, the parser JSONDecoder reads with: it takes numbers of
            // any size, as a Codable Decimal writes them.
            guard (try? JSONSerialization.jsonObject(with: bytes, options: [.fragmentsAllowed])) != nil else {
                throw fail("Codable values are JSON, and this is not")
            }
            return value
        default:
            throw fail()
        }
    }
}

extension ValueType {
    /// An element of a collection of this type: `nil` passes (see `conforming`).
    fileprivate func conformingElement(_ value: Value) throws(Mismatch) -> Value {
        value.isNull ? value : try conforming(value)
    }
}

extension Value {
    /// What kind of value this is, for error messages ("a string", "an integer").
    public var kindName: String {
        switch self {
        case .null: "nil"
        case .bool: "a boolean"
        case .int: "an integer"
        case .uint: "an unsigned integer"
        case .double: "a floating-point number"
        case .string: "a string"
        case .date: "a date"
        case .data: "data"
        case .uuid: "a UUID"
        case .url: "a URL"
        case .decimal: "a decimal"
        case .array: "an array"
        case .dictionary: "a dictionary"
        case .codable: "a Codable value"
        case .reference: "a reference"
        case .references: "references"
        }
    }
}
