import Foundation
import OpenSwiftDataStore

/// The entities a container stores, built from model types.
///
/// Model types reachable through relationships are included automatically, as the
/// docs describe for `AnimalCategory` → `Animal`.
public final class Schema: Hashable, @unchecked Sendable {
    /// The schema's version: `1.0.0` unless given, or the versioned schema's identifier.
    public let version: Schema.Version
    /// One entity per model type, subclasses included: the given types first, then those
    /// found through relationships and superclasses.
    public let entities: [Schema.Entity]
    /// The entities keyed by name (a model type's name).
    public let entitiesByName: [String: Schema.Entity]
    /// The layout of each engine entity, in the engine's order: one per model type,
    /// except that a class hierarchy is one engine entity, its root's.
    let layouts: [EntityLayout]
    /// The layout of every model type, subclasses included, by type.
    let memberLayouts: [ObjectIdentifier: EntityLayout]
    /// Every model type, in the order they were found.
    let modelTypes: [any PersistentModel.Type]

    /// Creates an empty schema, version `1.0.0`.
    public init() {
        version = Version(1, 0, 0)
        entities = []
        entitiesByName = [:]
        layouts = []
        memberLayouts = [:]
        modelTypes = []
    }

    /// Creates the schema of `types` and every model type they reach through
    /// relationships or inherit from.
    public init(_ types: [any PersistentModel.Type], version: Schema.Version = Version(1, 0, 0)) {
        self.version = version
        // Model types reachable through relationships, and the `@Model` superclasses of
        // subclasses (a superclass cannot list its subclasses, so the schema must).
        var found: [any PersistentModel.Type] = []
        var seen: Set<ObjectIdentifier> = []
        var queue = types
        while !queue.isEmpty {
            let type = queue.removeFirst()
            guard seen.insert(ObjectIdentifier(type)).inserted else { continue }
            found.append(type)
            queue.append(contentsOf: EntityLayout.of(type).relationships.map(\.destinationType))
            if let superclass = EntityLayout.modelSuperclass(of: type) { queue.append(superclass) }
        }
        let roots = found.map { EntityLayout.root(of: $0) }
        var members: [ObjectIdentifier: EntityLayout] = [:]
        var layouts: [EntityLayout] = []
        for (type, (top, depth)) in zip(found, roots) where depth == 0 {
            // Superclasses before subclasses; a stable order, so the engine's slots are.
            let family = zip(found, roots).filter { ObjectIdentifier($1.root) == ObjectIdentifier(top) }
                .sorted { ($0.1.depth, EntityLayout.entityName(of: $0.0)) < ($1.1.depth, EntityLayout.entityName(of: $1.0)) }
                .map(\.0)
            let familyLayouts = family.count == 1 ? [EntityLayout.of(type)] : EntityLayout.hierarchy(family)
            for layout in familyLayouts { members[ObjectIdentifier(layout.modelType)] = layout }
            layouts.append(familyLayouts[0])
        }
        self.layouts = layouts
        self.memberLayouts = members
        self.modelTypes = found
        let entities = found.map { Entity(layout: members[ObjectIdentifier($0)]!) }
        let byName = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for (type, entity) in zip(found, entities) {
            guard let superclass = EntityLayout.modelSuperclass(of: type) else { continue }
            entity.superentityName = EntityLayout.entityName(of: superclass)
            entity.superentity = byName[EntityLayout.entityName(of: superclass)]
            entity.superentity?.subentities.insert(entity)
        }
        self.entities = entities
        self.entitiesByName = byName
        for entity in entities {
            for relationship in entity.relationships {
                relationship.inverseKeyPath = relationship.inverseKeyPath
                    ?? entitiesByName[relationship.destination]?.relationshipsByName[relationship.inverseName ?? ""]?.keypath
            }
        }
    }

    /// Creates the schema of `types` and every model type they reach; see
    /// `init(_:version:)`.
    public convenience init(_ types: any PersistentModel.Type..., version: Schema.Version = Version(1, 0, 0)) {
        self.init(types, version: version)
    }

    /// Creates the schema of a versioned schema's models, with its version identifier.
    public convenience init(versionedSchema: any VersionedSchema.Type) {
        self.init(versionedSchema.models, version: versionedSchema.versionIdentifier)
    }

    /// Schemas are equal when their versions and entities are.
    public static func == (lhs: Schema, rhs: Schema) -> Bool {
        lhs.version == rhs.version && lhs.entities == rhs.entities
    }

    /// Hashes the version and the entity names.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(version)
        hasher.combine(entities.map(\.name))
    }

    /// The entity of model type `type`, if the schema has it.
    public func entity<T: PersistentModel>(for type: T.Type) -> Schema.Entity? {
        entitiesByName[Self.entityName(for: type)]
    }

    /// The name SwiftData gives the entity of `type`: the type's own name.
    public static func entityName<T: PersistentModel>(for type: T.Type) -> String {
        EntityLayout.entityName(of: type)
    }

    /// The engine's description of this schema.
    var storeSchema: StoreSchema {
        StoreSchema(entities: layouts.map(\.entityDescription))
    }

    /// What lightweight migration needs beyond `storeSchema`: earlier names
    /// (`originalName:`) and the values new attributes take in existing rows (the
    /// properties' initial values).
    var migrationHints: MigrationHints {
        func earlier(_ original: String, _ name: String) -> String? { original.isEmpty || original == name ? nil : original }
        return MigrationHints(entities: layouts.map { layout in
            MigrationHints.Entity(
                attributeOriginalNames: layout.attributes.map { earlier($0.originalName, $0.name) },
                relationshipOriginalNames: layout.relationships.map { earlier($0.originalName, $0.name) },
                defaults: layout.attributes.map(\.defaultValue))
        })
    }
}
