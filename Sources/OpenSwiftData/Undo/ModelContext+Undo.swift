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
                // Each side of the relationship registered its own change: restore
                // this side alone, without touching inverses.
                model.modelBacking.setRelated(j, to: old)
            }
        }
    }

    func registerUndoOfInsert(_ model: any PersistentModel) {
        undoManager?.registerUndo(withTarget: self) { context in
            context.deleteModel(model)
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

    /// Writes `value` back through the model's own setter, so observers see the change.
    private func restore(_ model: any PersistentModel, attribute i: Int, to value: Value) {
        restore(model, attribute: model.modelBacking.layout.attributes[i], to: value)
    }

    private func restore<M: PersistentModel>(_ model: M, attribute: EntityLayout.AttributeSlot, to value: Value) {
        func write<V>(_: V.Type) {
            guard let keyPath = attribute.keyPath as? ReferenceWritableKeyPath<M, V> else {
                assertionFailure("\(attribute.name) of \(M.self) has no writable key path of type \(V.self)")
                return
            }
            model[keyPath: keyPath] = attribute.decode(value, as: V.self)
        }
        _openExistential(attribute.swiftType, do: write)
    }
}
