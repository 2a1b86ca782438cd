/// Reads tokens into a `QueryNode`, with Swift's precedence: `!` binds tightest,
/// then comparisons, then `&&`, then `||`.
///
/// Trees stay shallow whatever the input, so neither this parser nor the compiler
/// and evaluator after it can run out of stack: chains of `&&` or `||` become
/// balanced trees (depth log₂ n), and `(` and `!` nest at most `maximumNesting` deep.
struct QueryParser {
    /// How deep parentheses and `!` may nest.
    static let maximumNesting = 64

    private let tokens: [QueryLexer.Located]
    private let source: String
    private let option: String
    private var position = 0
    private var nesting = 0

    /// A whole filter expression.
    static func filter(_ source: String, option: String = "--where") throws(QuerySyntaxError) -> QueryNode {
        var parser = QueryParser(tokens: try QueryLexer.tokens(source, option: option), source: source, option: option)
        guard parser.current.token != .end else { throw parser.fail("the filter is empty") }
        let node = try parser.disjunction()
        guard parser.current.token == .end else { throw parser.fail("unexpected \(parser.describe(parser.current.token))") }
        return node
    }

    /// A sort key: a path, then optionally `:asc` or `:desc`.
    static func sortKey(_ source: String) throws(QuerySyntaxError) -> (path: QueryNode, descending: Bool) {
        var text = source
        var descending = false
        if let colon = source.lastIndex(of: ":") {
            switch source[source.index(after: colon)...].lowercased() {
            case "desc": descending = true
            case "asc": break
            default:
                throw QuerySyntaxError(
                    option: "--sort", source: source, column: source.distance(from: source.startIndex, to: colon) + 2,
                    message: "the order is asc or desc")
            }
            text = String(source[..<colon])
        }
        var parser = QueryParser(tokens: try QueryLexer.tokens(text, option: "--sort"), source: source, option: "--sort")
        let node = try parser.path()
        guard parser.current.token == .end else { throw parser.fail("a sort key is an attribute name, optionally :asc or :desc") }
        return (node, descending)
    }

    private init(tokens: [QueryLexer.Located], source: String, option: String) {
        self.tokens = tokens
        self.source = source
        self.option = option
    }

    private var current: QueryLexer.Located { tokens[position] }

    private func fail(_ message: String) -> QuerySyntaxError {
        QuerySyntaxError(option: option, source: source, column: current.column, message: message)
    }

    private func describe(_ token: QueryLexer.Token) -> String {
        switch token {
        case let .name(n): "'\(n)'"
        case .rowID: "#id"
        case let .integer(_, text), let .unsignedInteger(_, text), let .number(_, text): text
        case let .string(s): JSONWriter.quoted(s)
        case let .symbol(s): "'\(s)'"
        case .end: "end of the filter"
        }
    }

    private mutating func disjunction() throws(QuerySyntaxError) -> QueryNode {
        var terms = [try conjunction()]
        while current.token == .symbol("||") {
            position += 1
            terms.append(try conjunction())
        }
        return Self.balanced(terms[...], QueryNode.or)
    }

    private mutating func conjunction() throws(QuerySyntaxError) -> QueryNode {
        var terms = [try comparison()]
        while current.token == .symbol("&&") {
            position += 1
            terms.append(try comparison())
        }
        return Self.balanced(terms[...], QueryNode.and)
    }

    /// `terms` joined by an associative connective, as a tree of depth ⌈log₂ n⌉.
    private static func balanced(_ terms: ArraySlice<QueryNode>, _ join: (QueryNode, QueryNode) -> QueryNode) -> QueryNode {
        if terms.count == 1 { return terms[terms.startIndex] }
        let middle = terms.startIndex + terms.count / 2
        return join(balanced(terms[..<middle], join), balanced(terms[middle...], join))
    }

    /// Enters one level of `(` or `!`, or says the filter nests too deep.
    private mutating func enter() throws(QuerySyntaxError) {
        guard nesting < Self.maximumNesting else {
            throw fail("parentheses and '!' nest deeper than \(Self.maximumNesting) levels")
        }
        nesting += 1
    }

    private mutating func comparison() throws(QuerySyntaxError) -> QueryNode {
        let left = try unary()
        let column = current.column
        let op: QueryOperator
        switch current.token {
        case let .symbol(s) where QueryOperator(rawValue: s) != nil: op = QueryOperator(rawValue: s)!
        case let .name(n) where n == "contains" || n == "startsWith": op = QueryOperator(rawValue: n)!
        default: return left
        }
        position += 1
        let right = try unary()
        if case let .symbol(s) = current.token, QueryOperator(rawValue: s) != nil {
            throw fail("comparisons do not chain; join them with && or ||")
        }
        return .comparison(op, left, right, column: column)
    }

    private mutating func unary() throws(QuerySyntaxError) -> QueryNode {
        let located = current
        switch located.token {
        case .symbol("!"):
            try enter()
            defer { nesting -= 1 }
            position += 1
            return .not(try unary(), column: located.column)
        case .symbol("("):
            try enter()
            defer { nesting -= 1 }
            position += 1
            let node = try disjunction()
            guard current.token == .symbol(")") else { throw fail("expected ')'") }
            position += 1
            return node
        case .symbol("-"):
            position += 1
            switch current.token {
            case let .integer(value, text):
                position += 1
                return .literal(.integer(-value, text: "-" + text), column: located.column)
            case let .number(value, text):
                position += 1
                return .literal(.number(-value, text: "-" + text), column: located.column)
            default:
                throw fail("'-' goes only before a number")
            }
        case let .integer(value, text):
            position += 1
            return .literal(.integer(value, text: text), column: located.column)
        case let .unsignedInteger(value, text):
            position += 1
            return .literal(.unsignedInteger(value, text: text), column: located.column)
        case let .number(value, text):
            position += 1
            return .literal(.number(value, text: text), column: located.column)
        case let .string(s):
            position += 1
            return .literal(.string(s), column: located.column)
        case .name("true"), .name("false"):
            position += 1
            return .literal(.bool(located.token == .name("true")), column: located.column)
        case .name("nil"), .name("null"):
            position += 1
            return .literal(.null, column: located.column)
        case .name, .rowID:
            return try path()
        case .end:
            throw fail("expected a value: an attribute, a number, a \"string\", true, false or nil")
        default:
            throw fail("expected a value, found \(describe(located.token))")
        }
    }

    private mutating func path() throws(QuerySyntaxError) -> QueryNode {
        let column = current.column
        var names: [String] = []
        switch current.token {
        case .rowID:
            position += 1
            return .path(["#id"], column: column)
        case let .name(n):
            names.append(n)
            position += 1
        default:
            throw fail("expected an attribute name")
        }
        while current.token == .symbol(".") {
            position += 1
            guard case let .name(n) = current.token else { throw fail("expected an attribute name after '.'") }
            names.append(n)
            position += 1
        }
        return .path(names, column: column)
    }
}
