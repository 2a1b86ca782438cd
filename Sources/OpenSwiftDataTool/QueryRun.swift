import OpenSwiftDataStore

/// Filters, sorts and limits one entity's rows through the engine's query path
/// (`QueryPlanner`, `StoredRowQuery`), the one the API's fetches take.
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
        /// A match's whole row (a test may have read only some columns).
        func whole(_ id: RowID, _ row: Row?) -> (RowID, Row)? {
            guard let row = row ?? table[id] else { return nil }
            return (id, row)
        }

        func output(_ rows: [(RowID, Row)], inSortOrder: Bool = false) -> Output {
            Output(rows: rows, plan: Self.describe(access, of: schema.entities[entity], filtered: predicate != nil, inSortOrder: inSortOrder))
        }
        // Without sort keys, rows come in identifier order and the limit can stop the scan.
        guard !keys.isEmpty else {
            if let limit { return output(try query.firstMatches(limit).compactMap { whole($0.id, $0.row) }) }
            var matches: [(RowID, Row)] = []
            _ = try query.forEachMatch { id, row in if let match = whole(id, row) { matches.append(match) } }
            return output(matches)
        }
        var matches: [(RowID, Row)] = []
        let walk = try query.forEachMatch(indexOrder: true, window: limit) { id, row in
            if let match = whole(id, row) { matches.append(match) }
        }
        if walk.inSortOrder { return output(limit.map { Array(matches.prefix($0)) } ?? matches, inSortOrder: true) }

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
        func less(_ a: (id: RowID, row: Row, key: [Value]), _ b: (id: RowID, row: Row, key: [Value])) -> Bool {
            for (k, sortKey) in keys.enumerated() where a.key[k] != b.key[k] {
                return sortKey.descending ? b.key[k] < a.key[k] : a.key[k] < b.key[k]
            }
            return a.id < b.id
        }
        // With a limit, a top-k heap keeps only the rows it reaches.
        let ordered = limit.map { smallest($0, of: sortable, by: less) } ?? sortable.sorted(by: less)
        return output(ordered.map { ($0.id, $0.row) })
    }

    /// One line on the access path: `scan`, `unique index (name)`, `index (days) range`,
    /// with whether the index answered the filter alone and gave the order.
    static func describe(_ access: QueryAccess, of entity: EntityDescription, filtered: Bool, inSortOrder: Bool) -> String {
        func names(_ slots: [Int]) -> String { slots.map { entity.attributes[$0].name }.joined(separator: ", ") }
        var text: String
        var exact = false
        switch access {
        case .scan:
            text = "scan"
        case let .rows(ids, isExact):
            text = "\(ids.count) #id"
            exact = isExact
        case let .unique(constraint, _, isExact):
            text = "unique index (\(names(entity.uniqueness[constraint])))"
            exact = isExact
        case let .spatial(plan):
            text = "R-tree (\(names(plan.slots))) window"
            exact = plan.exact
        case let .index(plan):
            let lookup = switch plan.lookup {
            case .equality: "equality"
            case .range: "range"
            case let .inList(count): "in-list of \(count)"
            case .ordered: "ordered"
            }
            text = "index (\(names(plan.slots))) \(lookup)"
            exact = plan.exact
        }
        if inSortOrder { text += ", in sort order" }
        if filtered { text += exact ? ", filter answered by the index" : ", filter tested on rows" }
        return "\(entity.name): \(text)"
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
