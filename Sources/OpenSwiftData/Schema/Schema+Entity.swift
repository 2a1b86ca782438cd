extension Schema {
    /// One model type's description: its attributes, relationships and constraints.
    public final class Entity: Hashable, @unchecked Sendable {
        /// The entity's name: its model type's name.
        public var name: String
        /// The entities of the model type's direct `@Model` subclasses.
        public var subentities: Set<Schema.Entity> = []
        /// The name of the `@Model` superclass's entity, or `nil` for a root class.
        public var superentityName: String?
        /// The `@Model` superclass's entity, or `nil` for a root class.
        public var superentity: Schema.Entity?
        /// The stored value properties, inherited ones included.
        public var attributes: Set<Schema.Attribute>
        /// The properties that refer to other models, inherited ones included.
        public var relationships: Set<Schema.Relationship>
        /// `attributes` keyed by property name.
        public var attributesByName: [String: Schema.Attribute]
        /// `relationships` keyed by property name.
        public var relationshipsByName: [String: Schema.Relationship]
        /// Unique constraints, each a list of attribute names.
        public var uniquenessConstraints: [[String]]
        /// Binary indexes, each a list of attribute names.
        public var indices: [[String]]
        /// All stored properties in declaration order.
        public var properties: [any SchemaProperty]

        /// Creates an empty entity named `name`, with no properties or constraints.
        public init(_ name: String) {
            self.name = name
            attributes = []
            relationships = []
            attributesByName = [:]
            relationshipsByName = [:]
            uniquenessConstraints = []
            indices = []
            properties = []
        }

        /// The entity of `layout`'s model type: of a class of a hierarchy, only the
        /// properties it has (its own and its superclasses').
        convenience init(layout: EntityLayout) {
            self.init(layout.name)
            let hierarchy = layout.hierarchy
            let attributes = layout.attributes.indices.filter { hierarchy?.hasAttribute[$0] ?? true }.map { layout.attributes[$0] }.map { slot in
                let attribute = Attribute(
                    name: slot.name, originalName: slot.originalName, options: slot.options,
                    valueType: unwrappedType(slot.swiftType), defaultValue: nil, hashModifier: slot.hashModifier)
                attribute.isOptional = slot.isOptional
                return attribute
            }
            let relationships = layout.relationships.indices.filter { hierarchy?.hasRelationship[$0] ?? true }.map { layout.relationships[$0] }.map { slot in
                let relationship = Relationship(name: slot.name, destination: slot.destination, deleteRule: slot.deleteRule)
                relationship.originalName = slot.originalName
                relationship.keypath = slot.keyPath
                relationship.isToOneRelationship = !slot.isToMany
                relationship.isOptional = slot.isOptional
                relationship.minimumModelCount = slot.minimumModelCount
                relationship.maximumModelCount = slot.maximumModelCount
                relationship.options = slot.options
                relationship.inverseKeyPath = slot.explicitInverse
                relationship.inverseName = slot.inverse.map { EntityLayout.of(slot.destinationType).relationships[$0].name }
                return relationship
            }
            self.attributes = Set(attributes)
            self.relationships = Set(relationships)
            attributesByName = Dictionary(attributes.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
            relationshipsByName = Dictionary(relationships.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
            uniquenessConstraints = layout.uniqueness.map { $0.map { layout.attributes[$0].name } }
            indices = layout.indices.filter { $0.kind == .binary }.map { $0.slots.map { layout.attributes[$0].name } }
            properties = attributes.map { $0 as any SchemaProperty } + relationships.map { $0 as any SchemaProperty }
        }

        /// Entities are equal when their names, attributes, relationships and unique
        /// constraints are.
        public static func == (lhs: Entity, rhs: Entity) -> Bool {
            lhs.name == rhs.name && lhs.attributes == rhs.attributes && lhs.relationships == rhs.relationships
                && lhs.uniquenessConstraints == rhs.uniquenessConstraints
        }

        /// Hashes the name only.
        public func hash(into hasher: inout Hasher) { hasher.combine(name) }
    }
}
