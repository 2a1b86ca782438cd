import Foundation
import OpenSwiftDataStore

extension ModelContext {
    /// Posted before a context saves; `object` is the context.
    public static let willSave = Notification.Name("ModelContext.willSave")
    /// Posted after a context saved; `object` is the context and `userInfo` holds
    /// the saved identifiers under `NotificationKey`'s raw values.
    public static let didSave = Notification.Name("ModelContext.didSave")

    /// The keys of a `didSave` notification's `userInfo`.
    public enum NotificationKey: String {
        case queryGeneration, invalidatedAllIdentifiers, insertedIdentifiers, updatedIdentifiers, deletedIdentifiers
    }

    /// The identifiers one save wrote, as its `didSave` lists them: read from
    /// `lastSavedChanges` by the code that saved. *Additive*: SwiftData tells only
    /// observers of `didSave`, and observing costs every save of the process a turn
    /// at `NotificationCenter`'s one lock, which each registration and each post take:
    /// a server whose requests each observed their own save to tell a new trip from
    /// an upserted one spent a tenth of its time waiting there (#42).
    public struct SavedChanges: Sendable, Equatable {
        /// Models the save inserted as new rows.
        public var insertedIdentifiers: [PersistentIdentifier]
        /// Models whose changes it wrote, and inserts that upserted into a model a
        /// unique key already named (the inserted instance took that identifier).
        public var updatedIdentifiers: [PersistentIdentifier]
        /// Models it deleted.
        public var deletedIdentifiers: [PersistentIdentifier]

        public init(
            insertedIdentifiers: [PersistentIdentifier], updatedIdentifiers: [PersistentIdentifier],
            deletedIdentifiers: [PersistentIdentifier]
        ) {
            self.insertedIdentifiers = insertedIdentifiers
            self.updatedIdentifiers = updatedIdentifiers
            self.deletedIdentifiers = deletedIdentifiers
        }
    }

    /// Keeps `changes` as `lastSavedChanges` and posts `didSave` with them (and the
    /// store's generation, when it has one): every save path ends here.
    func didSave(_ changes: SavedChanges, generation: UInt64? = nil) {
        lastSavedChanges = changes
        var userInfo: [String: Any] = [
            NotificationKey.insertedIdentifiers.rawValue: changes.insertedIdentifiers,
            NotificationKey.updatedIdentifiers.rawValue: changes.updatedIdentifiers,
            NotificationKey.deletedIdentifiers.rawValue: changes.deletedIdentifiers,
        ]
        if let generation { userInfo[NotificationKey.queryGeneration.rawValue] = generation }
        NotificationCenter.default.post(name: Self.didSave, object: self, userInfo: userInfo)
    }

    /// Writes pending inserts, changes and deletes to the store as one commit.
    ///
    /// First inserts models made reachable by changes, checks `deny` rules (a
    /// violation throws and saves nothing), applies the delete rules that have not run
    /// yet (cascade, nullify; `processPendingChanges()` runs them too) and validates
    /// relationship counts. An insert whose unique key exists updates that model
    /// instead (upsert), and the inserted instance takes its identifier. Ends the
    /// undo group of the changes so far.
    ///
    /// Models another writer saved since this context read them are merged property
    /// by property, or refused with `SaveConflictError` (`conflictPolicy`).
    public func save() throws {
        // The save's cascades and nullifications join the undo group of the deletes
        // that caused them; the group ends with the save.
        defer { endUndoEvent() }
        autosaveScheduled = false
        insertReachableModels()
        guard hasChanges || deletes.hasDeletedInserts else { return }
        let closure = try deletionClosure()
        // A model inserted and deleted since the last save changes nothing stored,
        // unless its cascades reach saved models.
        guard hasChanges || closure.deletesSavedModels else {
            deletes.removeAll()
            return
        }
        guard container.allowsSave else {
            throw SwiftDataError(.readOnlyConfiguration, "the container's configuration does not allow saving")
        }
        try validateRelationshipCounts(excluding: closure)
        NotificationCenter.default.post(name: Self.willSave, object: self)
        applyDeletes(closure)
        if let metrics = container.metrics {
            try metrics.save { try container.backend.save(self) }
        } else {
            try container.backend.save(self)
        }
    }

    /// Forgets what a save wrote: the pending lists, and the models it retained.
    func endPendingState() {
        changed.removeAll()
        deletes.removeAll()
        undoState.pendingInserts = [:]
        registry.releaseAll()
    }

    /// Runs `block`, then saves. If `block` throws, its changes are rolled back.
    public func transaction(block: () throws -> Void) throws {
        do {
            try block()
        } catch {
            rollback()
            throw error
        }
        try save()
    }

    /// Whether a stored to-many list holds other rows than the context sent (another
    /// context's changes were merged in). Inserts of the save are in the sent list
    /// under temporary rows: then the rows must be the permanent ones sent plus as many
    /// more. (An upsert that made two mentions one counts as merged: the model reads the
    /// stored list again, which is right anyway.)
    static func listMerged(stored: Value?, sent: Value) -> Bool {
        let rows = stored?.referencedRows ?? [], sentRows = sent.referencedRows
        let permanent = sentRows.filter { !$0.isTemporary }
        if permanent.count == sentRows.count { return rows != sentRows }
        let stored = Set(rows)
        return rows.count != sentRows.count || !permanent.allSatisfy(stored.contains)
    }

    /// Makes the models related to `displaced` refer to `replacement` on the inverse side.
    /// - Complexity: O(related models)
    func redirectInverses(from displaced: any PersistentModel, to replacement: any PersistentModel) {
        let backing = displaced.modelBacking
        for (j, relationship) in backing.layout.relationships.enumerated() {
            guard relationship.inverse != nil else { continue }
            for related in backing.relatedModels(j) {
                let other = related.modelBacking
                guard let inverse = relationship.inverseIndex(in: other.layout) else { continue }
                guard let current = other.resolvedModels(inverse), current.contains(where: { $0 === displaced }) else { continue }
                // (The replacement may be in the list already: it stays there once.)
                let holdsReplacement = current.contains { $0 === replacement }
                other.replaceResolved(inverse, with: holdsReplacement
                    ? current.filter { $0 !== displaced } : current.map { $0 === displaced ? replacement : $0 })
            }
        }
    }

    /// Marks the cascaded models deleted and removes every deleted model from the
    /// inverse relationships of the models that stay. Deletes that were propagated
    /// earlier in the event are detached again, which changes (and registers for undo)
    /// only links made to them since.
    private func applyDeletes(_ closure: DeletionClosure) {
        // (Sized once: a cascade can delete many times the models deleted by hand.)
        registry.reserveRetained(closure.models.count)
        deletes.reserveCapacity(more: closure.models.count + closure.rows.count)
        // Rows first: the models' inverses spare them. A row whose model was made since
        // the closure was taken (by a `willSave` observer, or validation resolving a
        // relationship) goes as that model.
        var models = closure.models
        for id in closure.rows {
            if let model = registry[id] {
                models.append(model)
            } else {
                _ = deletes.add(id)
            }
        }
        for model in models { deleteModel(model) }
        for model in models { detachFromInverses(model, sparingDeleted: true) }
        // The closure covers every saved model deleted; what may be left are deletes
        // of models inserted since the last save, whose cascades still have to run.
        deletes.markAllPropagated()
        propagatePendingDeletes()
    }

    private func validateRelationshipCounts(excluding closure: DeletionClosure) throws {
        // Most schemas have no rule to check: then no model is looked at (nor is the
        // set of the doomed made: about 200 instructions a deleted model).
        guard container.schema.memberLayouts.values.contains(where: \.hasRelationshipCountRules) else { return }
        let doomed = Set(closure.models.map { ObjectIdentifier($0) }), doomedRows = Set(closure.rows)
        func check(_ model: any PersistentModel) throws {
            guard !doomed.contains(ObjectIdentifier(model)), !doomedRows.contains(model.modelBacking.identifier) else { return }
            let backing = model.modelBacking
            let id = backing.identifier
            guard backing.layout.hasRelationshipCountRules else { return }
            for (j, relationship) in backing.layout.relationships.enumerated()
            where backing.layout.hierarchy?.hasRelationship[j] ?? true {
                if !relationship.isToMany {
                    if !relationship.isOptional, backing.relatedModels(j).isEmpty {
                        throw SwiftDataError(
                            .modelValidationFailure, "\(id): the non-optional relationship '\(relationship.name)' is nil")
                    }
                    continue
                }
                let minimum = relationship.minimumModelCount, maximum = relationship.maximumModelCount
                guard minimum > 0 || maximum > 0 else { continue }
                let count = backing.relatedModels(j).filter {
                    !doomed.contains(ObjectIdentifier($0)) && !doomedRows.contains($0.modelBacking.identifier)
                }.count
                if count < minimum || (maximum > 0 && count > maximum) {
                    throw SwiftDataError(
                        .modelValidationFailure,
                        "\(id): relationship '\(relationship.name)' holds \(count) models; allowed \(minimum)...\(maximum > 0 ? String(maximum) : "")")
                }
            }
        }
        // (Spilled inserts are of entities without such rules: `spillUnheldInserts`.)
        try registry.pending.forEachModel(check)
        for id in changed { if let model = registry[id] { try check(model) } }
    }
}
