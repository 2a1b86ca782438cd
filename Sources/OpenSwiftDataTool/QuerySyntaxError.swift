/// A mistake in a filter or sort key, shown with the text and a caret under the column.
struct QuerySyntaxError: Error, CustomStringConvertible {
    var option: String
    var source: String
    var column: Int
    var message: String

    var description: String {
        let caret = String(repeating: " ", count: max(0, column - 1)) + "^"
        return "\(option) at column \(column): \(message)\n    \(source)\n    \(caret)"
    }
}
