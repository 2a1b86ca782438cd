// The public SwiftData macros, spelled as in Apple's module interface; their implementations
// live in the OpenSwiftDataMacros compiler plugin. The `names:` lists name everything the
// expansions add, which the compiler requires.

import Observation

/// Makes a class a persistent model: its stored properties are kept in the model's backing
/// data, it conforms to `PersistentModel` and `Observable`, and it gets `init(backingData:)`.
@attached(member, conformances: PersistentModel, names: prefixed(_$backingData_), named(persistentBackingData), named(schemaMetadata), named(init), named(_$observation), named(_$RootModel), prefixed(_$keyPaths_), named(_$keyPathsRootedHere), named(_SwiftDataNoType), named(access), named(withMutation))
@attached(memberAttribute)
@attached(extension, conformances: Observable, PersistentModel)
public macro Model() = #externalMacro(module: "OpenSwiftDataMacros", type: "ModelMacro")

/// Implementation detail of `@Model`: reroutes one stored property through the backing data.
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(_), prefixed(_$keyPath_))
public macro _PersistedProperty() = #externalMacro(module: "OpenSwiftDataMacros", type: "PersistedPropertyMacro")

/// Customizes how a model property is persisted (uniqueness, external storage, renames, …).
@attached(peer)
public macro Attribute(_ options: Schema.Attribute.Option..., originalName: String? = nil, hashModifier: String? = nil) = #externalMacro(module: "OpenSwiftDataMacros", type: "AttributeMacro")

/// Customizes a relationship between models (delete rule, inverse, cardinality, …).
@attached(peer)
public macro Relationship(_ options: Schema.Relationship.Option..., deleteRule: Schema.Relationship.DeleteRule = .nullify, minimumModelCount: Int? = 0, maximumModelCount: Int? = 0, originalName: String? = nil, inverse: AnyKeyPath? = nil, hashModifier: String? = nil) = #externalMacro(module: "OpenSwiftDataMacros", type: "RelationshipMacro")

/// Keeps a model property out of the store; it is reset to its default value on every fetch.
@attached(peer)
public macro Transient() = #externalMacro(module: "OpenSwiftDataMacros", type: "TransientMacro")

/// Declares the key-path combinations whose values must be unique across a model's instances.
@freestanding(declaration, names: named(_$uniquenessConstraints))
public macro Unique<T>(_ constraints: [PartialKeyPath<T>]...) = #externalMacro(module: "OpenSwiftDataMacros", type: "UniqueMacro") where T: PersistentModel

/// Declares indices (binary or R-tree) over a model's properties.
@freestanding(declaration, names: named(_$indices))
public macro Index<T>(_ indices: Schema.Index<T>.Types<T>...) = #externalMacro(module: "OpenSwiftDataMacros", type: "IndexMacro") where T: PersistentModel

/// Declares binary indices over a model's key paths, one per list.
@freestanding(declaration, names: named(_$indices))
public macro Index<T>(_ indices: [PartialKeyPath<T>]...) = #externalMacro(module: "OpenSwiftDataMacros", type: "IndexMacro") where T: PersistentModel

/// Gives an actor its own model context and a serial executor built on it.
@attached(member, names: named(modelExecutor), named(modelContainer), named(init))
@attached(extension, conformances: ModelActor)
public macro ModelActor() = #externalMacro(module: "OpenSwiftDataMacros", type: "ModelActorMacro")
