/// A stored property of an entity: an attribute or a relationship.
public protocol SchemaProperty: Hashable {
    /// The property's name in the model type.
    var name: String { get set }
    /// The name the property had in an earlier schema version, for migration; the current
    /// name if it was not renamed.
    var originalName: String { get set }
    /// Whether the property holds a value.
    var isAttribute: Bool { get }
    /// Whether the property refers to other models.
    var isRelationship: Bool { get }
    /// Whether the property is not stored.
    var isTransient: Bool { get }
    /// Whether the property's type is optional.
    var isOptional: Bool { get }
    /// Whether the property carries the `.unique` option.
    var isUnique: Bool { get }
}

extension SchemaProperty {
    /// True for a `Schema.Attribute`.
    public var isAttribute: Bool { self is Schema.Attribute }
    /// True for a `Schema.Relationship`.
    public var isRelationship: Bool { self is Schema.Relationship }
    /// Always false: `@Transient` properties are not part of a schema.
    public var isTransient: Bool { false }
    /// False unless the conforming type says otherwise (attributes and relationships do).
    public var isOptional: Bool { false }
}
