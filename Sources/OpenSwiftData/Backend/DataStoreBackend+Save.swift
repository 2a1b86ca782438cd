import Foundation
import OpenSwiftDataStore

extension DataStoreBackend {
    // MARK: Saving

    /// The end of `ModelContext.save()` over the store: one save request with snapshots of
    /// the inserted, changed and deleted models; inserted models then take the
    /// permanent identifiers the store chose, and every saved model's values become
    /// its committed ones.
    func save(_ context: ModelContext) throws {
        let registry = context.registry
        let insertedModels = registry.pending.all
        // (A model whose only changes are `.ephemeral` values has nothing to write, as
        // over the built-in store.)
        let changedModels = context.changed.sorted().compactMap { registry[$0] }.filter { !$0.modelBacking.dirty.isEmpty }
        let deletedIDs = context.deletes.identifiers
        let deletedModels = deletedIDs.filter { !$0.isTemporary }.compactMap { registry[$0] }
        let outcome = try store.save(
            inserted: insertedModels, updated: changedModels, deleted: deletedModels, editingState: context.editingState,
            conflictPolicy: context.conflictPolicy,
            changedProperties: Dictionary(uniqueKeysWithValues: changedModels.map { ($0.modelBacking.identifier, context.changedPropertyNames(of: $0)) }),
            readSnapshots: context.readSnapshots(of: context.conflictPolicy == .failOnConflict ? changedModels + deletedModels : changedModels))
        // Every insert needs its permanent identifier; without one the context keeps its
        // changes (the store saved them, so saving again may insert them twice).
        for model in insertedModels where outcome.remapped[model.modelBacking.identifier]?.isTemporary ?? true {
            throw SwiftDataError(
                .modelValidationFailure,
                "the store gave no permanent identifier to \(model.modelBacking.identifier): a DataStore's save must remap every insert")
        }
        var insertedIDs: [PersistentIdentifier] = []
        var upsertedIDs: [PersistentIdentifier] = []
        for model in insertedModels {
            let backing = model.modelBacking
            let temporary = backing.identifier
            let permanent = outcome.remapped[temporary]!
            registry.remove(temporary)
            if let displaced = registry[permanent], displaced !== model {
                // The store upserted onto a model this context has: the inserted instance
                // wins, as over the built-in store, and related models point at it.
                context.redirectInverses(from: displaced, to: model)
                displaced.modelBacking.context = nil
                registry.remove(permanent)
                upsertedIDs.append(permanent)
            } else if outcome.upserted.contains(temporary) {
                // An upsert onto a row no model of this context stood for.
                upsertedIDs.append(permanent)
            } else {
                insertedIDs.append(permanent)
            }
            backing.identifier = permanent
            registry.register(model, as: permanent, retained: false)
        }
        // Now that every saved model has its permanent identifier, the relationships
        // can be held as references to them.
        for model in insertedModels + changedModels {
            let backing = model.modelBacking
            let row = context.row(of: backing)
            backing.values = row
            backing.committed = row
            backing.dirty = []
        }
        for (id, snapshot) in outcome.reregister {
            let current = outcome.remapped[id] ?? id
            guard registry[current] != nil else { continue }
            _ = try? materialize(snapshot.copy(persistentIdentifier: current), in: context, replacingChanges: true)
        }
        for id in deletedIDs {
            registry.remove(id)?.modelBacking.context = nil
        }
        let updatedIDs = changedModels.map { $0.modelBacking.identifier } + upsertedIDs
        context.endPendingState()
        context.storeSnapshots = [:]
        context.didSave(.init(insertedIdentifiers: insertedIDs, updatedIdentifiers: updatedIDs, deletedIdentifiers: deletedIDs))
    }
}
