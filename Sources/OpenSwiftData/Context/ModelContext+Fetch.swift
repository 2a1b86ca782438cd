import Foundation
import OpenSwiftDataStore

extension ModelContext {
    /// The models of type `T` that match `descriptor`, in its order and window.
    ///
    /// Reads one consistent published version of the store; with
    /// `includePendingChanges`, unsaved inserts match too, and pending deletes never do.
    /// - Complexity: O(1) expected when the predicate pins a unique attribute to a
    ///   constant; otherwise O(n) in the entity's rows (the native query engine will use indexes).
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [T] {
        try matches(descriptor)
    }

    /// The number of models `fetch(_:)` would return.
    public func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> Int {
        try matches(descriptor).count
    }

    /// The models of `fetch(_:)`, read from the store `batchSize` at a time as the
    /// collection is walked.
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, batchSize: Int) throws -> FetchResultsCollection<T> {
        if descriptor.includePendingChanges, hasPendingInserts(of: T.self) {
            throw SwiftDataError(
                .includePendingChangesWithBatchSize,
                "a batched fetch cannot include unsaved inserts: save first or set includePendingChanges to false")
        }
        let identifiers = try matches(descriptor).map(\.persistentModelID)
        return FetchResultsCollection(batches: .init(identifiers: identifiers, batchSize: batchSize) { [unowned self] ids in
            ids.compactMap { self.model(for: $0) as? T }
        })
    }

    /// The identifiers of the models `fetch(_:)` would return.
    public func fetchIdentifiers<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [PersistentIdentifier] {
        if !descriptor.sortBy.isEmpty, descriptor.includePendingChanges, hasPendingInserts(of: T.self) {
            throw SwiftDataError(
                .sortingPendingChangesWithIdentifiers,
                "identifiers of unsaved models cannot be sorted: save first or set includePendingChanges to false")
        }
        return try matches(descriptor).map(\.persistentModelID)
    }

    /// The identifiers of `fetchIdentifiers(_:)`, as a collection read in batches.
    public func fetchIdentifiers<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, batchSize: Int
    ) throws -> FetchResultsCollection<PersistentIdentifier> {
        let identifiers = try fetchIdentifiers(descriptor)
        return FetchResultsCollection(batches: .init(identifiers: identifiers, batchSize: batchSize) { $0 })
    }

    /// Calls `block` for each model `fetch(_:)` would return, reading `batchSize`
    /// models at a time.
    ///
    /// Unchanged models of a finished batch are released from the context, so memory
    /// stays bounded. Changes made in `block` stay pending either way (nothing is
    /// lost); `allowEscapingMutations` is accepted for source compatibility.
    public func enumerate<T: PersistentModel>(
        _ fetch: FetchDescriptor<T>, batchSize: Int = 5000, allowEscapingMutations: Bool = false,
        block: (_ model: T) throws -> Void
    ) throws {
        let identifiers = try matches(fetch).map(\.persistentModelID)
        let wasRegistered = Set(registry.keys)
        var start = 0
        let size = max(1, batchSize)
        while start < identifiers.count {
            let batch = identifiers[start..<min(start + size, identifiers.count)]
            for id in batch {
                if let model = model(for: id) as? T { try block(model) }
            }
            for id in batch where !wasRegistered.contains(id) && !hasPendingChanges(id) {
                registry[id] = nil
            }
            start += size
        }
    }

    private func hasPendingInserts<T: PersistentModel>(of type: T.Type) -> Bool {
        inserted.contains { registry[$0] is T }
    }

    /// The filtered, sorted and windowed models of a descriptor.
    func matches<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [T] {
        let entity = try container.entityIndex(of: T.self)
        let layout = container.layout(at: entity)
        let version = container.store.current
        var results: [T] = []
        var failure: (any Error)?
        let table = version.tables[entity]
        func visit(_ id: RowID, _ row: Row) {
            guard failure == nil else { return }
            let identifier = identifier(of: layout, row: id)
            if deletedSet.contains(identifier) { return }
            let model: T
            var isNew = false
            if let registered = registry[identifier] as? T {
                refresh(registered.modelBacking, with: row, generation: version.generation)
                model = registered
            } else {
                guard let made = makeModel(T.self, identifier: identifier, row: row, generation: version.generation) as? T else { return }
                model = made
                isNew = true
            }
            do {
                guard try descriptor.predicate?.evaluate(model) ?? true else { return }
            } catch {
                failure = error
                return
            }
            if isNew { registry[identifier] = model }
            results.append(model)
        }
        if let candidates = UniqueKeyLookup.candidates(for: descriptor.predicate, layout: layout, entity: entity, in: version) {
            for id in candidates { if let row = table[id] { visit(id, row) } }
        } else {
            table.forEach(visit)
        }
        if let failure { throw failure }
        if descriptor.includePendingChanges {
            for id in inserted {
                guard let model = registry[id] as? T else { continue }
                if try descriptor.predicate?.evaluate(model) ?? true { results.append(model) }
            }
        }
        if !descriptor.sortBy.isEmpty {
            results.sort(using: descriptor.sortBy)
        }
        let offset = min(max(descriptor.fetchOffset ?? 0, 0), results.count)
        var end = results.count
        if let limit = descriptor.fetchLimit, limit > 0 { end = min(end, offset + limit) }
        return Array(results[offset..<end])
    }
}
