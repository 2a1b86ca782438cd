import Foundation

extension ModelContext {
    /// The store's history transactions that `descriptor` selects, oldest first
    /// unless it sorts them. Changes not yet saved are not history.
    ///
    /// Only `DefaultHistoryTransaction` is stored; a descriptor of another type
    /// throws `invalidTransactionFetchRequest`. A predicate asking for transactions
    /// after a token throws `historyTokenExpired` when history after that token was
    /// deleted.
    /// - Complexity: O(log n + transactions in the predicate's token range)
    public func fetchHistory<T>(_ descriptor: HistoryDescriptor<T>) throws -> [T] where T: HistoryTransaction {
        // (A custom store answers if it is `HistoryProviding`, else `unsupportedFeature`.)
        try container.backend.fetchHistory(descriptor, of: container)
    }

    /// Deletes the history transactions `descriptor` selects, durably. Fetches
    /// from a token before the latest deleted transaction then throw
    /// `historyTokenExpired`.
    /// - Complexity: O(history)
    public func deleteHistory<T>(_ descriptor: HistoryDescriptor<T>) throws where T: HistoryTransaction {
        try container.backend.deleteHistory(descriptor, of: container)
    }
}
