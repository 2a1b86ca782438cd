import Foundation
import OpenSwiftDataStore

/// History reads and deletions, shared by `ModelContext.fetchHistory(_:)`,
/// `deleteHistory(_:)` and the change feed.
extension ModelContainer {
    /// The transactions `descriptor` selects from the published version, oldest
    /// first unless it sorts them.
    ///
    /// Throws `historyTokenExpired` when the predicate bounds the tokens from below
    /// (`>`, `>=`, `==`) and the first generation it asks for is at or before the
    /// latest deleted one (the horizon).
    /// - Complexity: O(log n + transactions in the token range + their changes)
    func history(
        matching descriptor: HistoryDescriptor<DefaultHistoryTransaction>, checkingExpiry: Bool = true, in log: HistoryLog? = nil
    ) throws -> [DefaultHistoryTransaction] {
        if log == nil { store.catchUp() }
        let history = log ?? store.current.history
        let scope = HistoryPredicateScope(descriptor.predicate)
        // Transactions start at generation 1: a bound at or below it asks for all.
        let from = max(scope.lowest, 1)
        // (An empty token range asks for nothing, so nothing of it can be gone.)
        if checkingExpiry, scope.isBoundedBelow, !scope.isEmpty, from <= history.horizon {
            throw SwiftDataError(
                .historyTokenExpired,
                "history from generation \(from) on was partly deleted (up to generation \(history.horizon))")
        }
        let limit = descriptor.fetchLimit == 0 ? Int.max : Int(clamping: descriptor.fetchLimit)
        let inOrder = descriptor.sortBy.isEmpty
        var result: [DefaultHistoryTransaction] = []
        try scope.forEachCandidate(in: history) { stored in
            let transaction = self.transaction(stored)
            if !scope.isExact, let predicate = descriptor.predicate, try !predicate.evaluate(transaction) { return true }
            result.append(transaction)
            return !(inOrder && result.count >= limit)
        }
        if !inOrder {
            result.sort(using: descriptor.sortBy)
            if result.count > limit { result.removeLast(result.count - limit) }
        }
        return result
    }

    /// Deletes the transactions `descriptor` selects (its limit and order apply
    /// as a fetch's would). Tokens before the latest deleted transaction expire.
    /// - Complexity: O(history)
    func deleteHistory(matching descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws {
        guard allowsSave else {
            throw SwiftDataError(.readOnlyConfiguration, "the container's configuration does not allow deleting history")
        }
        let scope = HistoryPredicateScope(descriptor.predicate)
        var generations = Set<UInt64>()
        if scope.isExact, descriptor.fetchLimit == 0 {
            // No transaction need be made to decide: the scope is the predicate.
            store.catchUp()
            scope.forEachCandidate(in: store.current.history) { stored in
                generations.insert(stored.generation)
                return true
            }
        } else {
            // Deleting from an expired token still deletes what is left.
            for transaction in try history(matching: descriptor, checkingExpiry: false) {
                generations.insert(UInt64(transaction.transactionIdentifier))
            }
        }
        do {
            try store.deleteHistory(generations)
        } catch {
            throw error.apiError
        }
    }

    /// SwiftData's form of a stored transaction.
    /// - Complexity: O(changes), an insert run counting each row.
    func transaction(_ stored: StoredTransaction) -> DefaultHistoryTransaction {
        var changes: [HistoryChange] = []
        changes.reserveCapacity(stored.changeCount)
        for change in stored.changes where schema.layouts.indices.contains(change.entity) {
            let layout = layout(at: change.entity)
            appendChange(change, of: layout.modelType, layout: layout, to: &changes)
        }
        return DefaultHistoryTransaction(
            generation: stored.generation, timestamp: stored.timestamp, author: stored.author, changes: changes,
            storeIdentifier: storeIdentifier)
    }

    private func appendChange<M: PersistentModel>(
        _ change: StoredChange, of _: M.Type, layout: EntityLayout, to changes: inout [HistoryChange]
    ) {
        let scope = identifierScopes[change.entity]
        switch change {
        case let .inserted(_, first, count):
            for k in 0..<Int64(count) {
                let id = PersistentIdentifier(scope: scope, key: first.rawValue + k)
                changes.append(.insert(DefaultHistoryInsert<M>(changedPersistentIdentifier: id)))
            }
        case let .updated(_, row, slots):
            let paths = slots.compactMap { slot -> (any PartialKeyPath<M> & Sendable)? in
                let keyPath = slot < layout.attributes.count
                    ? layout.attributes[slot].keyPath
                    : layout.relationships[slot - layout.attributes.count].keyPath
                // Key path objects are immutable, but not declared `Sendable`.
                guard keyPath is PartialKeyPath<M> else { return nil }
                return Self.cast(keyPath, to: (any PartialKeyPath<M> & Sendable).self)
            }
            let id = PersistentIdentifier(scope: scope, key: row.rawValue)
            changes.append(.update(DefaultHistoryUpdate<M>(changedPersistentIdentifier: id, updatedAttributes: paths)))
        case let .deleted(_, row, preserved):
            var entries: [(keyPath: PartialKeyPath<M>, value: any Sendable)] = []
            for slot in preserved.keys.sorted() where slot < layout.attributes.count {
                let attribute = layout.attributes[slot]
                guard let keyPath = attribute.keyPath as? PartialKeyPath<M>,
                      let value = Self.swiftValue(preserved[slot]!, of: attribute)
                else { continue }
                entries.append((keyPath, value))
            }
            let id = PersistentIdentifier(scope: scope, key: row.rawValue)
            changes.append(.delete(DefaultHistoryDelete<M>(changedPersistentIdentifier: id, tombstone: HistoryTombstone(entries: entries))))
        }
    }

    /// A stored value as its attribute's Swift type; nil for a nil optional.
    private static func swiftValue(_ stored: Value, of attribute: EntityLayout.AttributeSlot) -> (any Sendable)? {
        func decode<T>(_: T.Type) -> Any { attribute.decode(stored, as: T.self) }
        let value = _openExistential(attribute.swiftType, do: decode)
        // A nil optional stays out of the tombstone; a present one is unwrapped.
        if let optional = value as? any _OptionalType { return optional._wrapped.map(assumeSendable) }
        return assumeSendable(value)
    }

    /// A stored attribute's value is a value type the model layer encodes (or a
    /// Codable one decoded fresh, shared with no one), so it may cross tasks.
    private static func assumeSendable(_ value: Any) -> any Sendable {
        cast(value, to: (any Sendable).self)
    }

    /// `value as! T`, for a `T` that adds only the marker protocol `Sendable` to
    /// what `value` is: a cast that cannot fail, which the compiler will not write.
    private static func cast<T>(_ value: Any, to _: T.Type) -> T { value as! T }
}
