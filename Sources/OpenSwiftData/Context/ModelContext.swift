import Foundation
import Synchronization
import OpenSwiftDataStore

/// Tracks models and their unsaved changes, and reads and writes them through
/// the container's store.
///
/// Not `Sendable`: use a context on the actor that made it (`@ModelActor` gives
/// each actor its own). One object per row per context: fetching a row twice
/// returns the same instance.
public class ModelContext: Equatable, SendableMetatype {
    /// The container whose store the context fetches from and saves to.
    public let container: ModelContainer
    /// Recorded with each save, for history.
    public var author: String?
    /// What a save does about models another writer saved after this context read
    /// them: merge by property (the default, as SwiftData does) or throw
    /// `SaveConflictError` (`ModelContext.ConflictPolicy`). OpenSwiftData.
    public var conflictPolicy: ConflictPolicy = .mergeByProperty
    /// Saves shortly after changes when on; on for `mainContext`, off otherwise.
    public var autosaveEnabled = false {
        didSet { if autosaveEnabled, hasChanges { scheduleAutosave() } }
    }

    /// Records changes to the context's models for undo and redo when set
    /// (`ModelContext+Undo.swift`); nil by default.
    public var undoManager: UndoManager? {
        didSet {
            if (oldValue == nil) != (undoManager == nil) {
                Self.undoContexts.add(undoManager == nil ? -1 : 1, ordering: .relaxed)
            }
        }
    }

    /// How many contexts of the process have an undo manager: while none has, a
    /// property write skips looking its model's context up for undo (a weak
    /// reference load, about 1 % of an insert).
    static let undoContexts = Atomic<Int>(0)
    // The context's bookkeeping skips dynamic exclusivity checks
    // (`@exclusivity(unchecked)`), as its models' backing data does: a context is used
    // on one actor or thread (it is not `Sendable`), and the checks cost about 400
    // instructions per deleted model in a save (W6 delete).

    /// Deleted models the undo manager's actions hold: they left the registry, so
    /// `deinit` breaks their relationship cycles from here.
    @exclusivity(unchecked) var undoRetained: [any PersistentModel] = []

    var isMainContext = false
    /// Whether a model of the context may hold resolved related models (a relationship
    /// was resolved or set through it, or a model of an entity with relationships was
    /// inserted): only then does
    /// `deinit` walk every registered model to break the cycles those make. A fetch of
    /// a hundred thousand models that reads no relationship spent a tenth of its wall
    /// clock in that walk (W4 fetch).
    @exclusivity(unchecked) var mayHoldResolvedRelationships = false
    /// Whether a pending insert may hold a model that is not registered: a relationship
    /// was set on a registered model, or a model was deleted, since the pending inserts
    /// were last walked (`insertReachableModels()`). A model's insertion itself inserts
    /// what it holds then, so a save of a million inserts that set no relationship
    /// afterwards walks none of them (a cache miss each; about 3 % of W1).
    @exclusivity(unchecked) var mayReachUnregistered = false
    @exclusivity(unchecked) var autosaveScheduled = false

    /// Every model the context knows, by identifier; retains those with unsaved changes.
    let registry = ModelRegistry()
    /// What its models' backing data reach the context through, cleared as it ends.
    let link = ContextLink()
    // (Pending inserts are the registry's: `registry.pending`, in insertion order.)
    /// Registered, saved models with unsaved changes, and reinserted ones.
    @exclusivity(unchecked) var changed = TrackedChanges()
    /// Pending deletes, with how far their delete rules ran.
    @exclusivity(unchecked) var deletes = PendingDeletes()
    /// Undo's bookkeeping (`ModelContext+Undo.swift`).
    @exclusivity(unchecked) var undoState = UndoState()
    /// The context's identity for a custom store (`editingState`).
    lazy var editingStateID = UUID()
    /// The predicate templates the context's last fetches found, tried first by the next.
    let predicateMemo = PredicateMemo()
    /// Snapshots a custom store returned beside the models fetched, which
    /// relationships resolve from before asking the store (`DataStoreBackend`).
    @exclusivity(unchecked) var storeSnapshots: [PersistentIdentifier: DefaultSnapshot] = [:]
    /// What the context's last save that wrote something wrote, as its `didSave`
    /// listed it; nil before one did. A save with nothing to write posts no
    /// `didSave` and leaves this as it was. *Additive* (`SavedChanges`).
    public internal(set) var lastSavedChanges: SavedChanges?

    /// A new context over `container`'s store, with nothing registered.
    public init(_ container: ModelContainer) {
        self.container = container
        link.context = self
        link.registry = Unmanaged.passUnretained(registry)
        registry.owner = self
        container.backend.contextBegan(self)
    }

    /// The context as a store sees it: an identity stable for the context's life, and
    /// the author its saves record.
    public var editingState: EditingState { EditingState(id: editingStateID, author: author) }

    /// Breaks the cycles resolved relationships make (a trip holding its items, each
    /// item its trip), which would otherwise keep the context's models alive after it:
    /// a model read after its context ended has no relationships to resolve anyway.
    deinit {
        // First: models that end from here on find no context, as a weak reference
        // to one that is ending would read.
        link.context = nil
        link.registry = nil
        registry.owner = nil
        if mayHoldResolvedRelationships {
            let models = registry.allModels()
            for model in models { model.modelBacking.dropResolvedRelationships() }
        }
        for model in undoRetained { model.modelBacking.dropResolvedRelationships() }
        container.backend.contextEnded(self)
        if let undoManager {
            Self.undoContexts.add(-1, ordering: .relaxed)
            // Its actions hold models for a context that is gone, and the manager may
            // live on. (Models that end here find the link cleared and leave the
            // registry alone.)
            undoManager.removeAllActions(withTarget: self)
        }
    }

    /// Contexts are equal only when they are the same context.
    public static func == (lhs: ModelContext, rhs: ModelContext) -> Bool { lhs === rhs }

    /// Whether the context has unsaved inserts, changes or deletes.
    public var hasChanges: Bool { registry.hasPendingInserts || !changed.isEmpty || !deletes.isEmpty }

    /// Models inserted since the last save.
    /// - Complexity: O(inserted models)
    public var insertedModelsArray: [any PersistentModel] { registry.pending.all }

    /// Saved models changed since the last save.
    /// - Complexity: O(changed models)
    public var changedModelsArray: [any PersistentModel] {
        changed.sorted().compactMap { registry[$0] }
    }

    /// Models deleted since the last save.
    /// - Complexity: O(deleted models)
    public var deletedModelsArray: [any PersistentModel] {
        // (A row a cascade deleted as a row has its model made here: `DeletionClosure.rows`.)
        deletes.identifiers.compactMap { registry[$0] ?? (!$0.isTemporary ? model(for: $0) : nil) }
    }

    /// Whether `id` names a model inserted since the last save. Those, and only
    /// those, are registered under temporary identifiers (a save gives them permanent
    /// ones; a delete or rollback unregisters them), so no separate set is kept: at a
    /// million inserts it cost about 100 bytes each.
    /// - Complexity: O(1) expected (the first look-up of a pending insert: O(pending inserts))
    func isPendingInsert(_ id: PersistentIdentifier) -> Bool {
        id.isTemporary && registry.isRetained(id)
    }

    func hasPendingChanges(_ id: PersistentIdentifier) -> Bool {
        isPendingInsert(id) || changed.contains(id) || deletes.contains(id)
    }

    /// Called by backing data when a registered model's value changes.
    func noteChange(of id: PersistentIdentifier) {
        // (The caller's model is registered here.) A change to a pending insert is part
        // of the insert: no look-up by identifier among the pending inserts.
        if registry.isRetainedInsert(registered: id) { return }
        guard registry[id] != nil, !isPendingInsert(id), !deletes.contains(id) else { return }
        changed.insert(id)
        registry.retain(id)
        scheduleAutosave()
    }

    // MARK: Identity

    /// The model for `persistentModelID`: the registered one, or one read from the store.
    ///
    /// An identifier of a row that no longer exists gives a model whose `isDeleted`
    /// is true; reading its non-optional attributes gives zero values.
    public func model(for persistentModelID: PersistentIdentifier) -> any PersistentModel {
        if let model = registry[persistentModelID] { return model }
        guard let entity = container.entityIndex(of: persistentModelID) else {
            preconditionFailure("\(persistentModelID) names an entity the container's schema does not have")
        }
        if let model = container.backend.storedModel(for: persistentModelID, entity: entity, in: self) { return model }
        let (table, generation) = container.backend.table(of: entity)
        let model = makeModel(
            identifier: persistentModelID, entity: entity, row: container.layout(at: entity).emptyRow, table: table,
            generation: generation)
        model.modelBacking.isDeleted = true
        return model
    }

    /// The registered model for `persistentModelID`, if the context has one of type `T`.
    public func registeredModel<T: PersistentModel>(for persistentModelID: PersistentIdentifier) -> T? {
        registry[persistentModelID] as? T
    }

    /// The permanent identifier of row `id` of entity `entity`.
    func identifier(entity: Int, row id: RowID) -> PersistentIdentifier {
        PersistentIdentifier(scope: container.identifierScopes[entity], key: id.rawValue)
    }

    /// The registered model for a stored row, or a new one made from it and registered:
    /// a fault, read on first use, when `row` is nil.
    ///
    /// A registered model without unsaved changes takes the newer stored values, so a
    /// context sees what other contexts saved.
    func materialize(_ layout: EntityLayout, entity: Int, id: RowID, row: Row?, in version: StoreVersion) -> any PersistentModel {
        let identifier = identifier(entity: entity, row: id)
        if let model = registry[identifier] {
            refresh(model.modelBacking, entity: entity, with: row, in: version)
            return model
        }
        return makeModel(
            identifier: identifier, entity: entity, row: row, table: version.tables[entity], generation: version.generation,
            registering: true)
    }

    /// Brings a registered model without unsaved changes up to `version`, so a
    /// context sees what other contexts saved (`ModelBacking.refresh`).
    func refresh(_ backing: any ModelBacking, entity: Int, with row: Row?, in version: StoreVersion) {
        guard backing.generation < version.generation, backing.dirty.isEmpty,
              !deletes.contains(backing.identifier), !isPendingInsert(backing.identifier)
        else { return }
        backing.refresh(from: version.tables[entity], row: row, generation: version.generation)
    }

    /// A model over a stored row, not registered: a fault when `row` is nil.
    func makeModel(
        identifier: PersistentIdentifier, entity: Int, row: Row?, in version: StoreVersion
    ) -> any PersistentModel {
        makeModel(identifier: identifier, entity: entity, row: row, table: version.tables[entity], generation: version.generation)
    }

    /// A model over row `identifier` of `table`, entity `entity`'s table in the version
    /// of `generation`; registered (unretained) when `registering`, for a row the
    /// registry has no model of.
    ///
    /// The parameters the backing data keeps are taken owned (`__owned`), down to its
    /// initializer: the caller's copies move into it, where borrowed ones were retained
    /// again there and released here (about eight atomic reference-count operations
    /// per model, a tenth of a fetch's wall clock).
    func makeModel(
        identifier: __owned PersistentIdentifier, entity: Int, row: __owned Row?, table: __owned Table, generation: UInt64,
        registering: Bool = false
    ) -> any PersistentModel {
        // The container's layout is the one `EntityLayout.of` would find, without its lock;
        // in a class hierarchy, that of the class the row names.
        let id = RowID(identifier.id.key)
        let layout = container.hasHierarchies
            ? container.layout(at: entity, row: id, in: table, values: row) : container.layout(at: entity)
        // A row a pending save deletes as a row (`DeletionClosure.rows`) whose model is
        // made after all (a relationship resolved, `model(for:)`) is deleted, as the
        // model of a deleted row would be: retained until the save ends it.
        let deletedRow = registering && deletes.contains(identifier)
        let model = layout.maker.make(
            identifier: identifier, layout: layout, row: row, table: table, id: id, generation: generation, context: self,
            registering: registering)
        if deletedRow {
            let backing = model.modelBacking
            backing.isDeleted = true
            registry.retain(backing.identifier)
        }
        return model
    }

    /// The models a stored relationship value refers to, registering them.
    /// References to rows that no longer exist are skipped.
    func resolve(_ value: Value, of relationship: EntityLayout.RelationshipSlot) -> [any PersistentModel] {
        mayHoldResolvedRelationships = true
        return container.backend.resolve(value, of: relationship, in: self)
    }

    /// The identifiers a stored relationship value names, without loading models.
    func storedIdentifiers(_ value: Value, of relationship: EntityLayout.RelationshipSlot) -> [PersistentIdentifier] {
        container.backend.identifiers(in: value, of: relationship, in: self)
    }
}

extension ModelContext: CustomDebugStringConvertible {
    /// How many models the context has registered, and of those how many are unsaved
    /// inserts, changes and deletes.
    public var debugDescription: String {
        "ModelContext(registered: \(registry.count), inserted: \(registry.pendingCount), changed: \(changed.count), deleted: \(deletes.count))"
    }
}

/// A context's stand-in for the backing data of its models, which hold it strongly
/// and read the context through it; the context clears it as it ends.
///
/// A weak reference from each backing data to the context gave the context a side
/// table, which sends every retain and release of it down the runtime's slow path,
/// and cost a weak assignment per model made, a weak load and a weak destroy per
/// model ended: about a tenth of the wall clock of a range fetch (W3, measured with
/// perf). The unowned reference here is safe under the rule every model obeys: a
/// context and its models (none `Sendable`) are used on one actor or thread, so
/// no model reads the link while its context ends elsewhere.
final class ContextLink {
    unowned(unsafe) var context: ModelContext?
    /// The context's registry while the context lives, for the end of a model: read
    /// through `_withUnsafeGuaranteedRef`, it is neither retained nor released.
    var registry: Unmanaged<ModelRegistry>?

    init() {}
}

