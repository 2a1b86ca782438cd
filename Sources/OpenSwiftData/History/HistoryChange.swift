import Foundation

/// One change of a history transaction.
public enum HistoryChange: Sendable {
    case insert(any HistoryInsert)
    case update(any HistoryUpdate)
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

public protocol HistoryInsert<Model>: Sendable {
    associatedtype Model: PersistentModel
    var changedPersistentIdentifier: PersistentIdentifier { get }
}

public protocol HistoryUpdate<Model>: Sendable {
    associatedtype Model: PersistentModel
    var changedPersistentIdentifier: PersistentIdentifier { get }
    /// The properties whose values the commit changed: attributes and relationships.
    var updatedAttributes: [any PartialKeyPath<Self.Model> & Sendable] { get }
}

public protocol HistoryDelete<Model>: Sendable {
    associatedtype Model: PersistentModel
    var changedPersistentIdentifier: PersistentIdentifier { get }
    /// The deleted model's `.preserveValueOnDeletion` values.
    var tombstone: HistoryTombstone<Self.Model> { get }
}

public struct DefaultHistoryInsert<Model>: HistoryInsert where Model: PersistentModel {
    public let changedPersistentIdentifier: PersistentIdentifier
}

public struct DefaultHistoryUpdate<Model>: HistoryUpdate where Model: PersistentModel {
    public let changedPersistentIdentifier: PersistentIdentifier
    public let updatedAttributes: [any PartialKeyPath<Model> & Sendable]
}

public struct DefaultHistoryDelete<Model>: HistoryDelete where Model: PersistentModel {
    public let changedPersistentIdentifier: PersistentIdentifier
    public let tombstone: HistoryTombstone<Model>
}

/// What history keeps of a deleted model: the values of its attributes marked
/// `.preserveValueOnDeletion` (nil ones are left out).
public struct HistoryTombstone<Model>: Sequence, @unchecked Sendable where Model: PersistentModel {
    /// (`@unchecked`: the values are the attributes' own, each `Sendable` when stored.)
    let entries: [(keyPath: PartialKeyPath<Model>, value: any Sendable)]

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
