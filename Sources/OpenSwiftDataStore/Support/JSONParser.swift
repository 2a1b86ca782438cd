/// Reads JSON text (RFC 8259) into `JSON`, keeping integers exact and members in
/// order. Strict, because an import must not guess: duplicate keys, trailing
/// commas, numbers out of range and invalid UTF-8 are errors with a line and column.
public struct JSONParser {
    public struct Failure: Error, CustomStringConvertible {
        public var line: Int
        public var column: Int
        public var reason: String
        public var description: String { "line \(line), column \(column): \(reason)" }
    }

    /// Containers nest at most this deep, so hostile input cannot exhaust the stack.
    public static let maximumDepth = 512

    private let bytes: [UInt8]
    private var position = 0

    /// Parses a whole text: one value, surrounded by nothing but whitespace.
    public static func parse(_ bytes: [UInt8]) throws(Failure) -> JSON {
        var parser = JSONParser(bytes: bytes)
        if parser.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.position = 3 }
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.position == bytes.count else { throw parser.fail("unexpected text after the JSON value") }
        return value
    }

    /// One step into a JSON value: an object's member or an array's item (from 0).
    public enum PathStep: Sendable, ExpressibleByStringLiteral {
        case member(String)
        case item(Int)
        public init(stringLiteral name: String) { self = .member(name) }
    }

    /// The value at `path` (member names, outermost first) in the JSON text `bytes`,
    /// or nil when a member on the way is missing or a value on the way is not an
    /// object. Members it passes over are skipped, not kept.
    public static func value(at path: [String], in bytes: [UInt8]) throws(Failure) -> JSON? {
        var parser = JSONParser(bytes: bytes)
        guard try parser.enter(path.map(PathStep.member)) else { return nil }
        return try parser.value(depth: path.count)
    }

    /// Where in `bytes` the value at `path` is written, as `value(at:in:)` finds it.
    public static func span(of path: [String], in bytes: [UInt8]) throws(Failure) -> Range<Int>? {
        var parser = JSONParser(bytes: bytes)
        guard try parser.enter(path.map(PathStep.member)) else { return nil }
        let start = parser.position
        try parser.skipValue(depth: path.count)
        return start..<parser.position
    }

    /// The line and column (from 1) where the value at `path` starts, for errors
    /// about a value that parsed but does not fit; nil when there is none.
    /// - Complexity: O(bytes before the value)
    public static func location(of path: [PathStep], in bytes: [UInt8]) -> (line: Int, column: Int)? {
        var parser = JSONParser(bytes: bytes)
        guard (try? parser.enter(path)) == true else { return nil }
        let at = parser.fail("", at: parser.position)
        return (at.line, at.column)
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    private func fail(_ reason: String, at offset: Int? = nil) -> Failure {
        let end = min(offset ?? position, bytes.count)
        var line = 1, column = 1
        for byte in bytes[..<end] {
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return Failure(line: line, column: column, reason: reason)
    }

    private var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    private mutating func skipWhitespace() {
        while let c = current, c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { position += 1 }
    }

    private mutating func expect(_ literal: String, _ value: JSON) throws(Failure) -> JSON {
        let utf8 = Array(literal.utf8)
        guard bytes.count - position >= utf8.count, Array(bytes[position..<(position + utf8.count)]) == utf8 else {
            throw fail("unexpected character")
        }
        position += utf8.count
        return value
    }

    private mutating func value(depth: Int) throws(Failure) -> JSON {
        guard let c = current else { throw fail("unexpected end of the text") }
        switch c {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "n"): return try expect("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw fail("unexpected character")
        }
    }

    private mutating func object(depth: Int) throws(Failure) -> JSON {
        guard depth < Self.maximumDepth else { throw fail("nested deeper than \(Self.maximumDepth) levels") }
        position += 1
        var members: [(key: String, value: JSON)] = []
        var keys = Set<String>()
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            position += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            let keyStart = position
            let key = try memberName()
            guard keys.insert(key).inserted else { throw fail("duplicate member \"\(key)\"", at: keyStart) }
            members.append((key, try value(depth: depth + 1)))
            guard try another(before: UInt8(ascii: "}")) else { return .object(members) }
        }
    }

    /// Reads a member name and the colon after it.
    private mutating func memberName() throws(Failure) -> String {
        skipWhitespace()
        guard current == UInt8(ascii: "\"") else { throw fail("expected a member name in quotes") }
        let key = try string()
        skipWhitespace()
        guard current == UInt8(ascii: ":") else { throw fail("expected ':' after the member name") }
        position += 1
        skipWhitespace()
        return key
    }

    /// After a member or item: true past a comma, false past the container's `close`.
    private mutating func another(before close: UInt8) throws(Failure) -> Bool {
        skipWhitespace()
        switch current {
        case UInt8(ascii: ","):
            position += 1
            return true
        case close:
            position += 1
            return false
        default:
            throw fail("expected ',' or '\(Character(Unicode.Scalar(close)))'")
        }
    }

    /// Moves to the value of each step of `path` in turn; false when one is missing
    /// or a value on the way is not an object (for a member) or array (for an item).
    private mutating func enter(_ path: [PathStep]) throws(Failure) -> Bool {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
        skipWhitespace()
        for (depth, step) in path.enumerated() {
            guard depth < Self.maximumDepth else { throw fail("nested deeper than \(Self.maximumDepth) levels") }
            switch step {
            case let .member(name):
                guard current == UInt8(ascii: "{") else { return false }
                position += 1
                skipWhitespace()
                if current == UInt8(ascii: "}") { return false }
                while try memberName() != name {
                    try skipValue(depth: depth + 1)
                    guard try another(before: UInt8(ascii: "}")) else { return false }
                }
            case let .item(index):
                guard current == UInt8(ascii: "[") else { return false }
                position += 1
                skipWhitespace()
                if current == UInt8(ascii: "]") { return false }
                for _ in 0..<index {
                    try skipValue(depth: depth + 1)
                    guard try another(before: UInt8(ascii: "]")) else { return false }
                    skipWhitespace()
                }
            }
        }
        return true
    }

    /// Reads past one value without keeping it.
    private mutating func skipValue(depth: Int) throws(Failure) {
        guard let c = current else { throw fail("unexpected end of the text") }
        let close: UInt8
        switch c {
        case UInt8(ascii: "{"): close = UInt8(ascii: "}")
        case UInt8(ascii: "["): close = UInt8(ascii: "]")
        default:
            _ = try value(depth: depth)
            return
        }
        guard depth < Self.maximumDepth else { throw fail("nested deeper than \(Self.maximumDepth) levels") }
        position += 1
        skipWhitespace()
        if current == close {
            position += 1
            return
        }
        repeat {
            if close == UInt8(ascii: "}") { _ = try memberName() }
            skipWhitespace()
            try skipValue(depth: depth + 1)
        } while try another(before: close)
    }

    private mutating func array(depth: Int) throws(Failure) -> JSON {
        guard depth < Self.maximumDepth else { throw fail("nested deeper than \(Self.maximumDepth) levels") }
        position += 1
        var items: [JSON] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            position += 1
            return .array(items)
        }
        repeat {
            skipWhitespace()
            items.append(try value(depth: depth + 1))
        } while try another(before: UInt8(ascii: "]"))
        return .array(items)
    }

    private mutating func number() throws(Failure) -> JSON {
        let start = position
        var isInteger = true
        func digits(_ parser: inout JSONParser) -> Int {
            var n = 0
            while let c = parser.current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) {
                parser.position += 1
                n += 1
            }
            return n
        }
        if current == UInt8(ascii: "-") { position += 1 }
        let leadingZero = current == UInt8(ascii: "0")
        let whole = digits(&self)
        guard whole > 0 else { throw fail("expected a digit") }
        if leadingZero && whole > 1 { throw fail("numbers do not start with 0", at: start) }
        if current == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard digits(&self) > 0 else { throw fail("expected a digit after '.'") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            isInteger = false
            position += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
            guard digits(&self) > 0 else { throw fail("expected a digit in the exponent") }
        }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        if isInteger {
            if let i = Int64(text) { return .integer(i) }
            if let u = UInt64(text) { return .unsignedInteger(u) }
            throw fail("integer \(text) does not fit in 64 bits", at: start)
        }
        guard let d = Double(text), d.isFinite else { throw fail("number \(text) is out of range", at: start) }
        return .number(d)
    }

    private mutating func string() throws(Failure) -> String {
        let start = position
        position += 1
        var utf8: [UInt8] = []
        while true {
            guard let c = current else { throw fail("unterminated string", at: start) }
            position += 1
            switch c {
            case UInt8(ascii: "\""):
                guard let s = String(validating: utf8, as: UTF8.self) else { throw fail("string is not valid UTF-8", at: start) }
                return s
            case UInt8(ascii: "\\"):
                guard let e = current else { throw fail("unterminated string", at: start) }
                position += 1
                switch e {
                case UInt8(ascii: "\""): utf8.append(0x22)
                case UInt8(ascii: "\\"): utf8.append(0x5C)
                case UInt8(ascii: "/"): utf8.append(0x2F)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard current == UInt8(ascii: "\\"), position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "u") else {
                            throw fail("unpaired surrogate in \\u escape")
                        }
                        position += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw fail("unpaired surrogate in \\u escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw fail("unpaired surrogate in \\u escape")
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw fail("invalid \\u escape") }
                    UTF8.encode(unicode) { utf8.append($0) }
                default:
                    throw fail("invalid escape \\\(Character(Unicode.Scalar(e)))")
                }
            case 0..<0x20:
                throw fail("control character in a string (escape it)")
            default:
                utf8.append(c)
            }
        }
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard bytes.count - position >= 4 else { throw fail("expected four hex digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[position]
            let digit: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c - UInt8(ascii: "A") + 10
            default: throw fail("expected four hex digits")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }
}
