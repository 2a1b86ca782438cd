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

    static func version(from json: JSON) throws(ToolFailure) -> Result {
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
                rows.append(try row(item, of: entity, position: i + 1))
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

        return Result(version: try build(schema: schema, tables: tables), rows: rowCount)
    }

    /// One row object: `#id` and a value for each slot; optional attributes and
    /// relationships that are left out are nil (no rows, for to-many).
    private static func row(_ json: JSON, of entity: EntityDescription, position: Int) throws(ToolFailure) -> (id: Int64, row: Row) {
        let context = "\(entity.name) row \(position)"
        let members = try json.members(in: context)
        guard case let .integer(id)? = json[DocumentExport.idKey], id > 0, id <= DocumentFormat.maximumRowID else {
            throw ToolFailure("\(context): \"\(DocumentExport.idKey)\" must be an integer from 1 to \(DocumentFormat.maximumRowID)")
        }
        let rowName = "\(entity.name) #\(id)"
        var row = Row(repeating: .null, count: entity.slotCount)
        var given = [Bool](repeating: false, count: entity.slotCount)
        for member in members where member.key != DocumentExport.idKey {
            guard let slot = entity.slot(named: member.key) else {
                throw ToolFailure("\(rowName): \(entity.name) has no attribute or relationship \(member.key)")
            }
            let value: Value
            do throws(ValueJSON.Failure) {
                value = try ValueJSON.value(member.value)
            } catch {
                throw ToolFailure("\(rowName), \(member.key): \(error.description)")
            }
            if slot >= entity.attributes.count {
                let relationship = entity.relationships[slot - entity.attributes.count]
                switch (value, relationship.isToMany) {
                case (.null, _), (.reference, false), (.references, true): break
                default:
                    let expected = relationship.isToMany ? "{\"refs\": [row ids]}" : "{\"ref\": row id} or null"
                    throw ToolFailure("\(rowName), \(member.key): expected \(expected)")
                }
            }
            row[slot] = value
            given[slot] = true
        }
        for slot in 0..<entity.slotCount where !given[slot] {
            if slot < entity.attributes.count {
                guard entity.attributes[slot].isOptional else {
                    throw ToolFailure("\(rowName): no value for \(entity.attributes[slot].name), which is not optional")
                }
            } else if entity.relationships[slot - entity.attributes.count].isToMany {
                row[slot] = .references([])
            }
        }
        return (id, row)
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
