import Foundation
import OpenSwiftDataStore

/// The entities a container stores, built from model types.
///
/// Model types reachable through relationships are included automatically, as the
/// docs describe for `AnimalCategory` → `Animal`.
public final class Schema: Hashable, @unchecked Sendable {
    public let version: Schema.Version
    public let entities: [Schema.Entity]
    public let entitiesByName: [String: Schema.Entity]
    /// Per entity, in `entities` order, the layout of its model type.
    let layouts: [EntityLayout]

    public init() {
        version = Version(1, 0, 0)
        entities = []
        entitiesByName = [:]
        layouts = []
    }

    public init(_ types: [any PersistentModel.Type], version: Schema.Version = Version(1, 0, 0)) {
        self.version = version
        var layouts: [EntityLayout] = []
        var seen: Set<ObjectIdentifier> = []
        var queue = types
        while !queue.isEmpty {
            let type = queue.removeFirst()
            guard seen.insert(ObjectIdentifier(type)).inserted else { continue }
            let layout = EntityLayout.of(type)
            layouts.append(layout)
            queue.append(contentsOf: layout.relationships.map(\.destinationType))
        }
        self.layouts = layouts
        self.entities = layouts.map(Entity.init(layout:))
        self.entitiesByName = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for entity in entities {
            for relationship in entity.relationships {
                relationship.inverseKeyPath = relationship.inverseKeyPath
                    ?? entitiesByName[relationship.destination]?.relationshipsByName[relationship.inverseName ?? ""]?.keypath
            }
        }
    }

    public convenience init(_ types: any PersistentModel.Type..., version: Schema.Version = Version(1, 0, 0)) {
        self.init(types, version: version)
    }

    public convenience init(versionedSchema: any VersionedSchema.Type) {
        self.init(versionedSchema.models, version: versionedSchema.versionIdentifier)
    }

    public static func == (lhs: Schema, rhs: Schema) -> Bool {
        lhs.version == rhs.version && lhs.entities == rhs.entities
    }

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
