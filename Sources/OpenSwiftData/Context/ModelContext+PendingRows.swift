import OpenSwiftDataStore

extension ModelContext {
    /// The backing data's values with relationship slots holding row references
    /// (temporary ones for unsaved models): the row a save would write.
    ///
    /// With `keepingDeleted`, references to models deleted since the last save stay:
    /// until their delete rules run, the models still show them.
    func row(of backing: any ModelBacking, keepingDeleted: Bool = false) -> Row {
        var row = backing.values
        let layout = backing.layout
        for (j, relationship) in layout.relationships.enumerated() {
            guard let models = backing.resolvedModels(j) else { continue }
            let ids = models.compactMap { rowReference($0, keepingDeleted: keepingDeleted) }
            let value: Value = relationship.isToMany ? .references(ids) : ids.first.map(Value.reference) ?? .null
            // Written only when it differs: the row then stays the backing's own
            // buffer (shared, not copied), which for a save of many models is most of them.
            if row[layout.attributes.count + j] != value { row[layout.attributes.count + j] = value }
        }
        return row
    }

    /// The reference a row holds to `model`: its row, or over a custom store the
    /// reference standing for its identifier (`ExternalReferences`).
    func rowReference(_ model: any PersistentModel, keepingDeleted: Bool = false) -> RowID? {
        let backing = model.modelBacking
        guard backing.context === self, keepingDeleted || !backing.isDeleted else { return nil }
        if let references = container.rowReferences { return references.reference(for: backing.identifier) }
        return RowID(backing.identifier.id.key)
    }

    /// The context's unsaved state as rows over the store: changed and inserted
    /// models' current rows. A predicate that follows relationships reads related
    /// rows through it, so it sees what the models show. Deleted models stay
    /// visible, as they do on the models, until their delete rules run
    /// (`propagatePendingDeletes()`).
    /// - Complexity: O(pending models)
    func pendingRows() -> [EntityRow: Row?] {
        var overlay: [EntityRow: Row?] = [:]
        func add(_ model: any PersistentModel) {
            let backing = model.modelBacking
            let id = backing.identifier
            guard let entity = container.entityIndex(of: id) else { return }
            overlay[EntityRow(entity: entity, id: RowID(id.id.key))] = .some(row(of: backing, keepingDeleted: true))
        }
        for id in changed { if let model = registry[id] { add(model) } }
        registry.pending.forEach(add) { spilled in
            guard let row = registry.pending.row(of: spilled) else { return }
            overlay[EntityRow(entity: spilled.entity, id: spilled.temporaryRow)] = .some(row)
        }
        return overlay
    }
}
