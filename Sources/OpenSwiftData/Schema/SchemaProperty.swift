/// A stored property of an entity: an attribute or a relationship.
public protocol SchemaProperty: Hashable {
    var name: String { get set }
    var originalName: String { get set }
    var isAttribute: Bool { get }
    var isRelationship: Bool { get }
    var isTransient: Bool { get }
    var isOptional: Bool { get }
    var isUnique: Bool { get }
}

extension SchemaProperty {
    public var isAttribute: Bool { self is Schema.Attribute }
    public var isRelationship: Bool { self is Schema.Relationship }
    public var isTransient: Bool { false }
    public var isOptional: Bool { false }
}
