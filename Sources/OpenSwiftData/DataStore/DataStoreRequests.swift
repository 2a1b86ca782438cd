import Foundation

/// A context as a store sees it: a stable identity, for stores that keep state per
/// context, and the author its saves record.
public struct EditingState: Identifiable, Sendable {
    /// A context's identity is a UUID.
    public typealias ID = UUID
    /// The context's identity, the same for all of its requests.
    public let id: UUID
    /// The `author` of the context, which a store keeping history records with its saves.
    public var author: String?

    /// OpenSwiftData: public, so a store can be driven directly (a test, a store
    /// that wraps another); contexts make their own (`ModelContext.editingState`).
    public init(id: UUID = UUID(), author: String? = nil) {
        self.id = id
        self.author = author
    }
}

/// A fetch a context asks of a store.
public struct DataStoreFetchRequest<T: PersistentModel>: Sendable {
    /// What to fetch: predicate, order and window.
    public let descriptor: FetchDescriptor<T>
    /// The context asking.
    public let editingState: EditingState

    /// OpenSwiftData: public, as `EditingState.init` is.
    public init(descriptor: FetchDescriptor<T>, editingState: EditingState) {
        self.descriptor = descriptor
        self.editingState = editingState
    }
}

/// What a store's fetch returns: the snapshots of the models the descriptor
/// selects, in its order and window, and any related snapshots the store has at hand.
public struct DataStoreFetchResult<ModelType: PersistentModel, SnapshotType: DataStoreSnapshot>: Sendable {
    /// The descriptor the fetch answered.
    public let descriptor: FetchDescriptor<ModelType>
    /// The snapshots of the selected models, in the descriptor's order and window.
    public let fetchedSnapshots: [SnapshotType]
    /// Snapshots of related models the store had at hand, by identifier; the context
    /// resolves relationships from them before asking again.
    public let relatedSnapshots: [PersistentIdentifier: SnapshotType]

    /// Creates a fetch result; `relatedSnapshots` may be left empty.
    public init(
        descriptor: FetchDescriptor<ModelType>, fetchedSnapshots: [SnapshotType],
        relatedSnapshots: [PersistentIdentifier: SnapshotType] = [:]
    ) {
        self.descriptor = descriptor
        self.fetchedSnapshots = fetchedSnapshots
        self.relatedSnapshots = relatedSnapshots
    }
}

/// One save of one context: the snapshots of its inserted (temporary identifiers),
/// changed and deleted models.
public struct DataStoreSaveChangesRequest<SnapshotType: DataStoreSnapshot>: Sendable {
    /// The saving context.
    public let editingState: EditingState
    /// Snapshots of the new models, under their temporary identifiers; the result must
    /// map each to a permanent one.
    public let inserted: [SnapshotType]
    /// Snapshots of the changed models, with all of their values (see `changedProperties`
    /// for which changed).
    public let updated: [SnapshotType]
    /// Snapshots of the deleted models, as the context last had them.
    public let deleted: [SnapshotType]
    /// OpenSwiftData: the saving context's `conflictPolicy`. Under `failOnConflict`
    /// a store compares each updated and deleted model as the context read it
    /// (`readSnapshots`) with what it holds, and throws `SaveConflictError` when they
    /// differ; a store that cannot throws `DataStoreError.unsupportedFeature` rather
    /// than let a conflict through.
    public let conflictPolicy: ModelContext.ConflictPolicy
    /// OpenSwiftData: each updated model (and under `failOnConflict` each deleted
    /// one) as the context last read or saved it, by identifier: what a store compares
    /// with what it holds for `failOnConflict`, and what a to-many list's change is
    /// taken against when merging (what the context added and removed since).
    public let readSnapshots: [PersistentIdentifier: DefaultSnapshot]
    /// OpenSwiftData: per updated snapshot, the names of the properties the context
    /// changed since it read the model, which a store merging by property writes
    /// (the snapshot's other values are what the context last read). A snapshot not
    /// listed counts as changed whole.
    public let changedProperties: [PersistentIdentifier: Set<String>]

    /// OpenSwiftData: public, as `EditingState.init` is.
    public init(
        editingState: EditingState, inserted: [SnapshotType] = [], updated: [SnapshotType] = [], deleted: [SnapshotType] = [],
        conflictPolicy: ModelContext.ConflictPolicy = .mergeByProperty, changedProperties: [PersistentIdentifier: Set<String>] = [:],
        readSnapshots: [PersistentIdentifier: DefaultSnapshot] = [:]
    ) {
        self.editingState = editingState
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.conflictPolicy = conflictPolicy
        self.changedProperties = changedProperties
        self.readSnapshots = readSnapshots
    }

    /// Whether the context changed property `name` of updated snapshot `id`.
    public func changed(_ name: String, of id: PersistentIdentifier) -> Bool {
        changedProperties[id]?.contains(name) ?? true
    }
}

/// What a store's save returns: the permanent identifier of each inserted
/// snapshot's temporary one, and snapshots whose stored values differ from what the
/// context sent (an upsert merged them, say), which the context's models take.
public final class DataStoreSaveChangesResult<T: DataStoreSnapshot>: Sendable {
    /// The identifier of the store that saved.
    public let storeIdentifier: String
    /// The permanent identifier of every inserted snapshot, by its temporary identifier;
    /// a save that leaves one out throws `modelValidationFailure`.
    public let remappedIdentifiers: [PersistentIdentifier: PersistentIdentifier]
    /// Snapshots whose stored values differ from what the context sent, by (temporary or
    /// permanent) identifier; the context's models take these values.
    public let snapshotsToReregister: [PersistentIdentifier: T]
    /// The temporary identifiers of inserted snapshots the store saved onto a row it
    /// had already (an upsert on a unique key): the context's `didSave` lists them as
    /// updated, not inserted, as over the built-in store. *Additive*: Apple's result has
    /// no such field; a store that leaves it empty has its upserts reported as inserts.
    public let upsertedIdentifiers: Set<PersistentIdentifier>

    /// Creates the result of a save by the store `storeIdentifier`.
    public init(
        for storeIdentifier: String, remappedIdentifiers: [PersistentIdentifier: PersistentIdentifier] = [:],
        snapshotsToReregister: [PersistentIdentifier: T] = [:], upsertedIdentifiers: Set<PersistentIdentifier> = []
    ) {
        self.storeIdentifier = storeIdentifier
        self.remappedIdentifiers = remappedIdentifiers
        self.snapshotsToReregister = snapshotsToReregister
        self.upsertedIdentifiers = upsertedIdentifiers
    }
}

/// A delete of every model of type `T` matching `predicate` (all when nil), run by
/// a `DataStoreBatching` store without loading models.
public struct DataStoreBatchDeleteRequest<T: PersistentModel>: Sendable {
    /// The context asking.
    public let editingState: EditingState
    /// Which models to delete; `nil` deletes every model of type `T`.
    public let predicate: Predicate<T>?
    /// Whether models of subclasses of `T` go too.
    public let includeSubclasses: Bool

    /// OpenSwiftData: public, as `EditingState.init` is.
    public init(editingState: EditingState, predicate: Predicate<T>?, includeSubclasses: Bool = true) {
        self.editingState = editingState
        self.predicate = predicate
        self.includeSubclasses = includeSubclasses
    }
}
