/// A store whose history other processes add to, and that learns when they do: what
/// lets ``ModelContainer/historyTransactions(after:)`` follow a custom store without
/// polling. *Additive*: Apple's SwiftData has no such protocol.
///
/// The feed fetches history after its last token (`fetchHistory(_:)` with
/// `$0.token > token`) and, when that finds nothing, calls
/// ``waitForHistory(after:)``, then fetches again. The store decides how it waits:
/// a database server's store listens for its commit notifications (as
/// `PostgresStore` does with `LISTEN`/`NOTIFY`), so a save in any process wakes
/// every feed. Order and completeness are the history fetch's: a wake-up only means
/// "look again".
///
/// ```swift
/// extension ServerStore: HistoryObserving {
///     func waitForHistory(after token: DefaultHistoryToken?) async {
///         await commits.wait { try self.hasHistory(after: token) }
///     }
/// }
/// ```
public protocol HistoryObserving: HistoryProviding, Sendable where HistoryType == DefaultHistoryTransaction {
    /// Returns once `fetchHistory(_:)` may find transactions after `token` (after
    /// none when nil), or may throw `historyTokenExpired` for it (history after it
    /// was deleted), or when the task is cancelled.
    ///
    /// Returning early costs a fetch that finds nothing, after which the feed calls
    /// again; returning late delays the feed. It must not return at once, every
    /// time, while nothing is there: the feed would spin.
    func waitForHistory(after token: DefaultHistoryToken?) async
}
