import Foundation
import OpenSwiftDataStore

/// What a save deletes: the pending deletes and everything their `cascade` rules
/// reach.
struct DeletionClosure {
    var models: [any PersistentModel] = []
    /// Saved rows no model of the context stands for, reached by cascades, whose
    /// relationships with an inverse name only what the save deletes: they are
    /// deleted as rows. Making their models only to mark them deleted was most of a
    /// cascade delete (10,000 trips made their 25,000 items).
    var rows: [PersistentIdentifier] = []

    /// Whether the save deletes something stored.
    var deletesSavedModels: Bool {
        !rows.isEmpty || models.contains { !$0.modelBacking.identifier.isTemporary }
    }
}

extension ModelContext {
    /// The pending deletes plus everything they cascade to, or a thrown error if a
    /// `deny` rule forbids them. Changes nothing.
    ///
    /// A cascade reaching stored rows of no registered model takes them as rows
    /// (`DeletionClosure.rows`) when that changes nothing else a model would: no
    /// undo manager records their models, no custom store resolves references, no
    /// class hierarchy shares their table, and every relationship of theirs that has
    /// an inverse (and a rule other than `noAction`) or a `deny` rule names only what
    /// the save deletes; and no deleted model was inserted again (whose referrers the
    /// save points at its new row). Otherwise every model is made, as the delete rules
    /// expect. A model made later for such a row (a relationship resolved, `model(for:)`)
    /// is deleted as it is made (`makeModel`).
    func deletionClosure() throws -> DeletionClosure {
        if undoManager == nil, container.backend.takesRows, !container.hasHierarchies, !changed.hasReinsertions,
           let closure = try closureTakingRows() {
            return closure
        }
        return DeletionClosure(models: try closureOfModels(), rows: [])
    }

    /// The closure with rows no model stands for taken as rows; nil when one of
    /// them has a relationship that needs its model (see `deletionClosure()`).
    private func closureTakingRows() throws -> DeletionClosure? {
        var closure = DeletionClosure()
        var seen: Set<ObjectIdentifier> = []
        // Identifiers of everything deleted: pending deletes, models and rows reached.
        var doomed = deletes.members
        var rows: [(entity: Int, id: RowID)] = []
        var work = deletes.models(in: registry)
        for model in work { seen.insert(ObjectIdentifier(model)) }
        let version = container.store.current

        /// Takes the rows `stored` references in `entity`: a registered model's as the
        /// model, another row as a row.
        func reach(_ stored: Value, in entity: Int) {
            func row(_ id: RowID) {
                let identifier = identifier(entity: entity, row: id)
                if let model = registry[identifier] {
                    if seen.insert(ObjectIdentifier(model)).inserted { work.append(model) }
                } else if version.tables[entity].contains(id), doomed.insert(identifier).inserted {
                    rows.append((entity, id))
                }
            }
            switch stored {
            case let .reference(id): row(id)
            case let .references(ids): for id in ids { row(id) }
            default: break
            }
        }

        while true {
            if let model = work.popLast() {
                closure.models.append(model)
                let backing = model.modelBacking
                doomed.insert(backing.identifier)
                for (j, relationship) in backing.layout.relationships.enumerated() where relationship.deleteRule == .cascade {
                    if let stored = backing.unresolvedReferences(j), let entity = container.entityIndex(ofDestination: relationship) {
                        reach(stored, in: entity)
                    } else {
                        for related in backing.relatedModels(j) where seen.insert(ObjectIdentifier(related)).inserted {
                            work.append(related)
                        }
                    }
                }
            } else if let (entity, id) = rows.popLast() {
                closure.rows.append(identifier(entity: entity, row: id))
                let layout = container.layout(at: entity)
                for (k, relationship) in layout.relationships.enumerated() where relationship.deleteRule == .cascade {
                    guard let stored = version.tables[entity].value(id, slot: layout.attributes.count + k),
                          let destination = container.entityIndex(ofDestination: relationship)
                    else { continue }
                    reach(stored, in: destination)
                }
            } else {
                break
            }
        }

        // Each row's relationships that its model's deletion would walk name only
        // what the save deletes: then walking them would change nothing.
        for identifier in closure.rows {
            guard let entity = container.entityIndex(of: identifier) else { return nil }
            let layout = container.layout(at: entity), id = RowID(identifier.id.key)
            for (k, relationship) in layout.relationships.enumerated()
            where relationship.deleteRule == .deny || relationship.inverse != nil && relationship.deleteRule != .noAction {
                guard let stored = version.tables[entity].value(id, slot: layout.attributes.count + k),
                      let destination = container.entityIndex(ofDestination: relationship)
                else { continue }
                switch stored {
                case let .reference(other):
                    guard doomed.contains(self.identifier(entity: destination, row: other)) else { return nil }
                case let .references(others):
                    for other in others where !doomed.contains(self.identifier(entity: destination, row: other)) { return nil }
                default:
                    break
                }
            }
        }
        try checkDenyRules(of: closure.models) { doomed.contains($0.modelBacking.identifier) || seen.contains(ObjectIdentifier($0)) }
        return closure
    }

    /// The closure as models only.
    private func closureOfModels() throws -> [any PersistentModel] {
        var closure: [any PersistentModel] = []
        var seen: Set<ObjectIdentifier> = []
        // Models inserted since the last save and deleted since: their cascades reach
        // saved models, which `deny` may protect.
        var work = deletes.models(in: registry)
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
        try checkDenyRules(of: closure) { seen.contains(ObjectIdentifier($0)) }
        return closure
    }

    /// Throws when a `deny` relationship of a model of `closure` names a model that
    /// `isDoomed` says the save does not delete.
    private func checkDenyRules(of closure: [any PersistentModel], isDoomed: (any PersistentModel) -> Bool) throws {
        for model in closure {
            let backing = model.modelBacking
            for (j, relationship) in backing.layout.relationships.enumerated() where relationship.deleteRule == .deny {
                let remaining = backing.relatedModels(j).filter { !isDoomed($0) }
                if !remaining.isEmpty {
                    throw SwiftDataError(
                        .modelValidationFailure,
                        "cannot delete \(backing.identifier): its relationship '\(relationship.name)' (delete rule deny) still refers to \(remaining.count) model(s)")
                }
            }
        }
    }
}
