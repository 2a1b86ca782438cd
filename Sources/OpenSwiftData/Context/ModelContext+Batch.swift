import Foundation
import OpenSwiftDataStore

// Batch operations, each one commit. *Additive* (not in SwiftData).

extension ModelContext {
    /// Inserts `models` (and what they reach) and saves them, with any other
    /// pending changes, in one commit. Models whose unique key exists update the
    /// stored model instead (upsert), as `insert(_:)` and `save()` do.
    public func insert<T: PersistentModel>(contentsOf models: some Sequence<T>) throws {
        insertGraph(from: models.map { $0 })
        try save()
    }

    /// `insert(contentsOf:)` under the name that says what happens to existing keys.
    public func upsert<T: PersistentModel>(_ models: some Sequence<T>) throws {
        try insert(contentsOf: models)
    }

    /// Sets `keyPath` to `value` on every stored model of type `T` that matches
    /// `predicate`, in one commit, without making model objects; returns how many
    /// changed. The context's pending changes are saved first, in their own commit.
    ///
    /// Registered models of this context take the new value; a unique clash throws
    /// `SwiftDataError.uniqueConstraintViolation` and changes nothing.
    @discardableResult
    public func update<T: PersistentModel, V>(
        _ keyPath: ReferenceWritableKeyPath<T, V>, to value: V, where predicate: Predicate<T>? = nil
    ) throws -> Int {
        try save()
        let query = try FetchQuery(FetchDescriptor<T>(predicate: predicate), context: self)
        guard case let .attribute(slot)? = query.layout.slots[keyPath] else {
            throw SwiftDataError(.unsupportedKeyPath, "\(keyPath) is not a stored attribute of \(query.layout.name)")
        }
        let stored = query.layout.attributes[slot].encode(value)
        var changes = ChangeSet()
        changes.author = author
        let rows = try query.candidates().compactMap(\.rowID)
        for id in rows {
            changes.updates.append(.init(entity: query.entity, id: id, values: [slot: stored]))
        }
        guard !changes.isEmpty else { return 0 }
        let result: CommitResult
        do {
            result = try container.store.commit(changes)
        } catch {
            throw error.apiError
        }
        for id in rows {
            guard let model = registry[identifier(entity: query.entity, row: id)] else { continue }
            refresh(model.modelBacking, entity: query.entity, with: nil, in: result.version ?? container.store.current)
        }
        didSave(
            SavedChanges(
                insertedIdentifiers: [], updatedIdentifiers: rows.map { identifier(entity: query.entity, row: $0) },
                deletedIdentifiers: []),
            generation: result.generation)
        return rows.count
    }
}
