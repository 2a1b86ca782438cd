/// The engine's runtime description of one entity: what a row holds, slot by slot.
///
/// A row stores the attributes first (slot `i` is `attributes[i]`), then the
/// relationships (slot `attributes.count + j` is `relationships[j]`).
public struct EntityDescription: Hashable, Sendable {
    /// The attribute naming each row's class, in the entity of a model class hierarchy.
    public static let discriminatorName = "_$entity"

    public var name: String
    public var attributes: [AttributeDescription]
    public var relationships: [RelationshipDescription]
    /// Unique constraints, each a list of attribute slots that together must be unique.
    public var uniqueness: [[Int]]
    /// Declared indexes, each a list of attribute slots.
    public var indices: [IndexDescription]

    public init(
        name: String,
        attributes: [AttributeDescription],
        relationships: [RelationshipDescription],
        uniqueness: [[Int]] = [],
        indices: [IndexDescription] = []
    ) {
        self.name = name
        self.attributes = attributes
        self.relationships = relationships
        self.uniqueness = uniqueness
        self.indices = indices
    }

    /// The attribute slots of each ordered (B-tree) index: every binary `#Index`,
    /// then every unique constraint not already covered, without duplicates.
    public var orderedIndexSlots: [[Int]] {
        var result: [[Int]] = []
        for slots in indices.filter({ $0.kind == .binary }).map(\.slots) + uniqueness where !result.contains(slots) {
            result.append(slots)
        }
        return result
    }

    /// The attribute slots of each R-tree index, in declaration order.
    public var spatialIndexSlots: [[Int]] {
        indices.filter { $0.kind == .rtree }.map(\.slots)
    }

    /// Number of values in a row of this entity.
    public var slotCount: Int { attributes.count + relationships.count }

    /// The slot of the relationship at `index`.
    public func slot(ofRelationship index: Int) -> Int { attributes.count + index }

    /// The name of the attribute or relationship at `slot`.
    public func name(ofSlot slot: Int) -> String {
        slot < attributes.count ? attributes[slot].name : relationships[slot - attributes.count].name
    }

    /// The slot named `name`, attribute or relationship.
    public func slot(named name: String) -> Int? {
        if let i = attributes.firstIndex(where: { $0.name == name }) { return i }
        if let j = relationships.firstIndex(where: { $0.name == name }) { return attributes.count + j }
        return nil
    }
}

public struct AttributeDescription: Hashable, Sendable {
    public var name: String
    public var type: ValueType
    public var isOptional: Bool
    public var isUnique: Bool
    public var isExternalStorage: Bool

    public init(name: String, type: ValueType, isOptional: Bool, isUnique: Bool = false, isExternalStorage: Bool = false) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.isUnique = isUnique
        self.isExternalStorage = isExternalStorage
    }
}

public struct RelationshipDescription: Hashable, Sendable {
    public enum DeleteRule: String, Hashable, Sendable {
        case noAction, nullify, cascade, deny
    }

    public var name: String
    public var destination: String
    public var isToMany: Bool
    public var inverse: String?
    public var deleteRule: DeleteRule

    public init(name: String, destination: String, isToMany: Bool, inverse: String?, deleteRule: DeleteRule) {
        self.name = name
        self.destination = destination
        self.isToMany = isToMany
        self.inverse = inverse
        self.deleteRule = deleteRule
    }
}

public struct IndexDescription: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable { case binary, rtree }
    public var kind: Kind
    public var slots: [Int]

    public init(kind: Kind, slots: [Int]) {
        self.kind = kind
        self.slots = slots
    }
}

/// The runtime schema of a whole store.
public struct StoreSchema: Hashable, Sendable {
    public var entities: [EntityDescription]
    private var positions: [String: Int]

    public init(entities: [EntityDescription]) {
        self.entities = entities
        self.positions = Dictionary(uniqueKeysWithValues: entities.enumerated().map { ($1.name, $0) })
    }

    /// The position of the entity named `name` in `entities`.
    public func entityIndex(named name: String) -> Int? { positions[name] }
}
