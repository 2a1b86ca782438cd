import OpenSwiftDataStore

/// Filters, sorts and limits one entity's rows.
struct QueryRun {
    let version: StoreVersion
    let entity: Int
    let filter: String?
    let sort: [String]
    let limit: Int?

    func rows() throws -> [(RowID, Row)] {
        let schema = version.schema
        let predicate = try filter.map { source throws(QuerySyntaxError) in
            let compiler = QueryCompiler(schema: schema, entity: entity, source: source, option: "--where")
            return try compiler.predicate(try QueryParser.filter(source))
        }
        let keys = try sort.map { source throws(QuerySyntaxError) in
            let key = try QueryParser.sortKey(source)
            let compiler = QueryCompiler(schema: schema, entity: entity, source: source, option: "--sort")
            guard case let .typed(expression, _) = try compiler.operand(key.path) else {
                throw QuerySyntaxError(option: "--sort", source: source, column: 1, message: "a sort key is an attribute name")
            }
            return (expression: expression, descending: key.descending)
        }

        var evaluator = RowEvaluator(version: version)
        let table = version.tables[entity]
        var matches: [(RowID, Row)] = []
        // Without sort keys, rows come in identifier order and the limit can stop the scan.
        let stopAt = keys.isEmpty ? limit : nil
        for id in table.rowIDs {
            if let stopAt, matches.count >= stopAt { break }
            guard let row = table[id] else { continue }
            if let predicate {
                do {
                    guard try evaluator.test(predicate, row: row, id: id) else { continue }
                } catch {
                    throw ToolFailure("the filter cannot be evaluated on \(schema.entities[entity].name) #\(id.rawValue): \(Self.describe(error))")
                }
            }
            matches.append((id, row))
        }
        guard !keys.isEmpty else { return matches }

        var sortable: [(id: RowID, row: Row, key: [Value])] = []
        sortable.reserveCapacity(matches.count)
        for (id, row) in matches {
            var key: [Value] = []
            for sortKey in keys {
                do {
                    key.append(try evaluator.value(of: sortKey.expression, row: row, id: id))
                } catch {
                    throw ToolFailure("the sort key cannot be evaluated on #\(id.rawValue): \(Self.describe(error))")
                }
            }
            sortable.append((id, row, key))
        }
        sortable.sort { a, b in
            for (k, sortKey) in keys.enumerated() where a.key[k] != b.key[k] {
                return sortKey.descending ? b.key[k] < a.key[k] : a.key[k] < b.key[k]
            }
            return a.id < b.id
        }
        let limited = limit.map { Array(sortable.prefix($0)) } ?? sortable
        return limited.map { ($0.id, $0.row) }
    }

    static func describe(_ error: any Error) -> String {
        guard let error = error as? QueryEvaluationError else { return failureMessage(error) }
        switch error {
        case .unwrappedNil: return "a value is nil"
        case .arithmeticOverflow: return "arithmetic overflow"
        case .indexOutOfRange: return "index out of range"
        case .invalidRange: return "invalid range"
        case let .typeMismatch(what): return "values of the wrong kinds: \(what)"
        }
    }
}
