import Foundation
import OpenSwiftDataStore

extension ModelContext {
    /// What a save does about models that another context, actor or process saved
    /// after this context read them (`ModelContext.conflictPolicy`).
    ///
    /// SwiftData's documentation says nothing on the matter; `mergeByProperty` is
    /// what a SwiftData context does on Apple platforms (Core Data's merge by
    /// property, the saving context's changes trumping), and `failOnConflict` is
    /// optimistic concurrency, Core Data's error merge policy. Both the embedded store
    /// and `PostgresStore` keep both (Docs/Decisions.md, "One concurrency contract").
    public enum ConflictPolicy: Sendable, Hashable {
        /// The default. A save writes the properties this context changed and
        /// nothing else: another writer's changes to the other properties stay, and
        /// for a property both changed the last save wins. A change to a model that
        /// another writer deleted is dropped (the delete wins), and the save succeeds.
        case mergeByProperty
        /// Optimistic concurrency. A save whose changed or deleted models were saved
        /// (any property, relationships included) or deleted by another writer since
        /// this context read them throws `SaveConflictError` and writes nothing; the
        /// context keeps its changes. Call `rollback()`, fetch again and repeat the
        /// change. (Deleting a model another writer deleted already is no conflict.)
        case failOnConflict
    }
}

/// A save under `ModelContext.ConflictPolicy.failOnConflict` found models that
/// another writer changed or deleted since the context read them: nothing was saved,
/// and the context keeps its unsaved changes.
public struct SaveConflictError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Models another writer saved since the context read them.
    public let changed: [PersistentIdentifier]
    /// Models the context changed that another writer deleted since.
    public let deleted: [PersistentIdentifier]

    /// OpenSwiftData: public, so a custom `DataStore` can throw it.
    public init(changed: [PersistentIdentifier] = [], deleted: [PersistentIdentifier] = []) {
        self.changed = changed
        self.deleted = deleted
    }

    /// The identifiers of the changed and the deleted models that conflicted.
    public var description: String {
        var parts: [String] = []
        if !changed.isEmpty { parts.append("changed: " + changed.map { "\($0)" }.joined(separator: ", ")) }
        if !deleted.isEmpty { parts.append("deleted: " + deleted.map { "\($0)" }.joined(separator: ", ")) }
        return "SaveConflictError: saved by another writer since this context read them (\(parts.joined(separator: "; ")))"
    }
}

extension ModelContext {
    /// The rows a `failOnConflict` save expects as this context read them: each
    /// changed model's and each deleted model's committed row.
    /// - Complexity: O((changed + deleted models) × slots)
    func conflictExpectations(
        changed changedModels: [(Int, any PersistentModel)], deleted deletedIDs: [PersistentIdentifier]
    ) throws -> [ChangeSet.Expectation] {
        var expectations: [ChangeSet.Expectation] = []
        for (entity, model) in changedModels {
            let backing = model.modelBacking
            guard let row = backing.committed else { continue }
            expectations.append(.init(entity: entity, id: RowID(backing.identifier.id.key), row: row, goneIsConflict: true))
        }
        for id in deletedIDs where !id.isTemporary {
            // (A row a delete rule reached without a model was read as the save began.)
            guard let model = registry[id], let entity = container.entityIndex(of: id),
                  let row = model.modelBacking.committed else { continue }
            expectations.append(.init(entity: entity, id: RowID(id.id.key), row: row, goneIsConflict: false))
        }
        return expectations
    }

    /// The error a commit's conflict gives the app: the rows as identifiers.
    func saveConflict(changed: [EntityRow], deleted: [EntityRow]) -> SaveConflictError {
        SaveConflictError(
            changed: changed.map { identifier(entity: $0.entity, row: $0.id) },
            deleted: deleted.map { identifier(entity: $0.entity, row: $0.id) })
    }

    /// The models as this context last read or saved them (their committed rows), for
    /// a custom store's `failOnConflict` check (`DataStoreSaveChangesRequest.readSnapshots`).
    /// - Complexity: O(models × properties)
    func readSnapshots(of models: [any PersistentModel]) -> [PersistentIdentifier: DefaultSnapshot] {
        var snapshots: [PersistentIdentifier: DefaultSnapshot] = [:]
        for model in models {
            let backing = model.modelBacking
            guard let row = backing.committed, !backing.identifier.isTemporary else { continue }
            let layout = backing.layout
            var entries: [String: DefaultSnapshot.Entry] = [:]
            for (i, attribute) in layout.attributes.enumerated() { entries[attribute.name] = .value(row[i]) }
            for (j, relationship) in layout.relationships.enumerated() {
                let ids = storedIdentifiers(row[layout.attributes.count + j], of: relationship)
                entries[relationship.name] = relationship.isToMany ? .toMany(ids) : .toOne(ids.first)
            }
            snapshots[backing.identifier] = DefaultSnapshot(persistentIdentifier: backing.identifier, entries: entries)
        }
        return snapshots
    }

    /// The names of the properties a saved model changed since its last save, which a
    /// custom store merging by property writes (`DataStoreSaveChangesRequest.changedProperties`).
    func changedPropertyNames(of model: any PersistentModel) -> Set<String> {
        let backing = model.modelBacking
        let layout = backing.layout
        var names: Set<String> = []
        for slot in backing.dirty {
            if slot < layout.attributes.count {
                names.insert(layout.attributes[slot].name)
            } else if slot - layout.attributes.count < layout.relationships.count {
                names.insert(layout.relationships[slot - layout.attributes.count].name)
            }
        }
        return names
    }
}
