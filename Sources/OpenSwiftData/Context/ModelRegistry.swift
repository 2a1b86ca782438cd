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
/// Only `retained` holds references, so mutating `unretained` never ends a model, and
/// the `forget` a model's end triggers (while `retained` changes) touches `unretained`
/// only: no access overlaps another, and the two skip dynamic exclusivity checks
/// (two `swift_beginAccess` calls, about 160 instructions, per model that ends).
final class ModelRegistry {
    /// A saved, unchanged model, unretained; `backing` tells its entry from a newer
    /// model's entry under the same identifier.
    private struct Unretained {
        unowned(unsafe) let model: any PersistentModel
        let backing: ObjectIdentifier
    }

    @exclusivity(unchecked) private var retained: [PersistentIdentifier: any PersistentModel] = [:]
    @exclusivity(unchecked) private var unretained: [PersistentIdentifier: Unretained] = [:]

    /// The registered model for `id`, if any.
    /// - Complexity: O(1) expected
    subscript(id: PersistentIdentifier) -> (any PersistentModel)? {
        if let model = retained[id] { return model }
        return unretained[id]?.model
    }

    /// Whether `id` names a model with unsaved changes (one the context retains).
    /// - Complexity: O(1) expected
    func isRetained(_ id: PersistentIdentifier) -> Bool { retained[id] != nil }

    /// The number of registered models.
    var count: Int { retained.count + unretained.count }

    /// Registers `model` under `id`, retained when it has unsaved changes.
    /// - Complexity: O(1) expected
    func register(_ model: any PersistentModel, as id: PersistentIdentifier, retained keep: Bool) {
        if keep {
            unretained[id] = nil
            retained[id] = model
        } else {
            unretained[id] = Unretained(model: model, backing: ObjectIdentifier(model.modelBacking))
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
        unretained[id] = Unretained(model: model, backing: backing)
    }

    /// Retains the registered model `id` (it has unsaved changes now).
    /// - Complexity: O(1) expected
    func retain(_ id: PersistentIdentifier) {
        guard retained[id] == nil, let entry = unretained.removeValue(forKey: id) else { return }
        retained[id] = entry.model
    }

    /// Unregisters `id`; returns the model it held, which the caller keeps alive
    /// until it is done with it.
    /// - Complexity: O(1) expected
    @discardableResult
    func remove(_ id: PersistentIdentifier) -> (any PersistentModel)? {
        if let model = retained.removeValue(forKey: id) { return model }
        return unretained.removeValue(forKey: id)?.model
    }

    /// Stops retaining every model: after a save or rollback none has unsaved changes.
    /// Models nothing else holds end here.
    /// - Complexity: O(retained models)
    func releaseAll() {
        guard !retained.isEmpty else { return }
        let released = retained
        retained = [:]
        unretained.reserveCapacity(unretained.count + released.count)
        for (id, model) in released {
            unretained[id] = Unretained(model: model, backing: ObjectIdentifier(model.modelBacking))
        }
    }

    /// Stops retaining the models of `ids` (a save's inserts, which the caller holds
    /// while it registers them again under their permanent identifiers) and makes room
    /// for `incoming` unretained entries.
    ///
    /// The retained table is rebuilt when most of it goes, and the unretained one grown
    /// once: saving a million inserts held both tables at full size at the peak of its
    /// memory (M1), and grew the unretained one by copying it, doubling at a time.
    /// - Complexity: O(ids + retained models left)
    func releaseForReregistration(_ ids: [PersistentIdentifier], incoming: Int) {
        let before = retained.count
        for id in ids { retained.removeValue(forKey: id) }
        if before >= 1_024, retained.count * 4 < before {
            // (Dictionaries keep their storage when emptied one entry at a time.)
            var smaller: [PersistentIdentifier: any PersistentModel] = [:]
            smaller.reserveCapacity(retained.count)
            for (id, model) in retained { smaller[id] = model }
            retained = smaller
        }
        unretained.reserveCapacity(unretained.count + incoming)
    }

    /// Every registered model, retained by the array: entries stay valid while it lives,
    /// whatever ends the caller's work lets end.
    /// - Complexity: O(registered models)
    func allModels() -> [any PersistentModel] {
        Array(retained.values) + unretained.values.map(\.model)
    }

    /// Removes the unretained entry of a model whose backing data `backing` is ending.
    /// - Complexity: O(1) expected
    func forget(_ id: PersistentIdentifier, backing: ObjectIdentifier) {
        // One hash of the identifier, not two: every saved model that ends comes here.
        if let index = unretained.index(forKey: id), unretained[index].value.backing == backing {
            unretained.remove(at: index)
        }
    }
}
