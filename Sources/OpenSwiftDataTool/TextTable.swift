/// Plain-text columns, padded to the widest cell, for `info` and `query`.
enum TextTable {
    /// The rows as lines, cells separated by two spaces, trailing spaces trimmed.
    static func lines(_ rows: [[String]]) -> [String] {
        let columns = rows.map(\.count).max() ?? 0
        var widths = [Int](repeating: 0, count: columns)
        for row in rows {
            for (c, cell) in row.enumerated() { widths[c] = max(widths[c], cell.count) }
        }
        return rows.map { row in
            var line = ""
            for (c, cell) in row.enumerated() {
                line += cell
                if c < row.count - 1 { line += String(repeating: " ", count: widths[c] - cell.count + 2) }
            }
            while line.last == " " { line.removeLast() }
            return line
        }
    }
}
