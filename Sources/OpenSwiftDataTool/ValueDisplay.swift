import Foundation
import OpenSwiftDataStore

/// How `query` shows a value in a table cell: readable rather than lossless (the
/// JSON output is the lossless one).
enum ValueDisplay {
    /// Cells longer than this are cut, so one long text does not stretch a table.
    static let cellLimit = 40

    static func cell(_ value: Value) -> String {
        let full = text(value, nested: false)
        return full.count > cellLimit ? String(full.prefix(cellLimit - 1)) + "…" : full
    }

    static func text(_ value: Value, nested: Bool) -> String {
        switch value {
        case .null: return "nil"
        case let .bool(b): return b ? "true" : "false"
        case let .int(i): return String(i)
        case let .uint(u): return String(u)
        case let .double(d): return d.description
        case let .string(s):
            let escaped = s.replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\t", with: "\\t")
            return nested ? "\"\(escaped)\"" : escaped
        case let .date(date): return dateText(date)
        case let .data(data): return "<\(plural(data.count, "byte"))>"
        case let .uuid(uuid): return uuid.uuidString
        case let .url(url): return url.absoluteString
        case let .decimal(decimal): return decimal.description
        case let .array(items): return "[" + items.map { text($0, nested: true) }.joined(separator: ", ") + "]"
        case let .dictionary(pairs):
            guard !pairs.isEmpty else { return "[:]" }
            return "[" + pairs.map { text($0.key, nested: true) + ": " + text($0.value, nested: true) }.joined(separator: ", ") + "]"
        case let .codable(bytes): return String(decoding: bytes, as: UTF8.self)
        case let .reference(id): return "#\(id.rawValue)"
        case let .references(ids): return "[" + ids.map { "#\($0.rawValue)" }.joined(separator: ", ") + "]"
        }
    }

    /// ISO 8601 in UTC, with milliseconds when there are any; dates beyond what a
    /// calendar shows sensibly appear as seconds since 2001.
    static func dateText(_ date: Date) -> String {
        let seconds = date.timeIntervalSinceReferenceDate
        guard seconds.isFinite, abs(seconds) < 3e11 else { return "\(seconds)s since 2001" }
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: seconds.rounded(.down) != seconds)
        return style.format(date)
    }
}
