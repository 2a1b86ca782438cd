import OpenSwiftDataStore

extension ModelContext {
    /// Points stored references to the old rows of reinserted models at the models.
    ///
    /// A saved model whose deletion is undone (or that is inserted again) comes back
    /// under a new identifier, since rows are never reused. Relationships with an
    /// inverse were detached by the delete and are restored by undo; but a model whose
    /// relationship has no inverse, or whose inverse's rule is `noAction`, still
    /// refers to the old row. Each such referrer gets the model in that relationship
    /// and is saved with the rest, so its stored reference names the new row. Runs
    /// inside `save()`, before the change set is built.
    ///
    /// The relinks register no undo of their own: they follow from the reinsertion,
    /// and undoing that deletes the model again, which leaves such references
    /// dangling as the first delete did. The save empties `changed.reinsertions` once its
    /// commit succeeds; a save that fails relinks again on the next attempt.
    /// - Complexity: O(rows of the entities that have a relationship to a reinserted
    ///   model's entity), at saves with reinsertions only.
    func relinkReinsertions() {
        // By engine entity: a relationship to a subclass names the subclass, its rows
        // are its hierarchy root's.
        var byEntity: [Int: [RowID: any PersistentModel]] = [:]
        for (old, model) in changed.reinsertions {
            let backing = model.modelBacking
            // Deleted again (or rolled back) before this save: nothing to point at.
            guard backing.context === self, isPendingInsert(backing.identifier),
                  let entity = container.entityIndex(named: old.entityName)
            else { continue }
            byEntity[entity, default: [:]][RowID(old.id.key)] = model
        }
        guard !byEntity.isEmpty else { return }
        undoManager?.disableUndoRegistration()
        defer { undoManager?.enableUndoRegistration() }
        let version = container.store.current
        for (entity, layout) in container.schema.layouts.enumerated() {
            for (j, relationship) in layout.relationships.enumerated() {
                guard let destination = container.entityIndex(named: relationship.destination),
                      let targets = byEntity[destination]
                else { continue }
                var referrers: [(RowID, [any PersistentModel])] = []
                version.tables[entity].forEach(slot: layout.attributes.count + j) { id, value in
                    let models = value.referencedRows.compactMap { targets[$0] }
                    if !models.isEmpty { referrers.append((id, models)) }
                }
                for (id, models) in referrers {
                    let referrer = materialize(layout, entity: entity, id: id, row: nil, in: version)
                    let backing = referrer.modelBacking
                    // A referrer whose relationship has an unsaved change keeps it.
                    guard !backing.isDeleted, !deletes.contains(backing.identifier),
                          !backing.dirty.contains(layout.attributes.count + j)
                    else { continue }
                    // Resolving skips the old row, which is gone; a referrer still
                    // holding the model object keeps it, and is marked changed all the same.
                    let current = backing.relatedModels(j)
                    let missing = models.filter { model in !current.contains { $0 === model } }
                    backing.setRelated(j, to: relationship.isToMany ? current + missing : [missing.first ?? current[0]])
                }
            }
        }
    }
}
