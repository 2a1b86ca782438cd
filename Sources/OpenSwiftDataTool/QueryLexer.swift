/// Splits a filter into tokens.
struct QueryLexer {
    enum Token: Equatable {
        case name(String)
        case rowID
        case integer(Int64, String)
        case unsignedInteger(UInt64, String)
        case number(Double, String)
        case string(String)
        case symbol(String)
        case end
    }

    struct Located {
        var token: Token
        var column: Int
    }

    static func tokens(_ source: String, option: String) throws(QuerySyntaxError) -> [Located] {
        let characters = Array(source)
        var result: [Located] = []
        var i = 0
        func fail(_ message: String, at column: Int) -> QuerySyntaxError {
            QuerySyntaxError(option: option, source: source, column: column, message: message)
        }
        while i < characters.count {
            let c = characters[i]
            let column = i + 1
            if c.isWhitespace {
                i += 1
            } else if c.isLetter || c == "_" {
                var name = ""
                while i < characters.count, characters[i].isLetter || characters[i].isNumber || characters[i] == "_" {
                    name.append(characters[i])
                    i += 1
                }
                result.append(Located(token: .name(name), column: column))
            } else if c == "#" {
                let word = String(characters[i..<min(i + 3, characters.count)])
                guard word == "#id", i + 3 == characters.count || !(characters[i + 3].isLetter || characters[i + 3].isNumber) else {
                    throw fail("'#' starts only #id, the row identifier", at: column)
                }
                i += 3
                result.append(Located(token: .rowID, column: column))
            } else if c.isASCII && c.isNumber {
                var text = ""
                var isInteger = true
                while i < characters.count, characters[i].isASCII, characters[i].isNumber || characters[i] == "." || characters[i] == "e"
                    || characters[i] == "E" || ((characters[i] == "+" || characters[i] == "-") && (text.last == "e" || text.last == "E")) {
                    if !characters[i].isNumber { isInteger = false }
                    text.append(characters[i])
                    i += 1
                }
                if isInteger, let value = Int64(text) {
                    result.append(Located(token: .integer(value, text), column: column))
                } else if isInteger, let value = UInt64(text) {
                    result.append(Located(token: .unsignedInteger(value, text), column: column))
                } else if !isInteger, let value = Double(text), value.isFinite {
                    result.append(Located(token: .number(value, text), column: column))
                } else {
                    throw fail("\(text) is not a number this filter can hold", at: column)
                }
            } else if c == "\"" || c == "'" {
                var text = ""
                i += 1
                while true {
                    guard i < characters.count else { throw fail("the string is not closed", at: column) }
                    let d = characters[i]
                    i += 1
                    if d == c { break }
                    if d == "\\" {
                        guard i < characters.count else { throw fail("the string is not closed", at: column) }
                        let e = characters[i]
                        i += 1
                        switch e {
                        case "n": text.append("\n")
                        case "t": text.append("\t")
                        case "\\", "\"", "'": text.append(e)
                        default: throw fail("unknown escape \\\(e) (use \\\\, \\\", \\', \\n or \\t)", at: i - 1)
                        }
                    } else {
                        text.append(d)
                    }
                }
                result.append(Located(token: .string(text), column: column))
            } else {
                let two = i + 1 < characters.count ? String(characters[i...(i + 1)]) : ""
                if ["==", "!=", "<=", ">=", "&&", "||"].contains(two) {
                    result.append(Located(token: .symbol(two), column: column))
                    i += 2
                } else if "<>!().-".contains(c) {
                    result.append(Located(token: .symbol(String(c)), column: column))
                    i += 1
                } else if c == "=" {
                    // `=>` and `=<` are `>=` and `<=` typed the other way round.
                    if i + 1 < characters.count, characters[i + 1] == ">" || characters[i + 1] == "<" {
                        throw fail("use \(characters[i + 1])= to compare", at: column)
                    }
                    throw fail("use == to compare", at: column)
                } else if c == "&" || c == "|" {
                    throw fail("use \(c)\(c)", at: column)
                } else {
                    throw fail("unexpected character '\(c)'", at: column)
                }
            }
        }
        result.append(Located(token: .end, column: characters.count + 1))
        return result
    }
}
