import Foundation

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
        let id = backing.identifier
        if undoManager != nil, isPendingInsert(id) || !deletedSet.contains(id) { registerUndoOfDelete(model) }
        if isPendingInsert(id) {
            inserted.removeAll { $0 == id }
            registry.remove(id)
            detachFromInverses(model)
            backing.isDeleted = true
            backing.context = nil
            deletedInserts.append(model)
            return
        }
        if deletedSet.insert(id).inserted {
            deleted.append(id)
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
    /// same undo group, or, for the delete an undone insert makes, on the redo stack.
    /// - Complexity: O(relationships of the deleted models and of what they cascade to)
    func propagatePendingDeletes() {
        // A cascade may delete saved models and models inserted since: loop until
        // neither list has any left.
        while propagatedDeletes < deleted.count || !deletedInserts.isEmpty {
            while propagatedDeletes < deleted.count {
                let id = deleted[propagatedDeletes]
                propagatedDeletes += 1
                if let model = registry[id] { propagate(model) }
            }
            while let model = deletedInserts.popLast() {
                // Inserted again since: nothing to propagate.
                if model.modelBacking.isDeleted { propagate(model) }
            }
        }
    }

    private func propagate(_ model: any PersistentModel) {
        let backing = model.modelBacking
        for (j, relationship) in backing.layout.relationships.enumerated() where relationship.deleteRule == .cascade {
            for related in backing.relatedModels(j) { deleteModel(related) }
        }
        detachFromInverses(model)
    }

    /// Takes a pending delete back (the model is inserted again).
    func undelete(_ id: PersistentIdentifier) {
        guard deletedSet.remove(id) != nil, let i = deleted.firstIndex(of: id) else { return }
        deleted.remove(at: i)
        if i < propagatedDeletes { propagatedDeletes -= 1 }
    }

    /// Marks every model of type `T` that matches `predicate` for deletion.
    public func delete<T: PersistentModel>(
        model: T.Type, where predicate: Predicate<T>? = nil, includeSubclasses: Bool = true
    ) throws {
        for match in try fetch(FetchDescriptor<T>(predicate: predicate)) { deleteModel(match) }
        scheduleAutosave()
    }

    /// Removes `model` from the inverse side of each of its relationships.
    func detachFromInverses(_ model: any PersistentModel) {
        let backing = model.modelBacking
        for (j, relationship) in backing.layout.relationships.enumerated() {
            guard let inverse = relationship.inverse, relationship.deleteRule != .noAction else { continue }
            for related in backing.relatedModels(j) { RelationshipGraph.remove(model, from: inverse, of: related) }
        }
    }

    /// The pending deletes plus everything they cascade to, or a thrown error if a
    /// `deny` rule forbids them. Changes nothing.
    func deletionClosure() throws -> [any PersistentModel] {
        var closure: [any PersistentModel] = []
        var seen: Set<ObjectIdentifier> = []
        var work = deleted.compactMap { registry[$0] }
        for model in work { seen.insert(ObjectIdentifier(model)) }
        while let model = work.popLast() {
            closure.append(model)
            let backing = model.modelBacking
            for (j, relationship) in backing.layout.relationships.enumerated() where relationship.deleteRule == .cascade {
                for related in backing.relatedModels(j) where seen.insert(ObjectIdentifier(related)).inserted {
                    work.append(related)
                }
            }
        }
        for model in closure {
            let backing = model.modelBacking
            for (j, relationship) in backing.layout.relationships.enumerated() where relationship.deleteRule == .deny {
                let remaining = backing.relatedModels(j).filter { !seen.contains(ObjectIdentifier($0)) }
                if !remaining.isEmpty {
                    throw SwiftDataError(
                        .modelValidationFailure,
                        "cannot delete \(backing.identifier): its relationship '\(relationship.name)' (delete rule deny) still refers to \(remaining.count) model(s)")
                }
            }
        }
        return closure
    }
}
