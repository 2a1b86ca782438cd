extension ModelContext {
    /// Discards pending inserts and deletes and restores changed models to their
    /// last saved values.
    public func rollback() {
        for id in inserted {
            guard let model = registry.remove(id) else { continue }
            model.modelBacking.context = nil
        }
        for id in changed.union(deletedSet) {
            guard let backing = registry[id]?.modelBacking else { continue }
            if let committed = backing.committed { backing.values = committed }
            backing.dirty = []
            backing.isDeleted = false
            backing.forgetResolvedRelationships()
        }
        inserted = []
        changed = []
        deleted = []
        deletedSet = []
        registry.releaseAll()
        autosaveScheduled = false
    }
}
