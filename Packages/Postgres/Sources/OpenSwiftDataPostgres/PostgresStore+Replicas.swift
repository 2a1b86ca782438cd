import Foundation
import Logging
@_spi(DataStores) import OpenSwiftData
import PostgresNIO
import Synchronization

/// Fetches served by hot standbys (`PostgresStoreConfiguration.readReplicas`), with
/// read-your-writes.
///
/// A standby replays the primary's write-ahead log some time after each commit, so
/// a fetch may go to it only when it has replayed past every save the fetch must
/// see: every save made through this store (`ReplicaConsistency.store`), or its
/// context's own (`.context`), and in both cases what the store wrote when it
/// opened (its tables) and erased. After each save the store notes the primary's WAL
/// insert position (`pg_current_wal_insert_lsn()`, past the save's commit record)
/// for the saving context and for the store. A fetch compares it with the position a
/// standby last reported replaying (`pg_last_wal_replay_lsn()`), asks the standby
/// again when that is behind, and reads from the primary when the standby still is:
/// it never waits for a standby.
///
/// Saves, history, and every statement of a save's transaction stay on the primary.
/// A standby that cannot be reached, or has no connection free within
/// `PostgresReplicas.patience`, is skipped for `PostgresReplicas.restTime`; a
/// statement it refuses (a query cancelled by a conflict with recovery, a column a
/// migration added that it has not replayed yet) runs on the primary instead.
/// Replicas add capacity, never a failure.
///
/// Each entry of `readReplicas` must be one server: a standby's replayed position is
/// remembered per entry, so a load balancer in front of several standbys could send
/// a fetch to one that is further behind than the one that answered.
final class PostgresReplicas: Sendable {
    /// One standby: its connections and what it last said it had replayed.
    final class Replica: Sendable {
        let name: String
        let pool: PostgresConnectionPool
        /// The WAL position the standby last reported replaying (0: not asked yet).
        let replayed = Atomic<UInt64>(0)
        /// Until when (`DispatchTime` nanoseconds) the standby is skipped after a failure.
        let restingUntil = Atomic<UInt64>(0)

        init(name: String, pool: PostgresConnectionPool) {
            self.name = name
            self.pool = pool
        }
    }

    /// What fetches must see, as WAL positions. `unknown` stands for a save whose
    /// position the primary could not give (the connection failed after its commit):
    /// reads that must see it go to the primary until a position is known again.
    private struct Positions {
        /// Each context's last save.
        var byContext: [UUID: UInt64] = [:]
        /// The store's last save, any context's.
        var store: UInt64 = 0
        /// What every fetch must see: the tables the store made when it opened, an erase.
        var floor: UInt64 = 0
        /// Notes that failed so far, and how many had when the store's position (or
        /// the floor) became unknown: a position asked for after that failure is past
        /// what it stood for, and replaces it.
        var failures = 0
        var storeUnknownAfter = 0
        var floorUnknownAfter = 0
    }

    static let unknown = UInt64.max

    let replicas: [Replica]
    let consistency: PostgresStoreConfiguration.ReplicaConsistency
    private let logger: Logger
    private let positions = Mutex(Positions())
    /// Turns the standbys over, so fetches spread across them.
    private let turn = Atomic<Int>(0)

    /// How long a standby that failed is left alone.
    static let restTime: Duration = .seconds(5)
    /// How long a fetch waits for a standby's connection before the primary serves it
    /// (and the standby rests): one that is down, or whose connections are all busy.
    static let patience: Duration = .seconds(1)

    init(_ configuration: PostgresStoreConfiguration, tls: PostgresClient.Configuration.TLS) {
        consistency = configuration.replicaConsistency
        logger = configuration.logger
        replicas = configuration.readReplicas.map { replica in
            var client = PostgresClient.Configuration(
                host: replica.host, port: replica.port, username: configuration.username,
                password: configuration.password, database: configuration.database, tls: tls)
            client.options.maximumConnections = configuration.poolSize
            return Replica(name: "\(replica.host):\(replica.port)", pool: PostgresConnectionPool(client, logger: configuration.logger))
        }
    }

    func shutdown() {
        for replica in replicas { replica.pool.shutdown() }
    }

    /// A note of a position about to be asked for: `saved(by:at:note:)` takes it back.
    func beginNote() -> Int {
        positions.withLock { $0.failures }
    }

    /// Notes a save of `context` that committed before the primary's WAL reached
    /// `position` (nil: the primary could not say). `note` is `beginNote()`'s, taken
    /// after the commit and before the position was asked for.
    func saved(by context: UUID, at position: UInt64?, note: Int) {
        positions.withLock { state in
            guard let position else {
                state.failures += 1
                state.byContext[context] = Self.unknown
                state.store = Self.unknown
                state.storeUnknownAfter = state.failures
                return
            }
            // A context saves one save at a time: its newest position replaces an unknown one.
            state.byContext[context] = position
            if state.store == Self.unknown {
                // Only a position asked for after the failed note is past its save.
                if note >= state.storeUnknownAfter { state.store = position }
            } else {
                state.store = max(state.store, position)
            }
            if state.floor == Self.unknown, note >= state.floorUnknownAfter { state.floor = position }
        }
    }

    /// Notes what every fetch must see from now on (nil: the primary could not say,
    /// and every fetch goes to it until a position asked for later is known).
    func raiseFloor(to position: UInt64?, note: Int) {
        positions.withLock { state in
            guard let position else {
                state.failures += 1
                state.floor = Self.unknown
                state.floorUnknownAfter = state.failures
                return
            }
            if state.floor == Self.unknown {
                if note >= state.floorUnknownAfter { state.floor = position }
            } else {
                state.floor = max(state.floor, position)
            }
        }
    }

    /// Forgets a context that ended.
    func forget(_ context: UUID) {
        _ = positions.withLock { $0.byContext.removeValue(forKey: context) }
    }

    /// The WAL position a fetch of `context` must see replayed.
    private func required(by context: UUID) -> UInt64 {
        positions.withLock { state in
            switch consistency {
            case .context: max(state.floor, state.byContext[context] ?? 0)
            case .store: max(state.floor, state.store)
            }
        }
    }

    /// Runs `read` on a standby that has replayed every save the context must see, or
    /// returns nil when none has (or each one tried failed): the caller reads from
    /// the primary.
    func read<R>(for context: UUID, _ read: (PostgresConnection, PostgresConnectionPool) throws -> R) -> R? {
        guard !replicas.isEmpty else { return nil }
        let needed = required(by: context)
        guard needed != Self.unknown else { return nil }
        let start = turn.add(1, ordering: .relaxed).oldValue
        let now = DispatchTime.now().uptimeNanoseconds
        for offset in 0..<replicas.count {
            let replica = replicas[(start + offset) % replicas.count]
            guard replica.restingUntil.load(ordering: .relaxed) <= now else { continue }
            do {
                let result: R? = try replica.pool.withConnection(patience: Self.patience) { connection in
                    if replica.replayed.load(ordering: .relaxed) < needed {
                        let position = try Self.replayPosition(on: connection, logger: logger)
                        replica.replayed.store(position, ordering: .relaxed)
                        guard position >= needed else { return nil }
                    }
                    return try read(connection, replica.pool)
                }
                if let result { return result }
            } catch PostgresStoreError.connection(let message) {
                // Unreachable, or no connection in time: the standby rests.
                let rest = UInt64(Self.restTime.components.seconds) * 1_000_000_000
                replica.restingUntil.store(DispatchTime.now().uptimeNanoseconds + rest, ordering: .relaxed)
                logger.warning("a read replica cannot be reached; the primary serves fetches for a while", metadata: [
                    "replica": "\(replica.name)", "error": "\(message)",
                ])
            } catch {
                // Refused here (a recovery conflict, a column not replayed yet): the
                // primary runs it, and says so if it refuses it too.
                logger.debug("a read replica refused a fetch; the primary runs it", metadata: [
                    "replica": "\(replica.name)", "error": "\(error)",
                ])
                return nil
            }
        }
        return nil
    }

    /// The WAL position `connection`'s standby has replayed. 0 for a server that is
    /// not a standby (it never serves a fetch that must see a save).
    private static func replayPosition(on connection: PostgresConnection, logger: Logger) throws -> UInt64 {
        let rows = try connection.query("SELECT pg_last_wal_replay_lsn()::text", logger: logger).wait()
        guard let text = try rows.first?.makeRandomAccess()[0].decode(String?.self) else { return 0 }
        return walPosition(text) ?? 0
    }

    /// A WAL position as PostgreSQL prints one (`16/B374D848`: two hexadecimal halves).
    static func walPosition(_ text: String) -> UInt64? {
        let halves = text.split(separator: "/")
        guard halves.count == 2, let high = UInt64(halves[0], radix: 16), let low = UInt64(halves[1], radix: 16),
              high <= UInt64(UInt32.max), low <= UInt64(UInt32.max)
        else { return nil }
        return high << 32 | low
    }

    /// The end of the last record written before insert position `position`: where
    /// a standby's replay stops. They differ when the record ended a WAL page, and the
    /// insert position is past the next page's header (24 bytes, or 40 at the start
    /// of a 16 MiB segment).
    static func recordEnd(beforeInsertPosition position: UInt64) -> UInt64 {
        let page: UInt64 = 8_192, segment: UInt64 = 16 << 20
        if position % segment == 40 { return position - 40 }
        if position % page == 24 { return position - 24 }
        return position
    }
}

extension PostgresStore {
    /// After a save committed: one statement notifies the change feeds' listeners
    /// (`PostgresStore+Notifications`; outside the save's transaction, where NOTIFY's
    /// lock would make commits one at a time) and, with replicas, notes where the
    /// primary's WAL is, past the save's commit record, so a standby that has
    /// replayed this far shows the save. When that fails (the connection failed after
    /// the commit), the save still succeeds: other processes' feeds learn of it at
    /// their next notification or look, and fetches that must see it go to the
    /// primary until a later save's position is known.
    func announceSave(by editingState: EditingState) {
        let note = replicas.beginNote()
        var position: UInt64?
        do {
            var binds = PostgresBindings()
            binds.append(Self.changeChannel)
            let rows = try execute("SELECT pg_notify($1, ''), pg_current_wal_insert_lsn()::text", binds)
            if let text = try rows.rows.first?.makeRandomAccess()[1].decode(String.self),
               let known = PostgresReplicas.walPosition(text) {
                position = PostgresReplicas.recordEnd(beforeInsertPosition: known)
            }
        } catch {
            configuration.logger.warning("no notification or WAL position after a save (it is saved)", metadata: [
                "error": "\(error)",
            ])
        }
        if !replicas.replicas.isEmpty { replicas.saved(by: editingState.id, at: position, note: note) }
    }

    /// With replicas, notes what every fetch must see from now on: the primary's WAL
    /// position after the store made its tables or erased its rows.
    func raiseReplicaFloor() {
        guard !replicas.replicas.isEmpty else { return }
        let note = replicas.beginNote()
        let text = try? execute("SELECT pg_current_wal_insert_lsn()::text").rows.first?.makeRandomAccess()[0].decode(String.self)
        let position = text.flatMap(PostgresReplicas.walPosition).map { PostgresReplicas.recordEnd(beforeInsertPosition: $0) }
        replicas.raiseFloor(to: position, note: note)
    }
}
