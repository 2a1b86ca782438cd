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
}

extension PersistentModel {
    public static var _$uniquenessConstraints: [[AnyKeyPath]] { [] }
    public static var _$indices: [Any] { [] }

    /// Fresh backing data for a model created by its own initializer.
    public static func createBackingData() -> any BackingData<Self> {
        ModelBackingData<Self>()
    }

    /// The backing data as our class. A dynamic cast to it cost about 2,000
    /// instructions per property access through the `any ModelBacking` existential,
    /// and a check of the exact generic class a metadata lookup each time. So: one
    /// class check against our non-generic base, and the model type it records
    /// compared with `Self` (which differs for a subclass of a `@Model` class that is
    /// not `@Model` itself). Anything else is a programming error and traps with a
    /// clear message.
    @inline(__always)
    var backing: ModelBackingData<Self> {
        let object: AnyObject = persistentBackingData
        guard object is OurBackingData, unsafeDowncast(object, to: OurBackingData.self).modelType == ObjectIdentifier(Self.self)
        else {
            preconditionFailure(
                "\(Self.self) is backed by \(Swift.type(of: object)); only the backing data OpenSwiftData makes for \(Self.self) is supported (is it a subclass of a @Model class without @Model?)")
        }
        return unsafeDowncast(object, to: ModelBackingData<Self>.self)
    }

    /// The context the model is registered with, if any.
    public var modelContext: ModelContext? { backing.context }

    /// The model's identifier: temporary until the first save, permanent afterwards.
    public var persistentModelID: PersistentIdentifier { backing.identifier }

    public var id: PersistentIdentifier { persistentModelID }

    /// Whether the model has changes its context has not saved.
    public var hasChanges: Bool {
        let b = backing
        guard let context = b.context else { return false }
        return context.hasPendingChanges(b.identifier)
    }

    /// Whether the model has been deleted from its context (pending or saved).
    public var isDeleted: Bool { backing.isDeleted }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// Reads a stored property; `@Model`'s accessors call this.
    public func getValue<Value>(forKey key: KeyPath<Self, Value>) -> Value {
        backing.value(forKey: key, owner: self)
    }

    /// Writes a stored property, keeping inverse relationships in step and
    /// telling the context about the change; `@Model`'s accessors call this.
    public func setValue<Value>(forKey key: KeyPath<Self, Value>, to newValue: Value) {
        backing.setValue(newValue, forKey: key, owner: self)
    }
}
