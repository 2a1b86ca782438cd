import OpenSwiftDataStore

/// Writes `JSON` as text, always the same way for the same value: that is what
/// makes an export → import → export round trip byte-identical.
///
/// Compact form puts a space after `:` and `,` (`{"a": 1, "b": [2, 3]}`); the
/// pretty form breaks a container over lines only when it would not fit in
/// `width` columns.
enum JSONWriter {
    static func compact(_ value: JSON) -> String {
        var text = ""
        write(value, into: &text)
        return text
    }

    /// `value` laid out to fit `width` columns: it starts at `column` (where the
    /// caller's line has got to, `indent` by default) and its continuation lines
    /// are indented by `indent` spaces. Containers nested `flatDepth` levels down
    /// stay on one line whatever their width (a schema's attributes, one per line).
    static func pretty(_ value: JSON, indent: Int, column: Int? = nil, width: Int = 100, flatDepth: Int = .max) -> String {
        let flat = compact(value)
        guard flatDepth > 0, (column ?? indent) + flat.count > width else { return flat }
        let inner = String(repeating: " ", count: indent + 2)
        let close = String(repeating: " ", count: indent)
        switch value {
        case let .array(items) where !items.isEmpty:
            let lines = items.map { inner + pretty($0, indent: indent + 2, width: width, flatDepth: flatDepth - 1) }
            return "[\n" + lines.joined(separator: ",\n") + "\n" + close + "]"
        case let .object(members) where !members.isEmpty:
            let lines = members.map { member in
                let key = quoted(member.key) + ": "
                return inner + key
                    + pretty(member.value, indent: indent + 2, column: indent + 2 + key.count, width: width, flatDepth: flatDepth - 1)
            }
            return "{\n" + lines.joined(separator: ",\n") + "\n" + close + "}"
        default:
            return flat
        }
    }

    static func write(_ value: JSON, into text: inout String) {
        switch value {
        case .null: text += "null"
        case let .bool(b): text += b ? "true" : "false"
        case let .integer(i): text += String(i)
        case let .unsignedInteger(u): text += String(u)
        case let .number(d):
            // Swift prints the shortest text that reads back as the same Double, and
            // always with a fraction or exponent ("1.0", "1e-05"), which is valid JSON.
            text += d.isFinite ? d.description : "null"
        case let .string(s): text += quoted(s)
        case let .array(items):
            text += "["
            for (i, item) in items.enumerated() {
                if i > 0 { text += ", " }
                write(item, into: &text)
            }
            text += "]"
        case let .object(members):
            text += "{"
            for (i, member) in members.enumerated() {
                if i > 0 { text += ", " }
                text += quoted(member.key)
                text += ": "
                write(member.value, into: &text)
            }
            text += "}"
        }
    }

    /// `s` as a JSON string: quotes, backslashes and control characters escaped,
    /// everything else as UTF-8.
    static func quoted(_ s: String) -> String {
        var text = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case "\u{08}": text += "\\b"
            case "\u{0C}": text += "\\f"
            case let c where c.value < 0x20:
                let hex = String(c.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text + "\""
    }
}
