import Foundation
import OpenSwiftDataStore

extension ModelContext {
    /// Marks `model` for deletion at the next save.
    ///
    /// Its delete rules (cascade, nullify) apply at the end of the event, as Core
    /// Data propagates deletes: at `processPendingChanges()` or `save()`. Deleting a
    /// model inserted since the last save forgets it at once.
    public func delete<T: PersistentModel>(_ model: T) {
        deleteModel(model)
        scheduleAutosave()
    }

    func deleteModel(_ model: any PersistentModel) {
        let backing = model.modelBacking
        guard backing.context === self else { return }
        // A pending insert may still hold it (a relationship without an inverse): the
        // next save's walk inserts it again, as it inserts every model they reach.
        mayReachUnregistered = true
        let id = backing.identifier
        if undoManager != nil, isPendingInsert(id) || !deletes.contains(id) { registerUndoOfDelete(model) }
        if isPendingInsert(id) {
            registry.remove(id)
            detachFromInverses(model)
            backing.isDeleted = true
            backing.context = nil
            deletes.addInsert(model)
            return
        }
        if deletes.add(id) {
            changed.remove(id)
            registry.retain(id)
            backing.isDeleted = true
        }
    }

    /// Runs the delete rules of the deletes made since they last ran: `cascade`
    /// deletes the related models, and every deleted model leaves the inverse side of
    /// its relationships (except `noAction` ones). `deny` is checked by `save()`.
    ///
    /// Running them within the event of the deletes puts their undo actions in the
    /// same undo group. Running a model's rules twice changes nothing the first run
    /// did not leave undone.
    /// - Complexity: O(relationships of the deleted models and of what they cascade to)
    func propagatePendingDeletes() {
        // A cascade may delete saved models and models inserted since: loop until
        // neither list has any left.
        while deletes.hasUnpropagated {
            while let id = deletes.nextToPropagate() {
                if let model = registry[id] { _ = propagate(model) }
            }
            while let model = deletes.nextInsertToPropagate() {
                // Inserted again since: nothing to propagate.
                if model.modelBacking.isDeleted { _ = propagate(model) }
            }
        }
    }

    /// Runs the delete rules of `model`'s deletion alone, and of the deletions they
    /// cascade to; other pending deletes wait for the end of the event. The undo of an
    /// insert runs this, so its actions join the redo of that insert and no other
    /// delete of the event is propagated in the middle of its undo.
    func propagateDelete(of model: any PersistentModel) {
        var work = [model]
        while let next = work.popLast() {
            if next.modelBacking.isDeleted { work += propagate(next) }
        }
    }

    /// Runs `model`'s delete rules; returns the models its cascades deleted, which
    /// `deletes` records so that inserting `model` again brings them back.
    private func propagate(_ model: any PersistentModel) -> [any PersistentModel] {
        let backing = model.modelBacking
        var cascaded: [any PersistentModel] = []
        for (j, relationship) in backing.layout.relationships.enumerated() where relationship.deleteRule == .cascade {
            for related in backing.relatedModels(j) where !related.modelBacking.isDeleted {
                deleteModel(related)
                if related.modelBacking.isDeleted { cascaded.append(related) }
            }
        }
        deletes.recordCascade(of: model, deleted: cascaded)
        detachFromInverses(model)
        return cascaded
    }

    /// Undoes what the delete rules of `model` did, for a model inserted again while its
    /// deletion is pending: what it cascaded to is inserted again too, and each is put
    /// back on the inverse side of its relationships. (An undo restores this from its
    /// own actions instead.)
    func restoreAfterPropagation(of model: any PersistentModel) {
        let cascaded = deletes.takeCascade(of: model)
        guard undoManager?.isUndoing != true else { return }
        for child in cascaded { insertGraph(from: [child]) }
        RelationshipGraph.linkInverses(of: model)
    }

    /// Marks every model of type `T` that matches `predicate` for deletion.
    public func delete<T: PersistentModel>(
        model: T.Type, where predicate: Predicate<T>? = nil, includeSubclasses: Bool = true
    ) throws {
        // A fetch of a class returns its subclasses' models too.
        for match in try fetch(FetchDescriptor<T>(predicate: predicate)) where includeSubclasses || type(of: match) == T.self {
            deleteModel(match)
        }
        scheduleAutosave()
    }

    /// Removes `model` from the inverse side of each of its relationships; with
    /// `sparingDeleted`, not from models deleted too (a save's deletes: both go, and
    /// taking each cascaded item out of its deleted trip's list one by one cost
    /// O(items²) per trip, a fifth of a cascade delete).
    func detachFromInverses(_ model: any PersistentModel, sparingDeleted: Bool = false) {
        let backing = model.modelBacking
        for (j, relationship) in backing.layout.relationships.enumerated() {
            guard relationship.inverse != nil, relationship.deleteRule != .noAction else { continue }
            // Stored references to deleted models only (an item of a trip whose delete
            // cascaded to it, pointing back at the trip) are not resolved to models
            // that would all be spared: about 2,000 instructions a deleted model (W6 delete).
            if sparingDeleted, let stored = backing.unresolvedReferences(j),
               referencesOnlyDeleted(stored, of: relationship) { continue }
            for related in backing.relatedModels(j) {
                // (A row the save deletes as a row is spared too: `DeletionClosure.rows`.)
                if sparingDeleted, related.modelBacking.isDeleted || deletes.contains(related.modelBacking.identifier) {
                    continue
                }
                if let inverse = relationship.inverseIndex(in: related.modelBacking.layout) {
                    RelationshipGraph.remove(model, from: inverse, of: related)
                }
            }
        }
    }

    /// Whether every row `stored` references (as `resolve(_:of:)` reads it) is of a
    /// model deleted since the last save: resolving them would find only those.
    private func referencesOnlyDeleted(_ stored: Value, of relationship: EntityLayout.RelationshipSlot) -> Bool {
        // (References that are not rows, a custom store's, are resolved.)
        guard container.rowReferences == nil else { return false }
        guard let entity = container.entityIndex(ofDestination: relationship) else { return true }
        switch stored {
        case let .reference(id): return deletes.members.contains(identifier(entity: entity, row: id))
        case let .references(ids): return ids.allSatisfy { deletes.members.contains(identifier(entity: entity, row: $0)) }
        default: return true
        }
    }
}
