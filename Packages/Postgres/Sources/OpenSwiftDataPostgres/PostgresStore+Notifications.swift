import Foundation
import Logging
import NIOPosix
@_spi(DataStores) import OpenSwiftData
import PostgresNIO
import Synchronization

/// The change feed across processes (`ModelContainer.historyTransactions(after:)`):
/// once a save has committed, the store runs `pg_notify('osd_changes', '')`
/// (`announceSave(by:)`; not inside the save's transaction, since a transaction that
/// notifies holds a lock of the whole server from its notification to the end of its
/// commit, which made commits, and their WAL flushes, one at a time). A store whose
/// feed has caught up listens on that channel (`LISTEN`, on a connection of its own,
/// outside the pool) and looks at history again when a notification comes, from any
/// process or server on the database.
///
/// A notification only says "look again": what the feed delivers, and in what order,
/// is the history fetch's (`PostgresStore+History`), so a lost notification (a
/// process that ended between its commit and its notification, a listening
/// connection that died without a word) delays a feed, by `safetyInterval` at most,
/// but never skips a transaction. A notification can come before its
/// transaction is visible under the xmin rule (an older transaction still runs); the
/// wait then reads again after short pauses until it shows. While the listening
/// connection is down, feeds look every `fallbackInterval` and the connection is
/// opened again, backing off; once it is back, every waiting feed looks at once.
extension PostgresStore: HistoryObserving {
    /// The channel saves notify; notifications do not leave their database.
    static let changeChannel = "osd_changes"

    /// Returns once history after `token` is visible, or was deleted (the feed's fetch
    /// then throws `historyTokenExpired`), or the server cannot be asked (the fetch
    /// then throws the connection's error); or when the task is cancelled.
    public func waitForHistory(after token: DefaultHistoryToken?) async {
        changes.startListening()
        var pause = Self.visibilityPauses.lowerBound
        while !Task.isCancelled {
            // Taken before the look, so a notification during it is not missed.
            let seen = changes.wakeUps
            let state: HistoryState
            do {
                state = try historyState(after: token)
            } catch {
                return
            }
            switch state {
            case .visible:
                return
            case .committedNotVisible:
                try? await Task.sleep(for: pause)
                pause = min(pause * 2, Self.visibilityPauses.upperBound)
            case .none:
                pause = Self.visibilityPauses.lowerBound
                await changes.wait(after: seen)
            }
        }
    }

    /// How long a wait pauses before looking again at history committed but not yet
    /// visible: from the first pause, doubling, up to the last.
    static let visibilityPauses: ClosedRange<Duration> = .milliseconds(2) ... .milliseconds(100)

    /// What history holds after a token, for a waiting feed.
    enum HistoryState {
        /// Transactions a fetch returns (or a deletion it reports as expiry).
        case visible
        /// Committed transactions still held back by older ones running.
        case committedNotVisible
        case none
    }

    /// One statement (one snapshot): whether history after `token` was deleted, is
    /// visible, or is committed but held back (`PostgresStore+History`'s rule).
    /// - Complexity: two lookups in `osd_history`'s primary key.
    func historyState(after token: DefaultHistoryToken?) throws -> HistoryState {
        var binds = PostgresBindings()
        binds.append(Int64(token?.id ?? 0))
        let rows = try execute("""
            WITH bound AS (SELECT history_horizon, history_base + pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS below
                           FROM osd_store WHERE one = 1)
            SELECT bound.history_horizon > $1,
                   EXISTS (SELECT 1 FROM osd_history WHERE generation > $1 AND generation < bound.below),
                   EXISTS (SELECT 1 FROM osd_history WHERE generation > $1)
            FROM bound
            """, binds).rows
        guard let row = rows.first else { throw PostgresStoreError.server("osd_store holds no row") }
        let cells = row.makeRandomAccess()
        // (Without a token nothing is expired: the feed starts at what is kept.)
        if token != nil, try cells[0].decode(Bool.self) { return .visible }
        if try cells[1].decode(Bool.self) { return .visible }
        return try cells[2].decode(Bool.self) ? .committedNotVisible : .none
    }

    /// Announces a deletion of history (an empty payload): waiting feeds look, and
    /// those whose next transaction went throw `historyTokenExpired`.
    func notifyHistoryDeleted() throws {
        var binds = PostgresBindings()
        binds.append(Self.changeChannel)
        try execute("SELECT pg_notify($1, '')", binds)
    }
}

/// A store's listening connection and the feeds waiting on it. The connection opens
/// at the first wait (a store whose feeds never waited holds none) and stays open,
/// opened again when it drops, until the store is released.
final class PostgresChangeListener: Sendable {
    private struct State {
        /// Counts what may have changed history: notifications, this store's own
        /// commits, and the connection coming up or going down.
        var wakeUps: UInt64 = 0
        var isListening = false
        var runner: Task<Void, Never>?
        var stopped = false
        var nextWaiter: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        /// Times the connection came up: how tests see that it reconnected.
        var connections = 0
    }

    private let state = Mutex(State())
    private let settings: PostgresConnection.Configuration
    private let logger: Logger
    private let executor: EventLoopTaskExecutor

    /// How often waiting feeds look at history while the listening connection is
    /// down.
    static let fallbackInterval: Duration = .seconds(1)
    /// How often they look while it is up: a notification lost after its commit, or a
    /// connection that died without a word (no FIN, no error), delays a feed no longer.
    static let safetyInterval: Duration = .seconds(30)
    /// The pauses between attempts to open the connection again: from the first,
    /// doubling, up to the last.
    static let reconnectPauses: ClosedRange<Duration> = .milliseconds(100) ... .seconds(5)

    init(settings: PostgresConnection.Configuration, logger: Logger, executor: EventLoopTaskExecutor) {
        self.settings = settings
        self.logger = logger
        self.executor = executor
    }

    var wakeUps: UInt64 { state.withLock { $0.wakeUps } }
    var isListening: Bool { state.withLock { $0.isListening } }
    var connections: Int { state.withLock { $0.connections } }

    /// Opens the listening connection, unless it is open or opening.
    func startListening() {
        state.withLock { state in
            guard state.runner == nil, !state.stopped else { return }
            // On an event loop, like the pool: it never waits for Swift's cooperative pool.
            state.runner = Task(executorPreference: executor) { await self.listen() }
        }
    }

    /// Closes the connection: the store is being released.
    func stop() {
        let (runner, waiters) = state.withLock { state in
            state.stopped = true
            defer { state.waiters = [:] }
            return (state.runner, state.waiters)
        }
        runner?.cancel()
        for waiter in waiters.values { waiter.resume() }
    }

    /// Wakes every waiting feed.
    func wake() {
        let waiters = state.withLock { state in
            state.wakeUps += 1
            defer { state.waiters = [:] }
            return state.waiters
        }
        for waiter in waiters.values { waiter.resume() }
    }

    /// Returns once something woke feeds after `seen` (`wakeUps`), or the task is
    /// cancelled; after `safetyInterval` at most, or `fallbackInterval` while the
    /// connection is down.
    func wait(after seen: UInt64) async {
        let interval = isListening ? Self.safetyInterval : Self.fallbackInterval
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.signalled(after: seen) }
            group.addTask { try? await Task.sleep(for: interval) }
            await group.next()
            group.cancelAll()
        }
    }

    private func signalled(after seen: UInt64) async {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state in
                    if state.wakeUps > seen || state.stopped || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// Listens until the task is cancelled, opening the connection again when it
    /// fails or drops.
    private func listen() async {
        var pause = Self.reconnectPauses.lowerBound
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(
                    on: MultiThreadedEventLoopGroup.singleton.any(), configuration: settings, id: 1, logger: logger)
                do {
                    try await connection.listen(on: PostgresStore.changeChannel) { notifications in
                        // Listening: what committed while it was not is looked at now.
                        setListening(true)
                        pause = Self.reconnectPauses.lowerBound
                        for try await _ in notifications { wake() }
                    }
                } catch {
                    logger.debug("the change feed's listening connection failed", metadata: ["error": "\(error)"])
                }
                try? await connection.close()
            } catch {
                logger.debug("the change feed's listening connection did not open", metadata: ["error": "\(error)"])
            }
            // Down: waiting feeds fall back to looking every `fallbackInterval`.
            setListening(false)
            guard !Task.isCancelled else { return }
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, Self.reconnectPauses.upperBound)
        }
    }

    private func setListening(_ listening: Bool) {
        state.withLock { state in
            state.isListening = listening
            if listening { state.connections += 1 }
        }
        wake()
    }
}
