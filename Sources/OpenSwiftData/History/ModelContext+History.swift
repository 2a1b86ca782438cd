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
        // A custom store answers if it is `HistoryProviding`, else `unsupportedFeature`.
        if let external = container.external { return try external.fetchHistory(descriptor) }
        guard let descriptor = descriptor as? HistoryDescriptor<DefaultHistoryTransaction> else {
            throw SwiftDataError(.invalidTransactionFetchRequest, "the store keeps DefaultHistoryTransaction, not \(T.self)")
        }
        return try container.history(matching: descriptor).map { $0 as! T }
    }

    /// Deletes the history transactions `descriptor` selects, durably. Fetches
    /// from a token before the latest deleted transaction then throw
    /// `historyTokenExpired`.
    /// - Complexity: O(history)
    public func deleteHistory<T>(_ descriptor: HistoryDescriptor<T>) throws where T: HistoryTransaction {
        if let external = container.external { return try external.deleteHistory(descriptor) }
        guard let descriptor = descriptor as? HistoryDescriptor<DefaultHistoryTransaction> else {
            throw SwiftDataError(.invalidTransactionFetchRequest, "the store keeps DefaultHistoryTransaction, not \(T.self)")
        }
        try container.deleteHistory(matching: descriptor)
    }
}
