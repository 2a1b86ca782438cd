import Foundation
@_spi(DataStores) import OpenSwiftData
import OpenSwiftDataStore
import PostgresNIO

/// History in PostgreSQL: table `osd_history`, one row per save that changed
/// something (`generation`, `timestamp`, `author`, and its changes as JSON), written in
/// the save's transaction; `osd_store.history_horizon` is the latest generation
/// deleted. Saves that write history take one advisory lock, so generations commit
/// in order and a reader following tokens never skips one committed late.
extension PostgresStore: HistoryProviding {
    public typealias HistoryType = DefaultHistoryTransaction
    public typealias TokenType = DefaultHistoryToken

    public static var historyType: DefaultHistoryTransaction.Type { DefaultHistoryTransaction.self }

    /// The transactions `descriptor` selects, oldest first unless it sorts them.
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
        }
    }

    /// The whole table as the engine's log.
    private func historyLog() throws -> HistoryLog {
        var transactions: [StoredTransaction] = []
        for row in try execute("SELECT generation, timestamp, author, changes FROM osd_history ORDER BY generation").rows {
            let cells = row.makeRandomAccess()
            let changes = try JSONDecoder().decode([CodedChange].self, from: Data(try cells[3].decode(String.self).utf8))
            transactions.append(StoredTransaction(
                generation: UInt64(try cells[0].decode(Int64.self)),
                timestamp: Date(timeIntervalSinceReferenceDate: try cells[1].decode(Double.self)),
                author: try cells[2].decode(String?.self), changes: changes.map(\.change)))
        }
        let horizon = try execute("SELECT history_horizon FROM osd_store WHERE one = 1").rows.first
            .map { try $0.makeRandomAccess()[0].decode(Int64.self) } ?? 0
        return HistoryLog(transactions: transactions, horizon: UInt64(max(0, horizon)))
    }

    /// Records one save's changes, in its transaction (after the advisory lock).
    func recordHistory(_ changes: [StoredChange], author: String?) throws {
        guard !changes.isEmpty else { return }
        var binds = PostgresBindings()
        binds.append(Date().timeIntervalSinceReferenceDate)
        if let author { binds.append(author) } else { binds.appendNull() }
        binds.append(String(decoding: try JSONEncoder().encode(changes.map(CodedChange.init)), as: UTF8.self))
        try execute(
            "INSERT INTO osd_history (generation, timestamp, author, changes) "
                + "SELECT GREATEST(COALESCE(MAX(generation), 0), (SELECT history_horizon FROM osd_store WHERE one = 1)) + 1, $1, $2, $3 FROM osd_history",
            binds)
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
