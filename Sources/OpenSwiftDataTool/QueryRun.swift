import OpenSwiftDataStore

/// Filters, sorts and limits one entity's rows through the engine's query path
/// (`QueryPlanner`, `StoredRowQuery`, `RowOrder`, `QueryReport`),
/// the one the API's fetches take.
struct QueryRun {
    let version: StoreVersion
    let entity: Int
    let filter: String?
    let sort: [String]
    let limit: Int?

    /// The matching rows, and how the engine found them (for `--explain`).
    struct Output {
        var rows: [(RowID, Row)]
        var plan: String
    }

    func rows() throws -> [(RowID, Row)] { try run().rows }

    func run() throws -> Output {
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

        // The engine's planner and execution path, as the API's fetches use them:
        // unique keys and ordered indexes narrow the rows, and an index whose order is
        // the sort's gives it (then a limit stops the walk).
        let table = version.tables[entity]
        let name = schema.entities[entity].name
        var sortSlots: [SortKey]? = []
        for key in keys {
            guard case let .attribute(.root, _, slot) = key.expression else {
                sortSlots = nil
                break
            }
            sortSlots?.append(SortKey(slot: slot, reverse: key.descending))
        }
        let planner = QueryPlanner(
            entity: schema.entities[entity], indexes: version.orderedIndexes[entity].map(\.slots),
            sortKeys: keys.isEmpty ? nil : sortSlots, limited: (limit ?? 0) > 0)
        let access = planner.plan(predicate).bind([], kinds: table.kinds)
        let query = StoredRowQuery(
            version: version, entity: entity, access: access,
            filter: predicate.map { .predicate(BoundPredicate(template: $0, parameters: []), overlay: nil) } ?? .all,
            excluded: nil,
            rowFailure: { id, error in ToolFailure("the filter cannot be evaluated on \(name) #\(id.rawValue): \(Self.describe(error))") })
        // (`--limit 0` asks for no rows, where a fetch limit of 0 is none.)
        let reach = limit.map { max($0, 0) }
        // Without sort keys, rows come in identifier order and the limit can stop the scan.
        let walk = keys.isEmpty && reach != nil
            ? (rows: try query.firstMatches(reach!), inSortOrder: false)
            : try query.matches(indexOrder: !keys.isEmpty, window: reach)
        var matches = walk.rows.compactMap { id, row in (row ?? table[id]).map { (id, $0) } }
        if !keys.isEmpty && !walk.inSortOrder {
            var evaluator = RowEvaluator(version: version)
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
            matches = RowOrder.sorted(sortable, descending: keys.map(\.descending), reach: reach) { $0.key[$1] }
                .map { ($0.id, $0.row) }
        }
        let report = QueryReport(
            query.chosenAccess(indexOrder: !keys.isEmpty, window: reach), of: schema.entities[entity], filtered: predicate != nil, inSortOrder: walk.inSortOrder)
        return Output(rows: Array(matches.prefix(reach ?? matches.count)), plan: report.description)
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
