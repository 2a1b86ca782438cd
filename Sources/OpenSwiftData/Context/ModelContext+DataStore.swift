import Foundation
import OpenSwiftDataStore

// A context over a custom store (`DataStore`): fetches ask the store for snapshots
// and make models of them; saves hand it snapshots of the pending models. The models
// are the same classes with the same backing data as over the built-in store: they
// hold their values loaded, and their relationships as references that
// `ExternalReferences` maps to the store's identifiers.

extension ModelContext {
    /// The context as a store sees it: an identity stable for the context's life, and
    /// the author its saves record.
    public var editingState: EditingState { EditingState(id: editingStateID, author: author) }

    // MARK: Fetching

    /// `fetch(_:)` over a custom store.
    ///
    /// The store filters, sorts and windows when it can; a store that prefers the
    /// context to filter or sort (`DataStoreError.preferInMemoryFilter`,
    /// `.preferInMemorySort`) is asked again without them, and the models are filtered
    /// with `Predicate.evaluate` and sorted with the descriptor's `SortDescriptor`s.
    /// With unsaved changes taking part, the store is asked for the whole result
    /// (no window), models with pending changes are tested here, unsaved inserts join,
    /// pending deletes leave, and the window is applied here.
    /// - Complexity: the store's fetch, plus O(n log n) in the models returned when
    ///   this context sorts.
    @usableFromInline
    func storeMatches<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [T] {
        guard let external = container.external else { return [] }
        let pending = descriptor.includePendingChanges ? pendingModels(of: T.self) : []
        let mixesPending = !pending.isEmpty || !deleted.isEmpty
        var request = descriptor
        if mixesPending {
            request.fetchLimit = nil
            request.fetchOffset = nil
        }
        var filtersHere = false, sortsHere = false
        // A predicate may follow relationships into models of other entities with unsaved
        // changes, which the store cannot see: then the context tests every model.
        if descriptor.includePendingChanges, descriptor.predicate != nil, pending.count < registry.pendingCount + changed.count {
            filtersHere = true
            request.predicate = nil
            request.fetchLimit = nil
            request.fetchOffset = nil
        }
        var result: ExternalFetch
        while true {
            do {
                result = try external.fetch(request, editingState: editingState)
                break
            } catch let error as DataStoreError where error == .preferInMemoryFilter && request.predicate != nil {
                filtersHere = true
                request.predicate = nil
                request.fetchLimit = nil
                request.fetchOffset = nil
            } catch let error as DataStoreError where error == .preferInMemorySort && !request.sortBy.isEmpty {
                sortsHere = true
                request.sortBy = []
                request.fetchLimit = nil
                request.fetchOffset = nil
            }
        }
        storeSnapshots = result.related
        var models: [T] = []
        models.reserveCapacity(result.fetched.count)
        var seen = Set<ObjectIdentifier>()
        for snapshot in result.fetched {
            guard let model = try materialize(snapshot) as? T, seen.insert(ObjectIdentifier(model)).inserted else { continue }
            models.append(model)
        }
        if mixesPending {
            models.removeAll { $0.modelBacking.isDeleted || deletedSet.contains($0.modelBacking.identifier) }
            for model in pending where seen.insert(ObjectIdentifier(model)).inserted { models.append(model) }
        }
        if let predicate = descriptor.predicate, filtersHere || mixesPending {
            models = try models.filter { model in
                // What the store tested needs no second test, unless it changed since.
                guard filtersHere || hasPendingChanges(model.modelBacking.identifier) else { return true }
                return try predicate.evaluate(model)
            }
        }
        if !descriptor.sortBy.isEmpty, sortsHere || mixesPending { models.sort(using: descriptor.sortBy) }
        guard filtersHere || sortsHere || mixesPending else { return models }
        return Array(models[QueryWindow.range(of: models.count, offset: descriptor.fetchOffset, limit: descriptor.fetchLimit)])
    }

    /// `fetchCount(_:)` over a custom store.
    func storeCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> Int {
        try askStore(descriptor, { try $0.fetchCount(descriptor, editingState: $1) }, else: { $0.count })
    }

    /// `fetchIdentifiers(_:)` over a custom store.
    func storeIdentifiers<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [PersistentIdentifier] {
        try askStore(descriptor, { try $0.fetchIdentifiers(descriptor, editingState: $1) }, else: { $0.map { $0.modelBacking.identifier } })
    }

    /// The store's answer (`ask`) unless unsaved changes take part or the store prefers
    /// the context to filter or sort; then `fromModels` of `storeMatches(_:)`.
    private func askStore<T: PersistentModel, R>(
        _ descriptor: FetchDescriptor<T>, _ ask: (any ExternalStore, EditingState) throws -> R, else fromModels: ([T]) -> R
    ) throws -> R {
        if let external = container.external,
           !descriptor.includePendingChanges || (pendingModels(of: T.self).isEmpty && deleted.isEmpty) {
            do {
                return try ask(external, editingState)
            } catch let error as DataStoreError where error == .preferInMemoryFilter || error == .preferInMemorySort {}
        }
        return fromModels(try storeMatches(descriptor))
    }

    /// Unsaved inserts and saved models with unsaved changes, of type `T`.
    private func pendingModels<T: PersistentModel>(of type: T.Type) -> [T] {
        registry.pending.models(of: T.self) + changed.sorted().compactMap { registry[$0] as? T }
    }

    // MARK: Models from snapshots

    /// The registered model of `snapshot`'s identifier, brought to its values unless
    /// it has unsaved changes; or a new model of its values, registered.
    /// - Throws: `SwiftDataError.unknownModelType` for an entity the schema lacks.
    func materialize(_ snapshot: DefaultSnapshot, replacingChanges: Bool = false) throws -> any PersistentModel {
        let id = snapshot.persistentIdentifier
        guard let entity = container.entityIndex(named: id.entityName) else {
            throw SwiftDataError(.unknownModelType, "the store returned \(id), of an entity the container's schema lacks")
        }
        let table = container.store.current.tables[entity]
        var layout = container.layout(at: entity)
        var row = storeRow(snapshot, layout: layout)
        if container.hasHierarchies {
            let member = container.layout(at: entity, row: RowID(0), in: table, values: row)
            if member !== layout {
                layout = member
                row = storeRow(snapshot, layout: layout)
            }
        }
        if let model = registry[id] {
            let backing = model.modelBacking
            if replacingChanges || !hasPendingChanges(id), backing.committed != row {
                backing.values = row
                backing.committed = row
                backing.dirty = []
                backing.forgetResolvedRelationships()
            }
            return model
        }
        let model = layout.maker.make(
            identifier: id, layout: layout, row: row, table: table, id: RowID(0), generation: 0, context: self, registering: false)
        registry.register(model, as: id, retained: false)
        return model
    }

    /// `snapshot`'s values as a row of `layout`: attributes as stored, relationships
    /// as references to the identifiers they name. Properties the snapshot lacks keep
    /// their defaults.
    private func storeRow(_ snapshot: DefaultSnapshot, layout: EntityLayout) -> Row {
        guard let references = container.external?.references else { return layout.emptyRow }
        var row = layout.emptyRow
        for (i, attribute) in layout.attributes.enumerated() {
            if case let .value(value)? = snapshot.entries[attribute.name] { row[i] = value }
        }
        for (j, relationship) in layout.relationships.enumerated() {
            let ids: [PersistentIdentifier] = switch snapshot.entries[relationship.name] {
            case let .toOne(id?)?: [id]
            case let .toMany(ids)?: ids
            default: []
            }
            let rows = ids.map(references.reference(for:))
            row[layout.attributes.count + j] = relationship.isToMany ? .references(rows) : rows.first.map(Value.reference) ?? .null
        }
        return row
    }

    /// The identifiers a stored relationship value names, without loading models.
    func storedIdentifiers(_ value: Value, of relationship: EntityLayout.RelationshipSlot) -> [PersistentIdentifier] {
        let rows = value.referencedRows
        if let references = container.external?.references { return rows.compactMap(references.identifier(for:)) }
        guard let entity = container.entityIndex(named: relationship.destination) else { return [] }
        return rows.map { identifier(entity: entity, row: $0) }
    }

    /// The models `ids` name, from the registry, the snapshots the last fetch brought,
    /// the store's cache, or a fetch by identifier; identifiers the store no longer has
    /// are skipped (as references to deleted rows are). A store that fails here leaves
    /// the relationship empty: a property read cannot throw.
    func storeModels(for ids: [PersistentIdentifier], of relationship: EntityLayout.RelationshipSlot) -> [any PersistentModel] {
        var found: [PersistentIdentifier: any PersistentModel] = [:]
        var missing: [PersistentIdentifier] = []
        for id in ids {
            if let model = registry[id] {
                found[id] = model
            } else if let snapshot = storeSnapshots[id], let model = try? materialize(snapshot) {
                found[id] = model
            } else {
                missing.append(id)
            }
        }
        if !missing.isEmpty, let loaded = try? loadFromStore(missing, as: relationship.destinationType) {
            found.merge(loaded) { a, _ in a }
        }
        // A store naming a model of another entity here gives nothing rather than a
        // model the property cannot hold.
        let destination: AnyClass = relationship.destinationType
        return ids.compactMap { found[$0] }.filter { EntityLayout.isClass(type(of: $0), orSubclassOf: destination) }
    }

    /// `model(for:)` over a custom store: nil when the store does not have it.
    func storeModel(for id: PersistentIdentifier) -> (any PersistentModel)? {
        if let snapshot = storeSnapshots[id], let model = try? materialize(snapshot) { return model }
        guard let entity = container.entityIndex(named: id.entityName) else { return nil }
        return (try? loadFromStore([id], as: container.layout(at: entity).modelType))?[id]
    }

    /// Asks the store's cache, then the store, for the models `ids` name.
    private func loadFromStore(
        _ ids: [PersistentIdentifier], as type: any PersistentModel.Type
    ) throws -> [PersistentIdentifier: any PersistentModel] {
        guard let external = container.external else { return [:] }
        var snapshots = try external.cachedSnapshots(ids, editingState: editingState)
        let rest = ids.filter { snapshots[$0] == nil }
        if !rest.isEmpty {
            for snapshot in try fetchSnapshots(rest, as: type) { snapshots[snapshot.persistentIdentifier] = snapshot }
        }
        var models: [PersistentIdentifier: any PersistentModel] = [:]
        for (id, snapshot) in snapshots { models[id] = try materialize(snapshot) }
        return models
    }

    /// The store's snapshots of `ids`, fetched by a predicate on `persistentModelID`
    /// (or the entity whole, for a store that prefers the context to filter).
    private func fetchSnapshots<T: PersistentModel>(_ ids: [PersistentIdentifier], as type: T.Type) throws -> [DefaultSnapshot] {
        guard let external = container.external else { return [] }
        let wanted = Set(ids)
        let result: ExternalFetch
        do {
            result = try external.fetch(
                FetchDescriptor<T>(predicate: #Predicate<T> { wanted.contains($0.persistentModelID) }), editingState: editingState)
        } catch let error as DataStoreError where error == .preferInMemoryFilter || error == .invalidPredicate {
            result = try external.fetch(FetchDescriptor<T>(), editingState: editingState)
        }
        return result.fetched.filter { wanted.contains($0.persistentIdentifier) }
    }

    // MARK: Saving

    /// The end of `save()` over a custom store: one save request with snapshots of
    /// the inserted, changed and deleted models; inserted models then take the
    /// permanent identifiers the store chose, and every saved model's values become
    /// its committed ones.
    func saveToStore(_ external: any ExternalStore) throws {
        let insertedModels = registry.pending.all
        // (A model whose only changes are `.ephemeral` values has nothing to write, as
        // over the built-in store.)
        let changedModels = changed.sorted().compactMap { registry[$0] }.filter { !$0.modelBacking.dirty.isEmpty }
        let deletedIDs = deleted
        let deletedModels = deletedIDs.filter { !$0.isTemporary }.compactMap { registry[$0] }
        let outcome = try external.save(
            inserted: insertedModels, updated: changedModels, deleted: deletedModels, editingState: editingState,
            conflictPolicy: conflictPolicy,
            changedProperties: Dictionary(uniqueKeysWithValues: changedModels.map { ($0.modelBacking.identifier, changedPropertyNames(of: $0)) }),
            readSnapshots: readSnapshots(of: conflictPolicy == .failOnConflict ? changedModels + deletedModels : changedModels))
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
                redirectInverses(from: displaced, to: model)
                displaced.modelBacking.context = nil
                registry.remove(permanent)
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
            let row = row(of: backing)
            backing.values = row
            backing.committed = row
            backing.dirty = []
        }
        for (id, snapshot) in outcome.reregister {
            let current = outcome.remapped[id] ?? id
            guard registry[current] != nil else { continue }
            _ = try? materialize(snapshot.copy(persistentIdentifier: current), replacingChanges: true)
        }
        for id in deletedIDs {
            registry.remove(id)?.modelBacking.context = nil
        }
        let updatedIDs = changedModels.map { $0.modelBacking.identifier } + upsertedIDs
        endPendingState()
        deletedInserts = []
        storeSnapshots = [:]
        NotificationCenter.default.post(name: Self.didSave, object: self, userInfo: [
            NotificationKey.insertedIdentifiers.rawValue: insertedIDs,
            NotificationKey.updatedIdentifiers.rawValue: updatedIDs,
            NotificationKey.deletedIdentifiers.rawValue: deletedIDs,
        ])
    }
}
