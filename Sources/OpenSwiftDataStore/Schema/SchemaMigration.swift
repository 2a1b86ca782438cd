/// What an application's schema says beyond the schema itself about its past:
/// the names its attributes and relationships had (`@Attribute(originalName:)`,
/// `@Relationship(originalName:)`) and the value existing rows get for an
/// attribute that is new. Entities are in the application schema's order.
public struct MigrationHints: Sendable {
    public struct Entity: Sendable {
        /// Per attribute: its earlier name, nil when it had no other.
        public var attributeOriginalNames: [String?]
        /// Per relationship: its earlier name, nil when it had no other.
        public var relationshipOriginalNames: [String?]
        /// Per attribute: the value rows that lack it get (the property's initial value).
        public var defaults: [Value?]

        public init(attributeOriginalNames: [String?], relationshipOriginalNames: [String?], defaults: [Value?]) {
            self.attributeOriginalNames = attributeOriginalNames
            self.relationshipOriginalNames = relationshipOriginalNames
            self.defaults = defaults
        }
    }

    public var entities: [Entity]

    public init(entities: [Entity]) {
        self.entities = entities
    }
}

/// Lightweight migration: a store version of a document's schema, rewritten in
/// the application's schema.
///
/// Entities, attributes and relationships are matched by name, or by the earlier
/// name a hint gives. A matched attribute keeps its values: its type must be the
/// same, and an attribute that became non-optional needs a value (or a default)
/// in every row. A new attribute gets its default, or nil when optional; a new
/// relationship starts empty; what the application no longer declares is dropped.
/// Row identifiers are kept, so relationships stay valid. Indexes and unique
/// constraints are built anew; existing rows that violate a unique constraint
/// fail the migration.
public enum SchemaMigration {
    /// Why a document's data cannot take the application's schema.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// `version` in `schema`.
    /// - Complexity: O(rows × slots), plus building every index.
    public static func migrate(_ version: StoreVersion, to schema: StoreSchema, hints: MigrationHints) throws(Failure) -> StoreVersion {
        let old = version.schema
        var tables: [Table] = []
        /// Per document entity: its entity and slots in `schema` (history follows them).
        var moves: [Int: (entity: Int, slots: [Int: Int])] = [:]
        for (a, entity) in schema.entities.enumerated() {
            let hint = hints.entities.indices.contains(a) ? hints.entities[a] : nil
            guard let d = old.entityIndex(named: entity.name) else {
                tables.append(Table(entity: entity))
                continue
            }
            let source = old.entities[d]
            // For each slot of the new row: where its value comes from.
            var sources: [Int?] = []
            for (i, attribute) in entity.attributes.enumerated() {
                let earlier = hint?.attributeOriginalNames[i] ?? attribute.name
                let s = source.attributes.firstIndex { $0.name == earlier } ?? source.attributes.firstIndex { $0.name == attribute.name }
                if let s {
                    guard source.attributes[s].type == attribute.type else {
                        throw Failure(description: "\(entity.name).\(attribute.name) was \(source.attributes[s].type), is \(attribute.type): a custom migration stage must convert it")
                    }
                } else if !attribute.isOptional, hint?.defaults[i] == nil {
                    throw Failure(description: "\(entity.name).\(attribute.name) is new and not optional: give it an initial value")
                }
                sources.append(s)
            }
            for (j, relationship) in entity.relationships.enumerated() {
                let earlier = hint?.relationshipOriginalNames[j] ?? relationship.name
                let match = source.relationships.firstIndex { $0.name == earlier } ?? source.relationships.firstIndex { $0.name == relationship.name }
                if let r = match {
                    let was = source.relationships[r]
                    guard was.destination == relationship.destination, was.isToMany == relationship.isToMany else {
                        throw Failure(description: "\(entity.name).\(relationship.name) changed its destination or cardinality: a custom migration stage must convert it")
                    }
                    sources.append(source.attributes.count + r)
                } else {
                    sources.append(nil)
                }
            }
            var slotMoves: [Int: Int] = [:]
            for (slot, s) in sources.enumerated() { if let s { slotMoves[s] = slot } }
            moves[d] = (a, slotMoves)
            let empty: Row = entity.attributes.enumerated().map { i, _ in hint?.defaults[i] ?? .null }
                + entity.relationships.map { $0.isToMany ? .references([]) : .null }
            var table = Table(entity: entity)
            var failure: Failure?
            version.tables[d].forEach { id, row in
                guard failure == nil else { return }
                var migrated = empty
                for (slot, s) in sources.enumerated() {
                    guard let s else { continue }
                    migrated[slot] = row[s]
                    if slot < entity.attributes.count, row[s].isNull, !entity.attributes[slot].isOptional {
                        guard let value = hint?.defaults[slot] else {
                            failure = Failure(description: "\(entity.name).\(entity.attributes[slot].name) is no longer optional, and row \(id.rawValue) has no value for it")
                            return
                        }
                        migrated[slot] = value
                    }
                }
                table.put(id, migrated)
            }
            if let failure { throw failure }
            table.reserveIdentifiers(below: version.tables[d].nextRawID)
            tables.append(table)
        }
        for (e, entity) in schema.entities.enumerated() {
            for constraint in entity.uniqueness {
                var seen = Set<[Value]>()
                var duplicate: [Value]?
                tables[e].forEach { _, row in
                    let key = constraint.map { row[$0] }
                    if duplicate == nil, !key.contains(where: \.isNull), !seen.insert(key).inserted { duplicate = key }
                }
                if let duplicate {
                    let names = constraint.map { entity.attributes[$0].name }.joined(separator: ", ")
                    throw Failure(description: "existing \(entity.name) rows share the value \(duplicate) of (\(names)), which is now unique")
                }
            }
        }
        var migrated = StoreVersion(schema: schema, tables: tables, generation: version.generation)
        migrated.history = version.history.mapChanges { change in
            moves[change.entity].flatMap { change.moved(to: $0.entity, slots: $0.slots) }
        }
        return migrated
    }
}

extension StoreSchema {
    /// Whether `other` describes the same entities, perhaps listed in another order
    /// or with `Codable` types named differently: the drift a document opens with.
    public func hasSameShape(as other: StoreSchema) -> Bool {
        self == other || SchemaDifference.placement(of: self, in: other) != nil
    }
}
