import OpenSwiftDataStore

/// The JSON form of a document's schema (Docs/CLI.md, "Schema"), complete enough
/// that an import rebuilds the same schema, fingerprint included.
///
/// Types are names (`"String"`, `"Int32"`) or one-member objects for composites
/// (`{"array": "String"}`, `{"dictionary": ["String", "Double"]}`,
/// `{"codable": "Address"}`), so a codable type named like a built-in one cannot
/// be mistaken for it. Constraints and indexes name their slots.
enum SchemaJSON {
    static func json(_ schema: StoreSchema) -> JSON {
        .array(schema.entities.map(json))
    }

    static func json(_ entity: EntityDescription) -> JSON {
        func slotJSON(_ slot: Int) -> JSON {
            let name = entity.name(ofSlot: slot)
            // A name that another slot shares first would read back as that slot.
            return entity.slot(named: name) == slot ? .string(name) : .integer(Int64(slot))
        }
        return .object([
            ("name", .string(entity.name)),
            ("attributes", .array(entity.attributes.map { attribute in
                .object([
                    ("name", .string(attribute.name)),
                    ("type", typeJSON(attribute.type)),
                    ("optional", .bool(attribute.isOptional)),
                    ("unique", .bool(attribute.isUnique)),
                    ("externalStorage", .bool(attribute.isExternalStorage)),
                ])
            })),
            ("relationships", .array(entity.relationships.map { relationship in
                .object([
                    ("name", .string(relationship.name)),
                    ("destination", .string(relationship.destination)),
                    ("toMany", .bool(relationship.isToMany)),
                    ("inverse", relationship.inverse.map(JSON.string) ?? .null),
                    ("deleteRule", .string(relationship.deleteRule.rawValue)),
                ])
            })),
            ("uniqueness", .array(entity.uniqueness.map { .array($0.map(slotJSON)) })),
            ("indices", .array(entity.indices.map { index in
                .object([("kind", .string(index.kind.rawValue)), ("slots", .array(index.slots.map(slotJSON)))])
            })),
        ])
    }


    static func typeJSON(_ type: ValueType) -> JSON {
        switch type {
        case let .array(element): .object([("array", typeJSON(element))])
        case let .set(element): .object([("set", typeJSON(element))])
        case let .dictionary(key, value): .object([("dictionary", .array([typeJSON(key), typeJSON(value)]))])
        case let .codable(name): .object([("codable", .string(name))])
        default: .string(type.description)
        }
    }

    // MARK: Reading

    /// Collections in a schema are stored with 16-bit counts.
    private static let countLimit = 1 << 16

    static func schema(_ json: JSON) throws(ToolFailure) -> StoreSchema {
        let items = try json.array(in: "\"schema\"")
        guard items.count <= countLimit else { throw ToolFailure("\"schema\": more than \(countLimit) entities") }
        var entities: [EntityDescription] = []
        for (e, item) in items.enumerated() {
            entities.append(try entity(item, context: "\"schema\" entity \(e + 1)"))
        }
        var names = Set<String>()
        for entity in entities where !names.insert(entity.name).inserted {
            throw ToolFailure("\"schema\": two entities are named \(entity.name)")
        }
        for entity in entities {
            for relationship in entity.relationships where !names.contains(relationship.destination) {
                throw ToolFailure("\"schema\": \(entity.name).\(relationship.name) leads to \(relationship.destination), which is not an entity")
            }
        }
        return StoreSchema(entities: entities)
    }

    private static func entity(_ json: JSON, context: String) throws(ToolFailure) -> EntityDescription {
        let name = try json.member("name", in: context).string(in: "\(context), \"name\"")
        let context = "\"schema\" entity \(name)"
        var attributes: [AttributeDescription] = []
        for (i, item) in try json.member("attributes", in: context).array(in: "\(context), \"attributes\"").enumerated() {
            let where_ = "\(context), attribute \(i + 1)"
            attributes.append(AttributeDescription(
                name: try item.member("name", in: where_).string(in: where_),
                type: try type(try item.member("type", in: where_), context: where_),
                isOptional: try item.flag("optional", in: where_),
                isUnique: try item.flag("unique", in: where_),
                isExternalStorage: try item.flag("externalStorage", in: where_)))
        }
        var relationships: [RelationshipDescription] = []
        for (i, item) in try (json["relationships"] ?? .array([])).array(in: "\(context), \"relationships\"").enumerated() {
            let where_ = "\(context), relationship \(i + 1)"
            let ruleName = try item.member("deleteRule", in: where_).string(in: where_)
            guard let rule = RelationshipDescription.DeleteRule(rawValue: ruleName) else {
                throw ToolFailure("\(where_): unknown delete rule \"\(ruleName)\" (noAction, nullify, cascade or deny)")
            }
            let inverse = item["inverse"] ?? .null
            relationships.append(RelationshipDescription(
                name: try item.member("name", in: where_).string(in: where_),
                destination: try item.member("destination", in: where_).string(in: where_),
                isToMany: try item.flag("toMany", in: where_),
                inverse: inverse.isNull ? nil : try inverse.string(in: "\(where_), \"inverse\""),
                deleteRule: rule))
        }
        guard attributes.count <= countLimit, relationships.count <= countLimit else {
            throw ToolFailure("\(context): more than \(countLimit) attributes or relationships")
        }
        var entity = EntityDescription(name: name, attributes: attributes, relationships: relationships)
        for (i, item) in try (json["uniqueness"] ?? .array([])).array(in: "\(context), \"uniqueness\"").enumerated() {
            let where_ = "\(context), unique constraint \(i + 1)"
            entity.uniqueness.append(try slots(item, of: entity, context: where_))
        }
        for (i, item) in try (json["indices"] ?? .array([])).array(in: "\(context), \"indices\"").enumerated() {
            let where_ = "\(context), index \(i + 1)"
            let kindName = try item.member("kind", in: where_).string(in: where_)
            guard let kind = IndexDescription.Kind(rawValue: kindName) else {
                throw ToolFailure("\(where_): unknown index kind \"\(kindName)\" (binary or rtree)")
            }
            entity.indices.append(IndexDescription(kind: kind, slots: try slots(try item.member("slots", in: where_), of: entity, context: where_)))
        }
        return entity
    }

    private static func slots(_ json: JSON, of entity: EntityDescription, context: String) throws(ToolFailure) -> [Int] {
        var result: [Int] = []
        for item in try json.array(in: context) {
            switch item {
            case let .string(name):
                guard let slot = entity.slot(named: name) else { throw ToolFailure("\(context): \(entity.name) has no \(name)") }
                result.append(slot)
            case let .integer(slot) where slot >= 0 && slot < Int64(entity.slotCount):
                result.append(Int(slot))
            default:
                throw ToolFailure("\(context): expected attribute names, found \(item.kindName)")
            }
        }
        return result
    }

    static func type(_ json: JSON, context: String, depth: Int = 0) throws(ToolFailure) -> ValueType {
        // Documents nest types at most as deep as values.
        guard depth < ValueJSON.maximumDepth else { throw ToolFailure("\(context): type nested too deeply") }
        switch json {
        case let .string(name):
            if let simple = simpleTypes[name] { return simple }
            for (prefix, make) in [("UInt", ValueType.uint(bits:)), ("Int", ValueType.int(bits:))] where name.hasPrefix(prefix) {
                if let bits = Int(name.dropFirst(prefix.count)), (1...255).contains(bits) { return make(bits) }
            }
            throw ToolFailure("\(context): unknown type \"\(name)\"")
        case let .object(members) where members.count == 1:
            let (tag, content) = (members[0].key, members[0].value)
            switch tag {
            case "array": return .array(try type(content, context: context, depth: depth + 1))
            case "set": return .set(try type(content, context: context, depth: depth + 1))
            case "dictionary":
                let pair = try content.array(in: "\(context), dictionary type")
                guard pair.count == 2 else { throw ToolFailure("\(context): a dictionary type is [key type, value type]") }
                return .dictionary(
                    key: try type(pair[0], context: context, depth: depth + 1),
                    value: try type(pair[1], context: context, depth: depth + 1))
            case "codable": return .codable(try content.string(in: "\(context), codable type"))
            default: throw ToolFailure("\(context): unknown type {\"\(tag)\": …}")
            }
        default:
            throw ToolFailure("\(context): expected a type name or a one-member type object, found \(json.kindName)")
        }
    }

    private static let simpleTypes: [String: ValueType] = [
        "Bool": .bool, "Int": .int(bits: 64), "UInt": .uint(bits: 64), "Float": .float, "Double": .double,
        "String": .string, "Date": .date, "Data": .data, "UUID": .uuid, "URL": .url, "Decimal": .decimal,
    ]
}
