import OpenSwiftDataStore

extension ModelContext {
    /// How many pending inserts accumulate between looks for ones to let go.
    static let spillBatch = 1_024

    /// Lets go the pending inserts nothing but the context holds (`PendingInserts`),
    /// once `spillBatch` new ones have come since the last look. The newest waits for
    /// the next look (it is often the caller's, still held).
    /// - Complexity: amortized O(1) per insert
    func spillUnheldInsertsIfDue() {
        let end = registry.pending.slotCount - 1
        guard end - registry.pending.spillMark >= Self.spillBatch else { return }
        spillUnheldInserts(upTo: end)
    }

    /// Lets go the pending inserts before slot `end` not looked at yet that nothing
    /// but the context holds, keeping their rows.
    ///
    /// Only what the row alone makes again: a model that holds related models, has
    /// state outside its backing data (`@Transient` properties) or relationship counts
    /// to check at the save stays a model, as do all of them while an undo manager
    /// (whose actions name models) or a custom store (which saves models) is in use.
    /// - Complexity: O(slots looked at)
    func spillUnheldInserts(upTo end: Int) {
        guard undoManager == nil, container.backend.takesRows else { return }
        let store = container.store
        // The entity of the model looked at last: an import inserts one type at a time.
        var lastLayout: EntityLayout?
        var lastEntity = 0
        registry.pending.spillUnheld(upTo: end) { model in
            let backing = model.modelBacking
            let layout = backing.layout
            guard backing.context === self, !backing.isDeleted, !layout.hasRelationshipCountRules else { return nil }
            // Its row as the save writes it is `values` when each relationship slot already
            // holds what its (empty or never read) models make (`row(of:)`, the general case).
            var values = backing.values
            let first = layout.attributes.count
            for (j, relationship) in layout.relationships.enumerated() {
                guard let related = backing.resolvedModels(j) else { continue }
                guard related.isEmpty else { return nil }
                let empty: Value = relationship.isToMany ? .references([]) : .null
                if values[first + j] != empty { values[first + j] = empty }
            }
            guard !layout.holdsStateOutsideBacking(model) else { return nil }
            if layout !== lastLayout {
                guard let entity = try? container.entityIndex(of: layout.modelType) else { return nil }
                lastLayout = layout
                lastEntity = entity
            }
            let entity = lastEntity
            let identifier = backing.identifier
            // (An identifier made under another layout, before a hierarchy's adopted the
            // model, stays with its model.)
            guard identifier.id.scope === layout.temporaryScope else { return nil }
            let kept = registry.pending.keep(values, of: entity) { store.schema.entities[entity] }
            let spilled = SpilledInsert(identifier: identifier, layout: layout, entity: entity, row: kept)
            // It ends when the registry lets go: leaving the context first, its end
            // looks nothing up.
            backing.context = nil
            return spilled
        }
    }
}
