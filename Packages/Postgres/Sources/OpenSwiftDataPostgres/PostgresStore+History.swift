import Foundation
@_spi(DataStores) import OpenSwiftData
import OpenSwiftDataStore
import PostgresNIO

/// History in PostgreSQL: table `osd_history`, one row per save that changed
/// something (`generation`, `timestamp`, `author`, and its changes as JSON), written in
/// the save's transaction; `osd_store.history_horizon` is the latest generation
/// deleted.
///
/// **Order without a lock** (the transactional outbox's technique; Decisions.md,
/// "PostgresStore's history is ordered by transaction id"). A save's generation is
/// its transaction's id (`pg_current_xact_id()`, 64 bits, never reused) plus
/// `osd_store.history_base` (0 but in a database whose older history was numbered
/// otherwise: `setUpHistory`). Saves run in parallel and may commit out of their ids'
/// order, so a reader sees only the transactions older than every one still running
/// (`pg_snapshot_xmin(pg_current_snapshot())`): every transaction it does not see yet
/// has a greater generation than all it saw, and a reader following tokens never skips
/// one that committed late. Where two saves write one row, the one that writes it
/// second must have the greater id: a save that locks a row a newer transaction wrote
/// runs again (`checkHistoryOrder`), so a reader never sees a row's changes out of order.
extension PostgresStore: HistoryProviding {
    public typealias HistoryType = DefaultHistoryTransaction
    public typealias TokenType = DefaultHistoryToken

    public static var historyType: DefaultHistoryTransaction.Type { DefaultHistoryTransaction.self }

    /// The transactions `descriptor` selects, oldest first unless it sorts them:
    /// those older than every transaction still running on the server, after waiting
    /// up to a second for the ones committed before the call to be so.
    /// - Throws: `SwiftDataError.historyTokenExpired` for a token at or before the
    ///   latest deleted transaction.
    /// - Complexity: O(history): the table is read whole.
    public func fetchHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws -> [DefaultHistoryTransaction] {
        try historyQueries.history(try historyLog(), matching: descriptor)
    }

    /// Deletes the transactions `descriptor` selects; tokens up to the latest deleted expire.
    public func deleteHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws {
        let log = try historyLog()
        let doomed = try historyQueries.history(log, matching: descriptor, checkingExpiry: false).map(\.transactionIdentifier)
        guard let latest = doomed.max() else { return }
        try transaction {
            var binds = PostgresBindings()
            binds.append(doomed)
            try execute("DELETE FROM osd_history WHERE generation = ANY($1)", binds)
            var horizon = PostgresBindings()
            horizon.append(latest)
            try execute("UPDATE osd_store SET history_horizon = GREATEST(history_horizon, $1) WHERE one = 1", horizon)
            try notifyHistoryDeleted()
        }
    }

    /// How long `historyLog()` waits for the transactions that hold back those
    /// committed before it began.
    static let historyWait: TimeInterval = 1

    /// The transactions a reader may see, as the engine's log: every committed one
    /// older than all still running. When transactions committed before the call are
    /// held back by older ones still running (saves begun earlier, or any writing
    /// transaction of the server's), it reads again until they show, for up to
    /// `historyWait`, so a context finds its own save in history (once the saves
    /// begun before it ended); what commits meanwhile is not waited for.
    private func historyLog() throws -> HistoryLog {
        let deadline = Date().addingTimeInterval(Self.historyWait)
        var pause = 0.001
        var read = try visibleHistory()
        let target = read.newestCommitted
        while let target, read.visibleBelow <= target, Date() < deadline {
            Thread.sleep(forTimeInterval: pause)
            pause = min(pause * 2, 0.05)
            read = try visibleHistory()
        }
        return read.log
    }

    /// The transactions older than every one running, in one statement (one
    /// snapshot, so the horizon and the rows agree); the generation below which they
    /// are, and the newest committed one's (visible or not).
    private func visibleHistory() throws -> (log: HistoryLog, visibleBelow: Int64, newestCommitted: Int64?) {
        let rows = try execute("""
            WITH bound AS (SELECT history_horizon, history_base + pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS below
                           FROM osd_store WHERE one = 1)
            SELECT bound.history_horizon, bound.below, h.generation, h.timestamp, h.author, h.changes
            FROM bound LEFT JOIN osd_history h ON true ORDER BY h.generation
            """).rows
        var transactions: [StoredTransaction] = []
        var horizon: Int64 = 0
        var below = Int64.max
        var newest: Int64?
        for row in rows {
            let cells = row.makeRandomAccess()
            horizon = try cells[0].decode(Int64.self)
            below = try cells[1].decode(Int64.self)
            guard let generation = try cells[2].decode(Int64?.self) else { continue }
            newest = generation
            guard generation < below else { continue }
            let changes = try JSONDecoder().decode([CodedChange].self, from: Data(try cells[5].decode(String.self).utf8))
            transactions.append(StoredTransaction(
                generation: UInt64(generation),
                timestamp: Date(timeIntervalSinceReferenceDate: try cells[3].decode(Double.self)),
                author: try cells[4].decode(String?.self), changes: changes.map(\.change)))
        }
        return (HistoryLog(transactions: transactions, horizon: UInt64(max(0, horizon))), below, newest)
    }

    /// Records one save's changes, in its transaction, under its transaction's id.
    /// (The save notifies the change feeds' listeners after it commits:
    /// `PostgresStore.announceSave(by:)`.)
    func recordHistory(_ changes: [StoredChange], author: String?) throws {
        guard !changes.isEmpty else { return }
        var binds = PostgresBindings()
        binds.append(Date().timeIntervalSinceReferenceDate)
        if let author { binds.append(author) } else { binds.appendNull() }
        binds.append(String(decoding: try JSONEncoder().encode(changes.map(CodedChange.init)), as: UTF8.self))
        try execute(
            "INSERT INTO osd_history (generation, timestamp, author, changes) "
                + "SELECT history_base + pg_current_xact_id()::text::bigint, $1, $2, $3 FROM osd_store WHERE one = 1",
            binds)
    }

    /// Creates the history table, and numbers this database's history on from its
    /// latest generation: `history_base` is 0 in a new database, and in one whose
    /// generations were counted (before transaction ids numbered them) or which was
    /// restored from a dump into another server (whose ids start again) it is raised,
    /// so every new generation is above every stored one and the horizon. (Every
    /// server process opening the database must run this version.)
    func setUpHistory() throws {
        try execute("ALTER TABLE osd_store ADD COLUMN IF NOT EXISTS history_horizon bigint NOT NULL DEFAULT 0")
        try execute("ALTER TABLE osd_store ADD COLUMN IF NOT EXISTS history_base bigint NOT NULL DEFAULT 0")
        try execute(
            "CREATE TABLE IF NOT EXISTS osd_history (generation bigint PRIMARY KEY, timestamp double precision NOT NULL, "
                + "author text, changes text NOT NULL)")
        try execute("""
            UPDATE osd_store SET history_base
                = GREATEST(history_horizon, (SELECT COALESCE(MAX(generation), 0) FROM osd_history)) - pg_current_xact_id()::text::bigint + 1
            WHERE one = 1 AND history_base + pg_current_xact_id()::text::bigint
                <= GREATEST(history_horizon, (SELECT COALESCE(MAX(generation), 0) FROM osd_history))
            """)
    }

    /// A column that says whether the row's version was written by a transaction
    /// newer than this one (its `xmin`, 32 bits, against the low 32 bits of this
    /// transaction's id, modulo 2³², as PostgreSQL compares ids; 0–2 are the ids of
    /// frozen and bootstrap rows, older than every transaction).
    static let writtenByANewerTransaction = """
        (xmin::text::bigint > 2 AND (xmin::text::bigint - pg_current_xact_id()::text::bigint % 4294967296 + 4294967296) \
        % 4294967296 BETWEEN 1 AND 2147483647)
        """

    /// Throws `RetryableFailure` when a row this save locked was written by a newer
    /// transaction (`writtenByANewerTransaction`'s cell), which committed while this
    /// one waited for its lock: its history would come after this save's, though its
    /// write came first. Run again, the save has a newer id than that transaction.
    func checkHistoryOrder(_ writtenByANewerTransaction: PostgresCell) throws {
        if try writtenByANewerTransaction.decode(Bool.self) {
            throw RetryableFailure(message: "a row this save changes was written by a newer transaction")
        }
    }
}

/// A `StoredChange` in the JSON of `osd_history.changes`.
struct CodedChange: Codable {
    /// `i`nserted, `u`pdated or `d`eleted.
    var kind: String
    var entity: Int
    var row: Int64
    var slots: [Int]?
    /// Preserved values by slot, as `[slot, value]` pairs.
    var preserved: [PreservedValue]?

    struct PreservedValue: Codable {
        var slot: Int
        var value: TaggedValue
    }

    init(_ change: StoredChange) {
        switch change {
        case let .inserted(entity, first, _):
            self.init(kind: "i", entity: entity, row: first.rawValue)
        case let .updated(entity, id, slots):
            self.init(kind: "u", entity: entity, row: id.rawValue, slots: slots)
        case let .deleted(entity, id, preserved):
            self.init(
                kind: "d", entity: entity, row: id.rawValue,
                preserved: preserved.keys.sorted().map { PreservedValue(slot: $0, value: TaggedValue(value: preserved[$0]!)) })
        }
    }

    init(kind: String, entity: Int, row: Int64, slots: [Int]? = nil, preserved: [PreservedValue]? = nil) {
        self.kind = kind
        self.entity = entity
        self.row = row
        self.slots = slots
        self.preserved = preserved
    }

    var change: StoredChange {
        switch kind {
        case "i": .inserted(entity: entity, first: RowID(row), count: 1)
        case "u": .updated(entity: entity, id: RowID(row), slots: slots ?? [])
        default:
            .deleted(entity: entity, id: RowID(row), preserved: Dictionary(
                (preserved ?? []).map { ($0.slot, $0.value.value) }, uniquingKeysWith: { a, _ in a }))
        }
    }
}
