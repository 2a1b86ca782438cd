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
        guard let metrics = container.metrics else { return try container.backend.fetchCount(descriptor, in: self) }
        return try metrics.fetch { try container.backend.fetchCount(descriptor, in: self) }
    }

    /// The models of `fetch(_:)`, read from the store `batchSize` at a time as the
    /// collection is walked.
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, batchSize: Int) throws -> FetchResultsCollection<T> {
        if descriptor.includePendingChanges, hasPendingInserts(of: T.self) {
            throw SwiftDataError(
                .includePendingChangesWithBatchSize,
                "a batched fetch cannot include unsaved inserts: save first or set includePendingChanges to false")
        }
        return try container.backend.fetch(descriptor, batchSize: batchSize, in: self)
    }

    /// The identifiers of the models `fetch(_:)` would return.
    public func fetchIdentifiers<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [PersistentIdentifier] {
        if !descriptor.sortBy.isEmpty, descriptor.includePendingChanges, hasPendingInserts(of: T.self) {
            throw SwiftDataError(
                .sortingPendingChangesWithIdentifiers,
                "identifiers of unsaved models cannot be sorted: save first or set includePendingChanges to false")
        }
        guard let metrics = container.metrics else { return try container.backend.fetchIdentifiers(descriptor, in: self) }
        return try metrics.fetch { try container.backend.fetchIdentifiers(descriptor, in: self) }
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
        try container.backend.enumerate(fetch, in: self, block: block)
    }

    private func hasPendingInserts<T: PersistentModel>(of type: T.Type) -> Bool {
        registry.pending.contains(of: T.self)
    }

    /// Calls `body` with each filtered, sorted and windowed model of `request`, in
    /// order, after `count` with their number (or, for rows an access yields as they
    /// come, with at most how many it yields); `onModels` is called when the fetch has
    /// work on model objects (`FetchedModels`). The container's backend runs it.
    @usableFromInline
    func forEachMatch(
        _ request: FetchRequest, onModels: () -> any FetchedModels,
        count: (Int) -> Void, body: (any PersistentModel) -> Void
    ) throws {
        if let metrics = container.metrics {
            try metrics.fetch { try container.backend.forEachMatch(request, in: self, onModels: onModels, count: count, body: body) }
        } else {
            try container.backend.forEachMatch(request, in: self, onModels: onModels, count: count, body: body)
        }
    }
}
