import Foundation
import OpenSwiftDataStore

extension ModelContainer {
    /// OpenSwiftData: the store's history transactions after `token` (all of them
    /// when nil), then each new one as its commit publishes it: a change feed a
    /// server can stream (over server-sent events, say) without polling.
    ///
    /// Iteration waits for the next commit when it has delivered everything; it
    /// ends when its task is cancelled. It throws `historyTokenExpired` when
    /// history it has not delivered yet was deleted (`deleteHistory`,
    /// `deleteAllData`): the reader must resynchronize.
    ///
    /// Over a custom store, the feed follows a ``HistoryObserving`` one (fetching its
    /// history after the last token, and waiting as the store says); over any other
    /// it yields nothing.
    public func historyTransactions(after token: DefaultHistoryToken? = nil) -> HistoryTransactionFeed {
        HistoryTransactionFeed(container: self, after: token.map { UInt64(clamping: $0.id) })
    }
}

/// The transactions of a store as they commit (`ModelContainer.historyTransactions(after:)`).
public struct HistoryTransactionFeed: AsyncSequence, Sendable {
    /// The feed delivers the built-in store's transactions.
    public typealias Element = DefaultHistoryTransaction

    let container: ModelContainer
    let after: UInt64?

    /// Returns an iterator that starts after the feed's token, or at the first
    /// transaction kept.
    public func makeAsyncIterator() -> Iterator {
        Iterator(container: container, position: after ?? 0, checksExpiry: after != nil)
    }

    /// Delivers a feed's transactions in commit order, waiting for commits once caught
    /// up.
    public struct Iterator: AsyncIteratorProtocol {
        /// Transactions fetched at once while catching up.
        static let batch = 256

        let container: ModelContainer
        /// The generation of the last transaction delivered (or the start token's).
        var position: UInt64
        /// Whether a deletion of history after `position` is an error: once a start
        /// token was given or anything was delivered.
        var checksExpiry: Bool
        /// Fetched and not yet delivered, newest first (delivered from the end).
        var pending: [StoredTransaction] = []
        /// A custom store's, fetched and not yet delivered, newest first.
        var pendingFromStore: [DefaultHistoryTransaction] = []

        /// The next transaction, waiting for a commit if there is none yet; nil
        /// once the task is cancelled, and at once for a container on a custom
        /// store that is not `HistoryObserving`.
        /// - Complexity: O(log n) per batch of transactions, plus their changes
        ///   (over a custom store, its history fetch's).
        public mutating func next() async throws -> DefaultHistoryTransaction? {
            guard container.engineStore != nil else { return try await nextFromStore() }
            while pending.isEmpty {
                guard !Task.isCancelled, let store = container.engineStore else { return nil }
                store.catchUp()
                let version = store.current
                let history = version.history
                if checksExpiry, history.horizon > position {
                    throw SwiftDataError(
                        .historyTokenExpired,
                        "history after generation \(position) was deleted (up to generation \(history.horizon))")
                }
                history.forEach(after: position) { transaction in
                    pending.append(transaction)
                    return pending.count < Self.batch
                }
                pending.reverse()
                if pending.isEmpty { await store.waitForCommit(after: version.generation) }
            }
            let stored = pending.removeLast()
            position = stored.generation
            checksExpiry = true
            return container.transaction(stored)
        }

        /// `next()` over a custom store that is `HistoryObserving`: its history after
        /// the position, a batch at a time, and its wait when there is none.
        private mutating func nextFromStore() async throws -> DefaultHistoryTransaction? {
            guard let store = (container.backend as? DataStoreBackend)?.store, store.observesHistory else { return nil }
            while pendingFromStore.isEmpty {
                guard !Task.isCancelled else { return nil }
                // Without a start token, and before anything was delivered, every kept
                // transaction is new (and none is expired).
                let after = checksExpiry ? DefaultHistoryToken(id: Int(clamping: position)) : nil
                var descriptor = HistoryDescriptor<DefaultHistoryTransaction>(predicate: after.map { after in
                    #Predicate<DefaultHistoryTransaction> { $0.token > after }
                })
                descriptor.fetchLimit = UInt64(Self.batch)
                let fetched = try store.fetchHistory(descriptor)
                pendingFromStore = fetched.reversed()
                if fetched.isEmpty { await store.waitForHistory(after: after) }
            }
            let transaction = pendingFromStore.removeLast()
            position = UInt64(clamping: transaction.token.id)
            checksExpiry = true
            return transaction
        }
    }
}
