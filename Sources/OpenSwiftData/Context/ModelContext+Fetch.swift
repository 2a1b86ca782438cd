import Foundation
import OpenSwiftDataStore

extension ModelContext {
    /// The models of type `T` that match `descriptor`, in its order and window.
    ///
    /// Reads one consistent published version of the store; with
    /// `includePendingChanges`, unsaved inserts match too, and pending deletes never do.
    /// - Complexity: O(log n) when the predicate pins a unique key or an ordered
    ///   index's prefix or range to constants (plus the rows it yields); otherwise
    ///   O(n) in the entity's rows. `explain(_:)` tells which.
    @inlinable
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [T] {
        // Inlinable so the descriptor is read where `T` is known (`FetchRequest`).
        if usesCustomStore { return try storeMatches(descriptor) }
        var models: [T] = []
        try forEachMatch(FetchRequest(descriptor), onModels: { DescriptorModels(descriptor: descriptor) }) { count in
            models.reserveCapacity(count)
        } body: { model in
            models.append(unsafeDowncast(model as AnyObject, to: T.self))
        }
        return models
    }

    /// The number of models `fetch(_:)` would return.
    ///
    /// Without a predicate or unsaved changes this is the table's row count (except for
    /// a subclass in a model hierarchy, whose rows share their root's table).
    /// - Complexity: O(1) without a predicate or unsaved changes; else as `fetch(_:)`.
    public func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> Int {
        if container.external != nil { return try storeCount(descriptor) }
        if descriptor.predicate == nil, !hasChanges, PredicateCompiler.typeFilter(for: T.self, in: container) == nil {
            let rows = container.store.current.tables[try container.entityIndex(of: T.self)].count
            return FetchQuery.window(of: rows, descriptor).count
        }
        let query = try FetchQuery(descriptor, context: self)
        return FetchQuery.window(of: try query.matchCount(), descriptor).count
    }

    /// The models of `fetch(_:)`, read from the store `batchSize` at a time as the
    /// collection is walked.
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, batchSize: Int) throws -> FetchResultsCollection<T> {
        if descriptor.includePendingChanges, hasPendingInserts(of: T.self) {
            throw SwiftDataError(
                .includePendingChangesWithBatchSize,
                "a batched fetch cannot include unsaved inserts: save first or set includePendingChanges to false")
        }
        if container.external != nil {
            // A custom store's models come with its snapshots: kept, not fetched again one by one.
            let models = try storeMatches(descriptor)
            let byID = Dictionary(models.map { ($0.modelBacking.identifier, $0) }, uniquingKeysWith: { a, _ in a })
            return FetchResultsCollection(batches: .init(identifiers: models.map { $0.modelBacking.identifier }, batchSize: batchSize) { ids in
                ids.compactMap { byID[$0] }
            })
        }
        let identifiers = try matchingIdentifiers(descriptor)
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
        return try matchingIdentifiers(descriptor)
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
    /// Models `block` leaves unchanged and does not keep end after their call (the
    /// context does not retain saved, unchanged models), so memory stays bounded.
    /// Changes made in `block` stay pending (nothing is lost); `batchSize` and
    /// `allowEscapingMutations` are accepted for source compatibility.
    public func enumerate<T: PersistentModel>(
        _ fetch: FetchDescriptor<T>, batchSize: Int = 5000, allowEscapingMutations: Bool = false,
        block: (_ model: T) throws -> Void
    ) throws {
        if container.external != nil {
            for model in try storeMatches(fetch) { try block(model) }
            return
        }
        for id in try matchingIdentifiers(fetch) {
            if let model = model(for: id) as? T { try block(model) }
        }
    }

    private func hasPendingInserts<T: PersistentModel>(of type: T.Type) -> Bool {
        registry.pending.contains(of: T.self)
    }

    /// The identifiers of the filtered, sorted and windowed models, made without models.
    func matchingIdentifiers<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [PersistentIdentifier] {
        if container.external != nil { return try storeIdentifiers(descriptor) }
        let query = try FetchQuery(descriptor, context: self)
        return query.window(try query.candidates()).map { query.identifier(of: $0) }
    }

    /// Whether a custom store (`DataStore`) fetches for the container.
    @usableFromInline
    var usesCustomStore: Bool { container.external != nil }

    /// Calls `body` with each filtered, sorted and windowed model of `request`, in
    /// order, after `count` with their number (or, for rows an access yields as they
    /// come, with at most how many it yields); `onModels` is called when the fetch has
    /// work on model objects (`FetchedModels`).
    @usableFromInline
    func forEachMatch(
        _ request: FetchRequest, onModels: () -> any FetchedModels,
        count: (Int) -> Void, body: (any PersistentModel) -> Void
    ) throws {
        let filter = try FetchQuery.filter(of: request, in: container)
        switch try keyMatch(request, filter: filter) {
        case let .model(model)?:
            count(1)
            body(model)
            return
        case .absent?:
            return
        case nil:
            break
        }
        let query = try FetchQuery(request, context: self, filter: filter, onModels: onModels)
        if query.yieldsModelsInWalkOrder {
            // Rows become models as the walk yields them: no list of candidates, whose
            // allocation (over 1 KiB for a hundred rows) made glibc consolidate the
            // blocks of the models the previous query ended, and every allocation
            // after it take the slow path (W5).
            _ = try query.stored.forEachMatch(indexOrder: true) { expected in
                count(expected)
                if expected > 64 { self.registry.reserveUnretained(expected) }
            } _: { id, row in
                body(query.materialize(FetchCandidate(rowID: id, values: row, model: nil)))
            }
            return
        }
        let candidates = query.window(try query.candidates())
        count(candidates.count)
        if candidates.count > 64 { registry.reserveUnretained(candidates.count) }
        for candidate in candidates { body(query.materialize(candidate)) }
    }
}
