import Foundation

/// Which history transactions to fetch or delete, in what order, how many.
public struct HistoryDescriptor<TransactionType> where TransactionType: HistoryTransaction {
    /// Which transactions to select, usually by token (`$0.token > lastToken`); `nil`
    /// selects them all.
    public var predicate: Predicate<TransactionType>?
    /// The most transactions a fetch returns; 0 means no limit.
    public var fetchLimit: UInt64 = 0
    /// Empty: the order the commits happened in.
    public var sortBy: [SortDescriptor<TransactionType>]

    /// Creates a descriptor selecting the transactions `predicate` matches, in commit
    /// order, without a limit.
    public init(predicate: Predicate<TransactionType>? = nil) {
        self.predicate = predicate
        self.sortBy = []
    }

    /// Creates a descriptor selecting the transactions `predicate` matches, ordered by
    /// `sortBy`.
    public init(predicate: Predicate<TransactionType>? = nil, sortBy: [SortDescriptor<TransactionType>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
    }
}

extension HistoryDescriptor: @unchecked Sendable {}
