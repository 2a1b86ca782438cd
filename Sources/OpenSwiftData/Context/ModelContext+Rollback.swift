extension ModelContext {
    /// Discards pending inserts and deletes, restores changed models to their
    /// last saved values, and empties the undo stack.
    public func rollback() {
        undoManager?.removeAllActions()
        var taken = registry.pending.take()
        while let insert = taken.next() { if case let .model(model) = insert { model.modelBacking.context = nil } }
        for id in changed.identifiers.union(deletes.members) {
            guard let backing = registry[id]?.modelBacking else { continue }
            if let committed = backing.committed { backing.values = committed }
            backing.dirty = []
            backing.isDeleted = false
            backing.forgetResolvedRelationships()
        }
        changed.removeAll()
        deletes.removeAll()
        undoState = UndoState()
        registry.releaseAll()
        autosaveScheduled = false
    }
}
