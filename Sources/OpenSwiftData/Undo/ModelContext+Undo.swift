import Foundation
import OpenSwiftDataStore

/// Undo and redo of a context's changes (issue #14, point 4).
///
/// With an `undoManager`, every change to a registered model registers its own
/// inverse at once: a property write registers a write of the old value (both
/// sides of a relationship register theirs, so each is restored as it was), an
/// insert registers a delete, a delete registers an insert. `undo()` runs a
/// group's inverses newest first; they register the redo as they run. Groups end
/// at `processPendingChanges()` and `save()` (there is no run loop event here),
/// or at `undo()`. Undoing works across saves: the undone state is a pending
/// change the next save (or autosave) writes. A saved model whose deletion is
/// undone is inserted again, as a new model with a new identifier.
extension ModelContext {
    /// OpenSwiftData: whether the context records undo, as SwiftUI's
    /// `modelContainer(…, isUndoEnabled:)` sets it. Setting it gives the context an
    /// `UndoManager` (keeping one already set), or removes it.
    public var isUndoEnabled: Bool {
        get { undoManager != nil }
        set { undoManager = newValue ? (undoManager ?? UndoManager()) : nil }
    }

    /// Called by backing data just before a property of one of its models changes.
    func willChange(_ backing: any ModelBacking, slot: Int) {
        guard let undoManager, let model = registry[backing.identifier] else { return }
        let layout = backing.layout
        if slot < layout.attributes.count {
            let old = backing.values[slot]
            undoManager.registerUndo(withTarget: self) { context in context.restore(model, attribute: slot, to: old) }
        } else {
            let j = slot - layout.attributes.count
            let old = backing.relatedModels(j)
            undoManager.registerUndo(withTarget: self) { context in
                context.restore(model, relationship: j, to: old, bothSides: false)
            }
        }
    }

    func registerUndoOfInsert(_ model: any PersistentModel) {
        guard let undoManager else { return }
        // The save that writes the insert tells this action whether it became an
        // upsert, and of which row.
        let insert = UndoState.PendingInsert(model)
        undoState.pendingInserts[ObjectIdentifier(model)] = insert
        undoManager.registerUndo(withTarget: self) { context in
            if let replaced = insert.replacedRow {
                // The insert became an upsert: it changed the row it took over, and
                // undoing it brings that row's values back.
                insert.replacedRow = nil
                context.restore(model, row: replaced)
            } else {
                context.deleteModel(model)
                // The delete's rules run now, so their actions join the redo of the
                // insert rather than a later save's undo group.
                context.propagateDelete(of: model)
            }
            context.scheduleAutosave()
        }
    }

    func registerUndoOfDelete(_ model: any PersistentModel) {
        // A deleted model leaves the context at the save: keep its relationships
        // resolved now, so inserting it again can link them back.
        let backing = model.modelBacking
        for j in backing.layout.relationships.indices { _ = backing.relatedModels(j) }
        undoRetained.append(model)
        undoManager?.registerUndo(withTarget: self) { context in
            context.insertGraph(from: [model])
            context.scheduleAutosave()
        }
    }

    /// Ends the undo group of the current event, when the manager opened one.
    func endUndoEvent() {
        #if !canImport(Darwin)
        undoManager?.endEventGroup()
        #endif
    }

    /// Writes each slot of `row` (a stored row of the model) that differs back:
    /// attributes through the model's setters, relationships as a user's assignment
    /// (both sides kept in step), each registering its own redo.
    private func restore(_ model: any PersistentModel, row: Row) {
        let backing = model.modelBacking
        let layout = backing.layout
        for (i, attribute) in layout.attributes.enumerated() where backing.values[i] != row[i] {
            restore(model, attribute: attribute, to: row[i])
        }
        for (j, relationship) in layout.relationships.enumerated() {
            let old = resolve(row[layout.attributes.count + j], of: relationship)
            let current = backing.relatedModels(j)
            guard old.count != current.count || zip(old, current).contains(where: { $0 !== $1 }) else { continue }
            restore(model, relationship: j, to: old, bothSides: true)
        }
    }

    /// Writes `value` back through the model's own setter, so observers see the change.
    private func restore(_ model: any PersistentModel, attribute i: Int, to value: Value) {
        restore(model, attribute: model.modelBacking.layout.attributes[i], to: value)
    }

    /// (The key path's root is the class that declares the property, which for an
    /// inherited one is a superclass of the model's.)
    private func restore(_ model: any PersistentModel, attribute: EntityLayout.AttributeSlot, to value: Value) {
        func write<Root>(_: Root.Type) {
            func typed<V>(_: V.Type) {
                guard let keyPath = attribute.keyPath as? ReferenceWritableKeyPath<Root, V>, let root = model as? Root else {
                    assertionFailure("\(attribute.name) of \(Swift.type(of: model)) has no writable key path of type \(V.self)")
                    return
                }
                root[keyPath: keyPath] = attribute.decode(value, as: V.self)
            }
            _openExistential(attribute.swiftType, do: typed)
        }
        _openExistential(Swift.type(of: attribute.keyPath).rootType, do: write)
    }

    /// Puts a relationship back as it was through the model's own setter, so
    /// observers see it. Unless `bothSides`, without inverse maintenance: each side of
    /// a relationship registered its own change and restores itself.
    private func restore(
        _ model: any PersistentModel, relationship j: Int, to models: [any PersistentModel], bothSides: Bool
    ) {
        let relationship = model.modelBacking.layout.relationships[j]
        func write<M: PersistentModel, Root>(_ model: M, _: Root.Type) {
            func assign<V>(_: V.Type) {
                guard let keyPath = relationship.keyPath as? ReferenceWritableKeyPath<Root, V>, let root = model as? Root,
                      models.count <= 1 || relationship.isToMany,
                      !models.isEmpty || relationship.isToMany || relationship.isOptional
                else {
                    // No setter can hold this state (a required relationship that was
                    // never set): restore the backing data.
                    if bothSides {
                        RelationshipGraph.set(j, of: model, to: models)
                    } else {
                        model.modelBacking.setRelated(j, to: models)
                    }
                    return
                }
                if !bothSides { undoState.restoringSide = .init(model: ObjectIdentifier(model), relationship: j) }
                defer { undoState.restoringSide = nil }
                root[keyPath: keyPath] = ModelBackingData<M>.relationshipValue(
                    models, as: V.self, isToMany: relationship.isToMany)
            }
            _openExistential(type(of: relationship.keyPath).valueType, do: assign)
        }
        func open<Root>(_ rootType: Root.Type) { write(model, rootType) }
        _openExistential(type(of: relationship.keyPath).rootType, do: open)
    }
}

/// What a context keeps for undo besides the manager's actions.
struct UndoState {
    /// One insert's undo action's link to the save that writes it.
    final class PendingInsert {
        weak var model: AnyObject?
        /// The row the insert's upsert replaced (`ChangeSet.keepsReplacedRows`):
        /// undoing the insert restores it rather than deleting the model.
        var replacedRow: Row?

        init(_ model: AnyObject) { self.model = model }
    }

    /// The relationship side undo is restoring through the model's setter, which then
    /// leaves the inverse side alone (each side restores itself).
    struct RestoringSide: Equatable {
        var model: ObjectIdentifier
        var relationship: Int
    }

    /// The undo actions of the inserts the next save writes, by model (the weak
    /// reference tells a reused address apart).
    var pendingInserts: [ObjectIdentifier: PendingInsert] = [:]
    var restoringSide: RestoringSide?
}
