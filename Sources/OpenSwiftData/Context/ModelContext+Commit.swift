import Foundation
import OpenSwiftDataStore

extension ModelContext {
    /// The end of `save()` over the engine (`EngineBackend`): the pending inserts,
    /// changes and deletes as one `ChangeSet` (`makeChangeSet()`), committed to
    /// `store`; then the context adopts the result (`adopt(_:of:in:)`).
    func commit(to store: Store) throws {
        if changed.hasReinsertions { relinkReinsertions() }
        let sent = try makeChangeSet()
        let result: CommitResult
        do {
            result = try store.commit(sent.changes)
        } catch let .conflict(changed, deleted) {
            throw saveConflict(changed: changed, deleted: deleted)
        } catch {
            throw error.apiError
        }
        adopt(result, of: sent, in: result.version ?? store.current)
    }

    /// A save's change set, and what adopting its result needs of how it was made.
    struct SentChanges {
        var changes: ChangeSet
        /// Entities with a pending insert kept as a model: their kept rows went as rows.
        var modelEntities: Set<Int>
        /// The changed models written, with their entities.
        var changedModels: [(Int, any PersistentModel)]
        /// The to-many lists of changed models as this context had them: where the
        /// stored list came out otherwise (another context's changes merged in), the
        /// model's resolved relationships go, and it reads the stored ones.
        var sentLists: [PersistentIdentifier: [Int: Value]]
        /// The pending deletes, saved models' and unsaved ones'.
        var deletedIDs: [PersistentIdentifier]
    }

    /// The pending inserts, changes and deletes as one `ChangeSet`. Changes nothing
    /// but the pending inserts' form (unheld ones are kept as rows).
    private func makeChangeSet() throws -> SentChanges {
        // A save with inserts kept as rows keeps the last ones the app let go since the
        // last look too: then every insert of their entity usually is, and the store
        // takes their columns whole.
        let spills = registry.pending.hasKeptRows
        if spills { spillUnheldInserts(upTo: registry.pending.slotCount) }
        // Entities with a pending insert kept as a model: their kept rows go as rows too,
        // so the inserts of an entity are stored in the order they were made.
        var modelEntities = Set<Int>()
        var rowInserts = registry.pendingCount
        if spills {
            rowInserts = 0
            try registry.pending.forEachModel { model in
                modelEntities.insert(try container.entityIndex(of: model.modelBacking.layout.modelType))
                rowInserts += 1
            }
            for entity in modelEntities { rowInserts += registry.pending.keptRows[entity]?.count ?? 0 }
        }

        var changes = ChangeSet()
        changes.author = author
        changes.keepsReplacedRows = undoManager != nil
        // Sized up front, and the inserted models kept once (their entities are the
        // change set's): at the peak of a large save, lists grown by doubling held
        // about 100 bytes per insert beyond what they need.
        changes.inserts.reserveCapacity(rowInserts)
        var columnIDs: [Int: EntityRows] = [:]
        // In insertion order, without a registry look-up each (see `PendingInserts`).
        try registry.pending.forEach { model in
            let backing = model.modelBacking
            let entity = try container.entityIndex(of: backing.layout.modelType)
            changes.inserts.append(.init(entity: entity, temporaryID: RowID(backing.identifier.id.key), row: row(of: backing)))
        } kept: { spilled in
            let temporaryID = spilled.temporaryRow
            if modelEntities.contains(spilled.entity) {
                guard let row = registry.pending.row(of: spilled) else { preconditionFailure("a kept insert lost its row") }
                changes.inserts.append(.init(entity: spilled.entity, temporaryID: temporaryID, row: row))
            } else {
                columnIDs[spilled.entity, default: EntityRows()].append(EntityRow(entity: spilled.entity, id: temporaryID))
            }
        }
        for (entity, ids) in columnIDs.sorted(by: { $0.key < $1.key }) {
            // (The registry's copy shares the table's buffers, and goes after the commit.)
            guard let table = registry.pending.keptRows[entity] else { preconditionFailure("kept inserts without their table") }
            changes.columnInserts.append(.init(entity: entity, table: table, temporaryRows: ids))
        }
        var changedModels: [(Int, any PersistentModel)] = []
        // The to-many lists of changed models as this context has them: where the
        // stored list came out otherwise (another context's changes merged in), the
        // model's resolved relationships go, and it reads the stored ones.
        var sentLists: [PersistentIdentifier: [Int: Value]] = [:]
        for id in changed.sorted() {
            guard let model = registry[id] else { continue }
            let backing = model.modelBacking
            // Only ephemeral values changed: nothing to write.
            if backing.dirty.isEmpty { continue }
            let entity = try container.entityIndex(of: backing.layout.modelType)
            let full = row(of: backing)
            var values: [Int: Value] = [:]
            var lists: [Int: ChangeSet.ListChange] = [:]
            let layout = backing.layout, committed = backing.committed
            for slot in backing.dirty {
                // A to-many goes as what this context added and removed, merged into the
                // stored list: another context's additions since stay.
                if let committed, slot >= layout.attributes.count, layout.relationships[slot - layout.attributes.count].isToMany {
                    lists[slot] = ChangeSet.ListChange(from: committed[slot], to: full[slot])
                    sentLists[id, default: [:]][slot] = full[slot]
                } else {
                    values[slot] = full[slot]
                }
            }
            changes.updates.append(.init(entity: entity, id: RowID(id.id.key), values: values, listChanges: lists))
            changedModels.append((entity, model))
        }
        var deletedIDs: [PersistentIdentifier] = []
        for id in deletes.identifiers {
            guard let entity = container.entityIndex(of: id) else { continue }
            if !id.isTemporary { changes.deletes.append(.init(entity: entity, id: RowID(id.id.key))) }
            deletedIDs.append(id)
        }

        if conflictPolicy == .failOnConflict {
            changes.expectations = try conflictExpectations(changed: changedModels, deleted: deletedIDs)
        }
        return SentChanges(
            changes: changes, modelEntities: modelEntities, changedModels: changedModels, sentLists: sentLists,
            deletedIDs: deletedIDs)
    }

    /// Gives the context the state `result` left in `version`: inserted models take
    /// their permanent identifiers (or end, when nothing else holds them), upserts
    /// redirect, every saved model reads its stored row when next used, the pending
    /// state ends and `didSave` is posted.
    private func adopt(_ result: CommitResult, of sent: SentChanges, in version: StoreVersion) {
        let changes = sent.changes, modelEntities = sent.modelEntities, sentLists = sent.sentLists
        let changedModels = sent.changedModels, deletedIDs = sent.deletedIDs
        // `taken` holds them from here, in insertion order: its models and the kept
        // rows of `modelEntities` in the order of `changes.inserts`, the other kept rows
        // in their entity's column insert. Models something else holds come back under
        // permanent ids.
        let insertCount = registry.pendingCount
        var taken = registry.pending.take()
        // Room for the models that are registered again is made when the first one
        // comes: a save whose inserted models all end here (nothing else holds them)
        // grows no table, where one sized for every insert was about 100 bytes per
        // insert at the peak of a large save.
        var reserved = false
        var insertedIDs: [PersistentIdentifier] = []
        insertedIDs.reserveCapacity(insertCount)
        var updatedIDs: [PersistentIdentifier] = []
        var inserts = changes.inserts.makeIterator()
        takenLoop: while true {
            // (`taken` holds the model no more, nor does a binding of what it handed over
            // outlive the switch: whether it is held elsewhere is asked below.)
            var model: any PersistentModel
            switch taken.next() {
            case nil:
                break takenLoop
            case let .kept(spilled)?:
                // No model to give its permanent identifier (nothing held it).
                if modelEntities.contains(spilled.entity), inserts.next() == nil {
                    preconditionFailure("a pending insert was registered while its save committed")
                }
                let temporary = EntityRow(entity: spilled.entity, id: spilled.temporaryRow)
                guard let rowID = result.assigned[temporary] else { continue }
                let permanent = identifier(entity: spilled.entity, row: rowID)
                if result.upserted.contains(temporary) {
                    // A model of the row it took over reads the row anew (one with changes
                    // of its own is brought to the row below, with the other changed models).
                    if !changed.contains(permanent), let displaced = registry[permanent] {
                        displaced.modelBacking.refault(
                            from: version.tables[spilled.entity], generation: result.generation, keepingRelationships: true)
                    }
                    updatedIDs.append(permanent)
                } else {
                    insertedIDs.append(permanent)
                }
                continue
            case let .model(pendingModel)?:
                model = pendingModel
            }
            guard let insert = inserts.next() else {
                preconditionFailure("a pending insert was registered while its save committed")
            }
            let entity = insert.entity
            let backing = model.modelBacking
            let temporary = EntityRow(entity: entity, id: RowID(backing.identifier.id.key))
            guard let rowID = result.assigned[temporary] else {
                // (Not stored: it stays registered as it was, as releaseAll would leave it.)
                registry.register(model, as: backing.identifier, retained: false)
                continue
            }
            let permanent = identifier(entity: entity, row: rowID)
            // (A new row's identifier is new to the context: only an upsert can land
            // on a row a registered model stands for.)
            let upserted = result.upserted.contains(temporary)
            if !upserted, isKnownUniquelyReferenced(&model) {
                // Nothing but this save holds the model (not the app, a related model or
                // undo): it ends here, so it is not registered again, and leaves the
                // context first so its end looks nothing up. At a million inserts that
                // spares two random accesses into a table of a million entries per model.
                backing.context = nil
                if !undoState.pendingInserts.isEmpty { undoState.pendingInserts[ObjectIdentifier(model)] = nil }
                insertedIDs.append(permanent)
                continue
            }
            if upserted, let displaced = registry[permanent], displaced !== model {
                // Upsert onto a row this context already had: the inserted instance wins,
                // and related models that pointed at the displaced one point at it instead.
                redirectInverses(from: displaced, to: model)
                displaced.modelBacking.context = nil
            }
            backing.identifier = permanent
            if !reserved {
                reserved = true
                registry.reserveUnretained(taken.remaining + 1)
            }
            registry.register(model, as: permanent, retained: false)
            // The store's row is the truth now (an upsert merged relationships the new
            // model left empty): the model reads it when next used.
            if !undoState.pendingInserts.isEmpty,
               let undo = undoState.pendingInserts.removeValue(forKey: ObjectIdentifier(model)), undo.model === model {
                // Undoing this insert restores the row it took over (`ModelContext+Undo`).
                undo.replacedRow = upserted ? result.replacedRows[temporary] : nil
            }
            backing.refault(from: version.tables[entity], generation: result.generation, keepingRelationships: !upserted)
            if upserted {
                updatedIDs.append(permanent)
            } else {
                insertedIDs.append(permanent)
            }
        }
        precondition(inserts.next() == nil, "a save stored more inserts than it had pending")
        for (entity, model) in changedModels {
            let backing = model.modelBacking
            let rowID = RowID(backing.identifier.id.key)
            if version.tables[entity].contains(rowID) {
                let merged = sentLists[backing.identifier]?.contains {
                    Self.listMerged(stored: version.tables[entity].value(rowID, slot: $0.key), sent: $0.value)
                } ?? false
                backing.refault(from: version.tables[entity], generation: result.generation, keepingRelationships: !merged)
            } else {
                // Another context deleted the row meanwhile, and the delete won: the model
                // keeps the values it has rather than reading a row that is gone.
                backing.dirty = []
                backing.generation = result.generation
            }
            updatedIDs.append(backing.identifier)
        }
        for id in deletedIDs {
            registry.remove(id)?.modelBacking.context = nil
        }
        endPendingState()

        didSave(
            SavedChanges(insertedIdentifiers: insertedIDs, updatedIdentifiers: updatedIDs, deletedIdentifiers: deletedIDs),
            generation: result.generation)
    }
}
