import OpenSwiftDataStore

/// Rebuilds a store version from the export form (Docs/CLI.md): the same schema,
/// the same row identifiers, the same next identifier per entity.
///
/// Rows go into their tables under their exported identifiers, and the indexes
/// are built in bulk.
enum DocumentImport {
    struct Result {
        var version: StoreVersion
        var rows: Int
    }

    /// The version the export `json` describes; `source` is its text, so errors
    /// about a value can say the line and column where it is written.
    static func version(from json: JSON, source: [UInt8]) throws(ToolFailure) -> Result {
        let top = "the export"
        let known: Set<String> = ["format", "version", "fingerprint", "schema", "nextIDs", "entities"]
        for member in try json.members(in: top) where !known.contains(member.key) {
            throw ToolFailure("\(top): unknown member \"\(member.key)\"")
        }
        guard case .string(DocumentExport.format)? = json["format"] else {
            throw ToolFailure("\(top): \"format\" is not \"\(DocumentExport.format)\"; is this an osd export?")
        }
        let formatVersion = try json.member("version", in: top).integer(in: "\"version\"")
        guard formatVersion == DocumentExport.formatVersion else {
            throw ToolFailure("\(top) has version \(formatVersion); this osd reads version \(DocumentExport.formatVersion)")
        }
        let schema = try SchemaJSON.schema(try json.member("schema", in: top))
        if let fingerprint = json["fingerprint"] {
            let stated = try fingerprint.string(in: "\"fingerprint\"")
            guard stated == schema.fingerprint else {
                throw ToolFailure("\"fingerprint\" is \(stated) but the schema's is \(schema.fingerprint); remove it after editing the schema")
            }
        }
        try DocumentExport.checkExportable(schema)

        let entities = try json.member("entities", in: top).members(in: "\"entities\"")
        for member in entities where schema.entityIndex(named: member.key) == nil {
            throw ToolFailure("\"entities\": \(member.key) is not an entity of the schema")
        }
        var nextIDs: [String: Int64] = [:]
        for member in try (json["nextIDs"] ?? .object([])).members(in: "\"nextIDs\"") {
            guard schema.entityIndex(named: member.key) != nil else {
                throw ToolFailure("\"nextIDs\": \(member.key) is not an entity of the schema")
            }
            nextIDs[member.key] = try member.value.integer(in: "\"nextIDs\", \(member.key)")
        }

        var progress = Progress("reading rows", total: entities.reduce(0) { total, member in
            if case let .array(rows) = member.value { total + rows.count } else { total }
        })
        defer { progress.finish() }
        var tables: [(rows: [(id: Int64, row: Row)], next: Int64)] = []
        var rowCount = 0
        for entity in schema.entities {
            let items = try (json["entities"]?[entity.name] ?? .array([])).array(in: "\"entities\", \(entity.name)")
            var rows: [(id: Int64, row: Row)] = []
            rows.reserveCapacity(items.count)
            for (i, item) in items.enumerated() {
                let locate = { (member: String?) -> String in
                    let path: [JSONParser.PathStep] = ["entities", .member(entity.name), .item(i)] + (member.map { [.member($0)] } ?? [])
                    return JSONParser.location(of: path, in: source).map { "line \($0.line), column \($0.column): " } ?? ""
                }
                rows.append(try row(item, of: entity, position: i + 1, locate: locate))
                progress.advance()
            }
            rows.sort { $0.id < $1.id }
            for (a, b) in zip(rows, rows.dropFirst()) where a.id == b.id {
                throw ToolFailure("\(entity.name) has two rows with #id \(a.id)")
            }
            let last = rows.last?.id ?? 0
            let next = nextIDs[entity.name] ?? last + 1
            guard next > last, next <= DocumentFormat.maximumRowID + 1 else {
                throw ToolFailure("\"nextIDs\": \(entity.name)'s next identifier \(next) must be above its largest #id \(last)")
            }
            tables.append((rows, next))
            rowCount += rows.count
        }

        let version = try build(schema: schema, tables: tables)
        try checkReferences(in: version)
        // Both sides of every relationship must agree, as a context keeps them: a
        // graph whose sides disagree would make delete rules act on the wrong rows.
        let problems = version.relationshipProblems(limit: 5)
        if let first = problems.first {
            throw ToolFailure(problems.count == 1 ? first : "\(first) (and more: \(problems.dropFirst().joined(separator: "; ")))")
        }
        return Result(version: version, rows: rowCount)
    }

    /// One row object: `#id` and a value for each slot; optional attributes and
    /// relationships that are left out are nil (no rows, for to-many). Every value
    /// must fit its attribute's type (`ValueType.conforming`), and only optional
    /// attributes are nil. `locate` gives "line L, column C: " for a member (or,
    /// given nil, the row); it reads the text from its start, so it runs only for
    /// an error, never per value.
    private static func row(
        _ json: JSON, of entity: EntityDescription, position: Int, locate: (String?) -> String
    ) throws(ToolFailure) -> (id: Int64, row: Row) {
        func context() -> String { "\(locate(nil))\(entity.name) row \(position)" }
        guard case let .object(members) = json else {
            throw ToolFailure("\(context()): expected an object, found \(json.kindName)")
        }
        guard case let .integer(id)? = json[DocumentExport.idKey], id > 0, id <= DocumentFormat.maximumRowID else {
            throw ToolFailure("\(context()): \"\(DocumentExport.idKey)\" must be an integer from 1 to \(DocumentFormat.maximumRowID)")
        }
        let rowName = "\(entity.name) #\(id)"
        var row = Row(repeating: .null, count: entity.slotCount)
        var given = [Bool](repeating: false, count: entity.slotCount)
        for member in members where member.key != DocumentExport.idKey {
            func at() -> String { "\(locate(member.key))\(rowName), \(member.key)" }
            guard let slot = entity.slot(named: member.key) else {
                throw ToolFailure("\(locate(member.key))\(rowName): \(entity.name) has no attribute or relationship \(member.key)")
            }
            var value: Value
            do throws(ValueJSON.Failure) {
                value = try ValueJSON.value(member.value)
            } catch {
                throw ToolFailure("\(at()): \(error.description)")
            }
            if slot >= entity.attributes.count {
                let relationship = entity.relationships[slot - entity.attributes.count]
                switch (value, relationship.isToMany) {
                case (.null, _), (.reference, false), (.references, true): break
                default:
                    let expected = relationship.isToMany ? "{\"refs\": [row ids]}" : "{\"ref\": row id} or null"
                    throw ToolFailure("\(at()): expected \(expected)")
                }
            } else {
                let attribute = entity.attributes[slot]
                if value.isNull {
                    guard attribute.isOptional else {
                        throw ToolFailure("\(at()): null, but \(attribute.name) (\(attribute.type)) is not optional")
                    }
                } else {
                    do throws(ValueType.Mismatch) {
                        value = try attribute.type.conforming(value)
                    } catch {
                        throw ToolFailure("\(at()): \(error.description)")
                    }
                }
            }
            row[slot] = value
            given[slot] = true
        }
        for slot in 0..<entity.slotCount where !given[slot] {
            if slot < entity.attributes.count {
                guard entity.attributes[slot].isOptional else {
                    throw ToolFailure("\(locate(nil))\(rowName): no value for \(entity.attributes[slot].name), which is not optional")
                }
            } else if entity.relationships[slot - entity.attributes.count].isToMany {
                row[slot] = .references([])
            }
        }
        return (id, row)
    }

    /// Refuses a reference to a row its destination entity does not have: the
    /// application would fault on a model that does not exist.
    private static func checkReferences(in version: StoreVersion) throws(ToolFailure) {
        let schema = version.schema
        for (e, entity) in schema.entities.enumerated() {
            for (r, relationship) in entity.relationships.enumerated() {
                guard let destination = schema.entityIndex(named: relationship.destination) else {
                    throw ToolFailure("\(entity.name).\(relationship.name): no entity \(relationship.destination)")
                }
                let slot = entity.attributes.count + r
                var dangling: (row: RowID, target: RowID)?
                version.tables[e].forEach(slot: slot) { id, value in
                    guard dangling == nil else { return }
                    switch value {
                    case let .reference(target) where !version.tables[destination].contains(target):
                        dangling = (id, target)
                    case let .references(targets):
                        if let target = targets.first(where: { !version.tables[destination].contains($0) }) { dangling = (id, target) }
                    default: break
                    }
                }
                if let dangling {
                    throw ToolFailure(
                        "\(entity.name) #\(dangling.row.rawValue), \(relationship.name): refers to \(relationship.destination) #\(dangling.target.rawValue), which is not in the export")
                }
            }
        }
    }

    /// The version holding `tables`, each row under its own identifier; a unique
    /// key held by two rows is refused (a store would upsert one onto the other).
    private static func build(
        schema: StoreSchema, tables: [(rows: [(id: Int64, row: Row)], next: Int64)]
    ) throws(ToolFailure) -> StoreVersion {
        var built: [Table] = []
        for (e, table) in tables.enumerated() {
            let entity = schema.entities[e]
            var holders = entity.uniqueness.map { _ in [[Value]: Int64]() }
            var rows = Table(entity: entity)
            for (id, row) in table.rows {
                for (c, slots) in entity.uniqueness.enumerated() {
                    let key = slots.map { row[$0] }
                    if key.contains(where: \.isNull) { continue }
                    if let other = holders[c][key] {
                        throw ToolFailure("\(entity.name) #\(id) has the same unique key as \(entity.name) #\(other)")
                    }
                    holders[c][key] = id
                }
                rows.put(RowID(id), row)
            }
            rows.reserveIdentifiers(below: table.next)
            built.append(rows)
        }
        return StoreVersion(schema: schema, tables: built, generation: 0)
    }
}
