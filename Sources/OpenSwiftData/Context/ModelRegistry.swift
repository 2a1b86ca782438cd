import OpenSwiftDataStore

/// The models a context knows, by identifier: one object per row per context.
///
/// Models with unsaved changes (inserted, changed or deleted since the last save) are
/// retained, since the next save needs them. Saved, unchanged models are not: as a Core
/// Data context does, the context holds them only while something else does (the app,
/// or a related model's resolved relationship), so fetching or inserting a million
/// models does not keep a million alive once the app lets them go. A fetch of the same
/// row afterwards makes a new object.
///
/// An unretained entry never outlives its model: the model's backing data removes it
/// when it goes (`ModelBackingData.deinit` calls `forget`). That costs nothing per
/// model, where a weak reference costs a side-table allocation each and leaves dead
/// entries to sweep. It relies on what Swift 6 enforces for a non-`Sendable` model:
/// its last reference is dropped where its context is used.
///
/// Pending inserts are listed apart (`PendingInserts`), in insertion order; one nothing
/// but the context holds (the app made it, inserted it and let it go, as a bulk import
/// does) is let go there too, its row kept in its place.
///
/// Only `retained` and `pending` hold references, so mutating
/// `unretained` never ends a model, and the `forget` a model's end triggers (while
/// those change) touches `unretained` only: no access overlaps another, and
/// `retained` and `unretained`'s storage skip dynamic exclusivity checks (two
/// `swift_beginAccess` calls, about 160 instructions, per model that ends).
final class ModelRegistry {
    /// Saved models with unsaved changes (changed or deleted), retained; also a
    /// pending insert a custom store's save left unstored and a later change retains.
    @exclusivity(unchecked) private var retained: [PersistentIdentifier: any PersistentModel] = [:]
    /// Saved, unchanged models, unretained.
    private let unretained = UnretainedModels()
    /// Pending inserts, in insertion order.
    let pending = PendingInserts()
    /// The context, which makes the model of a kept insert again.
    var owner: ModelContext? {
        get { pending.owner }
        set { pending.owner = newValue }
    }

    /// The registered model for `id`, if any (a kept insert's made again).
    /// - Complexity: O(1) expected (the first look-up of a pending insert: O(pending inserts))
    subscript(id: PersistentIdentifier) -> (any PersistentModel)? {
        if let model = retained[id] { return model }
        if let model = unretained[id] { return model }
        return pending.model(for: id)
    }

    /// Whether `id` names a model with unsaved changes (one the context retains).
    /// - Complexity: O(1) expected (the first look-up of a pending insert: O(pending inserts))
    func isRetained(_ id: PersistentIdentifier) -> Bool { retained[id] != nil || pending.contains(id) }

    /// Whether `id`, with a temporary identifier and registered here, is retained: a
    /// pending insert (or one a custom store left unsaved and a change retains).
    /// Without a look-up by identifier in the pending list, which a change to each of a
    /// million pending inserts would otherwise make.
    /// - Complexity: O(1) expected
    func isRetainedInsert(registered id: PersistentIdentifier) -> Bool {
        id.isTemporary && !unretained.contains(id)
    }

    /// The number of registered models.
    var count: Int { retained.count + unretained.count + pending.count }

    /// The number of pending inserts.
    var pendingCount: Int { pending.count }

    /// Whether any model is a pending insert.
    var hasPendingInserts: Bool { pending.count > 0 }

    /// Makes room for `additional` more unretained entries (a fetch about to make
    /// that many models): one resize, where growing entry by entry doubled the table
    /// several times over.
    /// - Complexity: O(registered models) when the table grows, else O(1)
    func reserveUnretained(_ additional: Int) {
        unretained.reserveCapacity(unretained.count + additional)
    }

    /// Registers `model` under `id`, retained when it has unsaved changes: a model
    /// with a temporary identifier is then a pending insert, which it must not be
    /// already (an insert registers only models of no context).
    /// - Complexity: O(1) expected
    func register(_ model: any PersistentModel, as id: PersistentIdentifier, retained keep: Bool) {
        if keep {
            unretained.remove(id)
            if id.isTemporary {
                pending.append(model, as: id)
            } else {
                retained[id] = model
            }
        } else {
            unretained.set(model, backing: ObjectIdentifier(model.modelBacking), for: id)
            guard !retained.isEmpty else { return }
            // Dropped after the access: a model ending here must not find `retained` busy.
            let replaced = retained.removeValue(forKey: id)
            _ = replaced
        }
    }

    /// Registers `model`, just made over a saved row with backing data `backing`,
    /// unretained. The caller found no entry for `id`, so none is replaced.
    /// - Complexity: O(1) expected
    func registerMade(_ model: any PersistentModel, backing: ObjectIdentifier, as id: PersistentIdentifier) {
        assert(self[id] == nil, "a made model replaces a registered one")
        unretained.add(model, backing: backing, for: id)
    }

    /// Retains the registered model `id` (it has unsaved changes now).
    /// - Complexity: O(1) expected
    func retain(_ id: PersistentIdentifier) {
        guard let model = unretained.remove(id) else { return }
        retained[id] = model
    }

    /// Makes room for `count` more retained models, so that retaining them (the
    /// models a save deletes) grows the table at most once.
    func reserveRetained(_ count: Int) {
        retained.reserveCapacity(retained.count + count)
    }

    /// Unregisters `id`; returns the model it held (nil for a kept insert), which
    /// the caller keeps alive until it is done with it.
    /// - Complexity: O(1) expected (the first look-up of a pending insert: O(pending inserts))
    @discardableResult
    func remove(_ id: PersistentIdentifier) -> (any PersistentModel)? {
        let (found, model) = pending.remove(id)
        if found { return model }
        if let model = retained.removeValue(forKey: id) { return model }
        return unretained.remove(id)
    }

    /// Stops retaining every model: after a save or rollback none has unsaved changes.
    /// Models nothing else holds end here.
    /// - Complexity: O(retained models + pending inserts)
    func releaseAll() {
        if pending.count > 0 {
            // (Its callers took the pending inserts first: a kept one would be lost.)
            assert(!pending.hasKeptRows, "kept inserts released")
            unretained.reserveCapacity(unretained.count + pending.count)
            var taken = pending.take()
            while let insert = taken.next() {
                guard case let .model(model) = insert else { continue }
                unretained.set(model, backing: ObjectIdentifier(model.modelBacking), for: model.modelBacking.identifier)
            }
        }
        guard !retained.isEmpty else { return }
        let released = retained
        retained = [:]
        unretained.reserveCapacity(unretained.count + released.count)
        for (id, model) in released {
            unretained.set(model, backing: ObjectIdentifier(model.modelBacking), for: id)
        }
    }

    /// Traps unless no model is both retained and unretained, the unretained
    /// table and the pending inserts keep their own invariants, and every retained
    /// model is registered under its own identifier.
    /// - Complexity: O(registered models)
    func _checkInvariants() {
        unretained._checkInvariants()
        pending._checkInvariants()
        for (id, model) in retained {
            precondition(unretained[id] == nil, "\(id) is registered both retained and unretained")
            precondition(model.modelBacking.identifier == id, "\(id) holds a model of another identifier")
        }
    }

    /// Every registered model, retained by the array: entries stay valid while it lives,
    /// whatever ends the caller's work lets end. (Kept inserts have no model.)
    /// - Complexity: O(registered models)
    func allModels() -> [any PersistentModel] {
        Array(retained.values) + unretained.models + pending.models
    }

    /// Removes the unretained entry of a model whose backing data `backing` is ending.
    /// - Complexity: O(1) expected
    func forget(_ id: PersistentIdentifier, backing: ObjectIdentifier) {
        unretained.forget(id, backing: backing)
    }
}

/// A pending insert whose model nothing held any more (`PendingInserts.spillUnheld`):
/// where its row is, and what makes its model again.
///
/// Made from a `KeptRun` when asked for, and 24 bytes: its key, layout, entity and
/// row. The identifier is its key in its layout's temporary scope.
struct SpilledInsert {
    /// The layout the model had (its hierarchy's, in a container with one).
    let layout: EntityLayout
    /// The key of its temporary identifier, in `layout.temporaryScope`.
    private let key: Int64
    private let entityIndex: Int32
    private let rowIndex: UInt32

    /// An insert of a run (`KeptRun.insert`).
    init(layout: EntityLayout, key: Int64, entity: Int32, row: UInt32) {
        self.layout = layout
        self.key = key
        entityIndex = entity
        rowIndex = row
    }

    /// The insert of `identifier`, which must be in `layout`'s temporary scope (the
    /// caller lets go no other), kept in row `row` of `entity`'s table.
    init(identifier: PersistentIdentifier, layout: EntityLayout, entity: Int, row: RowID) {
        precondition(identifier.id.scope === layout.temporaryScope, "a kept insert of another scope")
        guard let entityIndex = Int32(exactly: entity), let rowIndex = UInt32(exactly: row.rawValue) else {
            preconditionFailure("a kept row past the record's range")
        }
        self.init(layout: layout, key: identifier.id.key, entity: entityIndex, row: rowIndex)
    }

    var identifier: PersistentIdentifier { PersistentIdentifier(scope: layout.temporaryScope, key: key) }
    /// Its entity in the container's schema, whose table of kept rows
    /// (`PendingInserts.keptRows`) holds its row under `row`.
    var entity: Int { Int(entityIndex) }
    var row: RowID { RowID(Int64(rowIndex)) }
    /// Its temporary row: the key of its identifier.
    var temporaryRow: RowID { RowID(key) }

    /// The model again, over `row`, registered with `context` by the caller: a pending
    /// insert, with no saved row.
    func makeModel(over row: Row, in context: ModelContext) -> any PersistentModel {
        let model = layout.maker.make(
            identifier: identifier, layout: layout, row: row, table: Self.noTable, id: temporaryRow,
            generation: 0, context: context, registering: false)
        model.modelBacking.committed = nil
        return model
    }

    /// The table a model made over a row needs and never reads.
    private static let noTable = Table(kinds: [])
}
