extension ModelContext {
    /// Registers `model` and every new model reachable from it through
    /// relationships, so the next save stores them.
    ///
    /// Inserting a model this context already has does nothing (or undoes a
    /// pending delete of it).
    public func insert<T: PersistentModel>(_ model: T) {
        // One root needs no array: an insert of one model allocates nothing for it.
        var work: [any PersistentModel] = []
        var next: (any PersistentModel)? = model
        while let model = next {
            insertOne(model, reaching: &work)
            next = work.popLast()
        }
        spillUnheldInsertsIfDue()
        scheduleAutosave()
    }

    /// Inserts every unregistered model reachable from `roots`.
    func insertGraph(from roots: [any PersistentModel]) {
        var work = roots
        while let model = work.popLast() { insertOne(model, reaching: &work) }
    }

    /// Inserts `model` unless it is registered already (or of another context), and
    /// adds the unregistered models its relationships hold to `work`.
    private func insertOne(_ model: any PersistentModel, reaching work: inout [any PersistentModel]) {
        let backing = model.modelBacking
        if backing.context === self {
            if deletes.remove(backing.identifier) {
                backing.isDeleted = false
                // Undoing this undelete deletes it again (the redo of an undone delete).
                registerUndoOfInsert(model)
                // The delete took it off the changed list; its changes stand.
                if !backing.dirty.isEmpty { changed.insert(backing.identifier) }
                restoreAfterPropagation(of: model)
            }
            return
        }
        // A model of another context stays there; SwiftData traps here, we skip it.
        guard backing.context == nil else { return }
        // Deleted since it was inserted, and inserted again before the save.
        let wasDeletedInsert = backing.isDeleted && backing.identifier.isTemporary
        // A saved model whose deletion is undone comes back as a new one; the save
        // points references to its old row at it (`relinkReinsertions()`).
        if !backing.identifier.isTemporary {
            changed.noteReinsertion(of: model, savedAs: backing.identifier)
            backing.prepareForReinsertion()
        }
        // A class of a hierarchy takes its hierarchy's slots, which the layout it
        // was made with (its own) lacks.
        // (Or a model of another container's hierarchy comes to one without.)
        if container.hasHierarchies || backing.layout.hierarchy != nil,
           let layout = container.layout(of: backing.layout.modelType) ?? .some(EntityLayout.of(backing.layout.modelType)),
           layout !== backing.layout {
            backing.adopt(layout)
        }
        backing.context = self
        // `let` properties live in the instance: their values join the row here.
        if !backing.layout.constants.isEmpty { backing.layout.fillConstants(of: model) }
        if !backing.layout.relationships.isEmpty { mayHoldResolvedRelationships = true }
        backing.isDeleted = false
        registry.register(model, as: backing.identifier, retained: true)
        if undoManager != nil { registerUndoOfInsert(model) }
        // Most inserted models hold no related model: then there are no inverses to link
        // and nothing to insert with them (a look at each relationship, where linking and
        // walking cost about 400 instructions per model of W1).
        let relationships = backing.layout.relationships.indices
        let holdsRelated = relationships.contains { !(backing.resolvedModels($0)?.isEmpty ?? true) }
        if holdsRelated { RelationshipGraph.linkInverses(of: model) }
        if wasDeletedInsert { restoreAfterPropagation(of: model) }
        guard holdsRelated || wasDeletedInsert else { return }
        // Another context's model may leave it (a rollback there, its end): then the
        // next save looks again, as it would have before.
        if forEachUnregisteredRelated(of: backing, { work.append($0) }) { mayReachUnregistered = true }
    }

    /// Calls `body` with each model `backing`'s relationships hold that is in no context;
    /// returns whether one of them is another context's.
    private func forEachUnregisteredRelated(of backing: any ModelBacking, _ body: (any PersistentModel) -> Void) -> Bool {
        var foreign = false
        for j in backing.layout.relationships.indices {
            for related in backing.resolvedModels(j) ?? [] {
                let relatedContext = related.modelBacking.context
                if relatedContext == nil {
                    body(related)
                } else if relatedContext !== self {
                    foreign = true
                }
            }
        }
        return foreign
    }

    /// Inserts the new models that pending changes made reachable, such as a new
    /// model appended to a saved model's to-many relationship, and applies the delete
    /// rules of pending deletes; a context with `autosaveEnabled` other than the main
    /// one then saves. Ends the undo group of the changes so far (`undoManager`).
    public func processPendingChanges() {
        insertReachableModels()
        propagatePendingDeletes()
        endUndoEvent()
        if autosaveEnabled, !isMainContext, hasChanges { try? save() }
    }

    /// The first half of `processPendingChanges()`, which `save()` runs: never the
    /// autosave, which would call `save()` again.
    func insertReachableModels() {
        var roots: [any PersistentModel] = []
        // Whether a model of another context was seen, which may still leave it.
        var foreign = false
        func collect(_ model: any PersistentModel) {
            if forEachUnregisteredRelated(of: model.modelBacking, { roots.append($0) }) { foreign = true }
        }
        if mayReachUnregistered {
            mayReachUnregistered = false
            registry.pending.forEachModel(collect)
            if foreign { mayReachUnregistered = true }
        }
        for id in changed { if let model = registry[id] { collect(model) } }
        if !roots.isEmpty { insertGraph(from: roots) }
    }
}
