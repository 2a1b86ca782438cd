import Foundation
import Observation

/// A class whose instances SwiftData stores; `@Model` writes the conformance.
public protocol PersistentModel: AnyObject, Observable, Hashable, Identifiable, SendableMetatype {
    /// The context-local row behind the model's stored properties.
    var persistentBackingData: any BackingData<Self> { get set }
    /// The stored properties, in declaration order, as `@Model` found them.
    static var schemaMetadata: [Schema.PropertyMetadata] { get }
    /// Makes a model over existing backing data (used when a context materializes a row).
    init(backingData: any BackingData<Self>)
    /// Compound unique constraints declared with `#Unique`.
    ///
    /// Type-erased (no `Self`), so non-final model classes can conform.
    static var _$uniquenessConstraints: [[AnyKeyPath]] { get }
    /// Indexes declared with `#Index`: each element a `Schema.Index<Self>.Types<Self>`,
    /// erased for the same reason.
    static var _$indices: [Any] { get }
    /// Model inheritance: every persisted property's key path rooted at this class, in
    /// `schemaMetadata`'s order (a subclass's `\Sub.name` for an inherited `name`);
    /// empty for a final class, whose key paths are rooted at it already.
    static var _$keyPathsRootedHere: [AnyKeyPath] { get }
}

extension PersistentModel {
    /// No compound unique constraints unless `#Unique` declares some.
    public static var _$uniquenessConstraints: [[AnyKeyPath]] { [] }
    /// No indexes unless `#Index` declares some.
    public static var _$indices: [Any] { [] }
    /// Empty: a final class's key paths are rooted at it already; `@Model` writes
    /// the list for classes that can be subclassed.
    public static var _$keyPathsRootedHere: [AnyKeyPath] { [] }

    /// Fresh backing data for a model created by its own initializer.
    /// (Through the class's layout and its maker: `ModelBackingData<Self>()` here, in
    /// code that runs unspecialized, looked up the generic class's metadata and its
    /// `BackingData` conformance for every new model.)
    public static func createBackingData() -> any BackingData<Self> {
        let layout = EntityLayout.of(Self.self)
        return unsafeBitCast(layout.maker.freshBacking(layout: layout), to: (any BackingData<Self>).self)
    }

    /// The backing data as our class. A dynamic cast to it cost about 2,000
    /// instructions per property access through the `any ModelBacking` existential: so
    /// one class check against our non-generic base. Anything else is a programming
    /// error and traps with a clear message.
    @inline(__always)
    var ourBacking: OurBackingData {
        let object: AnyObject = persistentBackingData
        guard object is OurBackingData else {
            preconditionFailure(
                "\(Self.self) is backed by \(Swift.type(of: object)); only the backing data OpenSwiftData makes is supported")
        }
        return unsafeDowncast(object, to: OurBackingData.self)
    }

    // With model inheritance, a superclass's accessors (`Self` a superclass of the
    // model's class) find a backing data of another class and take its inherited
    // access; the exact class is one comparison of the model type the base records
    // (a check of the generic class would look its metadata up each time).

    /// The model's backing data, type-erased for the context.
    var modelBacking: any ModelBacking {
        let our = ourBacking
        if our.modelType == ObjectIdentifier(Self.self) { return unsafeDowncast(our, to: ModelBackingData<Self>.self) }
        return our.erased
    }

    /// The context the model is registered with, if any.
    public var modelContext: ModelContext? { modelBacking.context }

    /// The backing data, readable through `any PersistentModel` (snapshots take it).
    var anyBackingData: any BackingData { persistentBackingData }

    /// The model's identifier: temporary until the first save, permanent afterwards.
    public var persistentModelID: PersistentIdentifier {
        let our = ourBacking
        if our.modelType == ObjectIdentifier(Self.self) { return unsafeDowncast(our, to: ModelBackingData<Self>.self).identifier }
        return our.erased.identifier
    }

    /// The model's `persistentModelID`, which changes when a new model is first saved.
    public var id: PersistentIdentifier { persistentModelID }

    /// Whether the model has changes its context has not saved.
    public var hasChanges: Bool {
        let b = modelBacking
        guard let context = b.context else { return false }
        return context.hasPendingChanges(b.identifier)
    }

    /// Whether the model has been deleted from its context (pending or saved).
    public var isDeleted: Bool { modelBacking.isDeleted }

    /// Models are equal only when they are the same object.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs === rhs }

    /// Hashes the object's identity, matching `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// Reads a stored property; `@Model`'s accessors call this.
    public func getValue<Value>(forKey key: KeyPath<Self, Value>) -> Value {
        // A virtual call on our base class: naming `ModelBackingData<Self>` here, in
        // code that runs unspecialized, looked its metadata up on every read (about 300
        // instructions), and model inheritance needs this path anyway.
        ourBacking.inheritedValue(forKey: key)
    }

    /// Writes a stored property, keeping inverse relationships in step and
    /// telling the context about the change; `@Model`'s accessors call this.
    public func setValue<Value>(forKey key: KeyPath<Self, Value>, to newValue: Value) {
        ourBacking.setInheritedValue(newValue, forKey: key, owner: self)
    }
}

// MARK: Model inheritance (called by `@Model` subclasses' generated code)

/// A subclass's own backing data, holding what the superclasses' initializers wrote
/// into `inherited` as well, typed as the root class's (whose storage keeps it).
/// `own` is `ModelBackingData<Sub>`: its values are read through `OurBackingData`,
/// never through this existential's `BackingData<Root>` witnesses.
public func _$adoptBackingData<Sub: PersistentModel, Root: PersistentModel>(
    _ own: any BackingData<Sub>, from inherited: any BackingData<Root>
) -> any BackingData<Root> {
    let target: AnyObject = own, source: AnyObject = inherited
    guard let target = target as? OurBackingData, let source = source as? OurBackingData else {
        preconditionFailure("\(Sub.self) is backed by data OpenSwiftData did not make")
    }
    target.adoptValues(of: source)
    // (`as` keeps the existential closed: opened, it would be the 8-byte class reference.)
    return unsafeBitCast(own as any BackingData<Sub>, to: (any BackingData<Root>).self)
}

/// Whether `data` backs a model of `type` (or of a subclass of it).
public func _$backingData<Root: PersistentModel>(_ data: any BackingData<Root>, covers type: AnyClass) -> Bool {
    let object: AnyObject = data
    guard let our = object as? OurBackingData else { return false }
    return our.modelType == ObjectIdentifier(type) || our.backs(type)
}

// MARK: `let` properties (called by `@Model`'s `init(backingData:)`)

/// The stored value of a model's `let` property, which `init(backingData:)` assigns
/// as the model is first filled from the store: a `let` lives in the instance, not
/// in the backing data, so it is read once here and never changed by a context
/// (`ModelContext.insert` copies it the other way, into the row a save writes).
public func _$constantValue<Root: PersistentModel, Model: PersistentModel, Value>(
    _ data: any BackingData<Root>, forKey key: KeyPath<Model, Value>
) -> Value {
    let object: AnyObject = data
    guard let our = object as? OurBackingData else {
        preconditionFailure("\(Model.self) is backed by data OpenSwiftData did not make")
    }
    return our.inheritedValue(forKey: key)
}
