import Foundation

/// Parses `osd` output with Foundation's own JSON reader, so the tests check the
/// output is JSON any program can read, not just what osd's parser accepts.
enum ParsedJSON {
    struct Invalid: Error, CustomStringConvertible {
        var description: String
    }

    static func object(_ text: String) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) as? [String: Any] else {
            throw Invalid(description: "not a JSON object: \(text.prefix(200))")
        }
        return object
    }

    static func array(_ text: String) throws -> [Any] {
        guard let array = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [Any] else {
            throw Invalid(description: "not a JSON array: \(text.prefix(200))")
        }
        return array
    }

    /// One object per non-empty line.
    static func lines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { try object(String($0)) }
    }

    /// The `#id` of each row object.
    static func ids(_ rows: [[String: Any]]) -> [Int] {
        rows.compactMap { ($0["#id"] as? NSNumber)?.intValue }
    }
}
