import Foundation

/// One change of a history transaction.
public enum HistoryChange: Sendable {
    /// The model was inserted by the transaction's commit.
    case insert(any HistoryInsert)
    /// The commit changed some of the model's properties.
    case update(any HistoryUpdate)
    /// The commit deleted the model; its tombstone holds what was preserved.
    case delete(any HistoryDelete)

    /// The model the change is about.
    public var changedPersistentIdentifier: PersistentIdentifier {
        switch self {
        case let .insert(change): change.changedPersistentIdentifier
        case let .update(change): change.changedPersistentIdentifier
        case let .delete(change): change.changedPersistentIdentifier
        }
    }
}

/// A history change recording that a model was inserted.
public protocol HistoryInsert<Model>: Sendable {
    /// The class of the inserted model.
    associatedtype Model: PersistentModel
    /// The identifier of the inserted model.
    var changedPersistentIdentifier: PersistentIdentifier { get }
}

/// A history change recording that a model's properties were changed.
public protocol HistoryUpdate<Model>: Sendable {
    /// The class of the changed model.
    associatedtype Model: PersistentModel
    /// The identifier of the changed model.
    var changedPersistentIdentifier: PersistentIdentifier { get }
    /// The properties whose values the commit changed: attributes and relationships.
    var updatedAttributes: [any PartialKeyPath<Self.Model> & Sendable] { get }
}

/// A history change recording that a model was deleted.
public protocol HistoryDelete<Model>: Sendable {
    /// The class of the deleted model.
    associatedtype Model: PersistentModel
    /// The identifier the deleted model had.
    var changedPersistentIdentifier: PersistentIdentifier { get }
    /// The deleted model's `.preserveValueOnDeletion` values.
    var tombstone: HistoryTombstone<Self.Model> { get }
}

/// An insertion recorded in the built-in store's history.
public struct DefaultHistoryInsert<Model>: HistoryInsert where Model: PersistentModel {
    /// The identifier of the inserted model.
    public let changedPersistentIdentifier: PersistentIdentifier
}

/// An update recorded in the built-in store's history.
public struct DefaultHistoryUpdate<Model>: HistoryUpdate where Model: PersistentModel {
    /// The identifier of the changed model.
    public let changedPersistentIdentifier: PersistentIdentifier
    /// The key paths of the attributes and relationships the commit wrote.
    public let updatedAttributes: [any PartialKeyPath<Model> & Sendable]
}

/// A deletion recorded in the built-in store's history.
public struct DefaultHistoryDelete<Model>: HistoryDelete where Model: PersistentModel {
    /// The identifier the deleted model had.
    public let changedPersistentIdentifier: PersistentIdentifier
    /// The deleted model's `.preserveValueOnDeletion` attribute values.
    public let tombstone: HistoryTombstone<Model>
}

/// What history keeps of a deleted model: the values of its attributes marked
/// `.preserveValueOnDeletion` (nil ones are left out).
public struct HistoryTombstone<Model>: Sequence, @unchecked Sendable where Model: PersistentModel {
    /// (`@unchecked`: the values are the attributes' own, each `Sendable` when stored.)
    let entries: [(keyPath: PartialKeyPath<Model>, value: any Sendable)]

    /// Iterates over a tombstone's preserved values, in the order of the model's
    /// attributes.
    public struct Iterator: IteratorProtocol {
        var base: IndexingIterator<[(keyPath: PartialKeyPath<Model>, value: any Sendable)]>
        /// The next preserved value.
        public mutating func next() -> Any? { base.next()?.value }
    }

    /// The preserved value of the attribute at `keyPath`, if it was kept.
    /// - Complexity: O(preserved attributes)
    public subscript(keyPath: PartialKeyPath<Model>) -> (any Sendable)? {
        entries.first { $0.keyPath == keyPath }?.value
    }

    /// Returns an iterator over the preserved values (without their key paths).
    public func makeIterator() -> Iterator { Iterator(base: entries.makeIterator()) }
}

extension Sequence {
    /// OpenSwiftData: whether the updated attributes include `keyPath`, as the
    /// history article writes it (`change.updatedAttributes.contains(\.flightTime)`).
    /// - Complexity: O(n)
    public func contains<Root>(_ keyPath: PartialKeyPath<Root>) -> Bool where Element == any PartialKeyPath<Root> & Sendable {
        contains { $0 == keyPath }
    }
}
