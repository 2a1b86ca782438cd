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
/// context's own (`.context`). After each save the store notes the primary's WAL
/// insert position (`pg_current_wal_insert_lsn()`, past the save's commit record)
/// for the saving context and for the store. A fetch compares it with the position a
/// standby last reported replaying (`pg_last_wal_replay_lsn()`), asks the standby
/// again when that is behind, and reads from the primary when the standby still is:
/// it never waits for a standby.
///
/// Saves, history, and every statement of a save's transaction stay on the primary.
/// A standby that fails a fetch (unreachable, no connection free within
/// `PostgresReplicas.patience`, or a query cancelled by a conflict with recovery) is
/// skipped for `PostgresReplicas.restTime` and the fetch runs on the primary:
/// replicas add capacity, never a failure.
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

    let replicas: [Replica]
    let consistency: PostgresStoreConfiguration.ReplicaConsistency
    private let logger: Logger
    /// Each context's last save: the WAL position after its commit.
    private let savedBy = Mutex<[UUID: UInt64]>([:])
    /// The store's last save (any context's).
    private let lastSave = Atomic<UInt64>(0)
    /// Turns the standbys over, so fetches spread across them.
    private let turn = Atomic<Int>(0)

    /// How long a standby that failed is left alone.
    static let restTime: Duration = .seconds(5)
    /// How long a fetch waits for a standby's connection before the primary serves it
    /// (and the standby rests): one that is down, or whose connections are all busy.
    static let patience: Duration = .milliseconds(500)

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

    /// Notes a save of `context` that committed before the primary's WAL reached `position`.
    func saved(by context: UUID, at position: UInt64) {
        savedBy.withLock { $0[context] = max($0[context] ?? 0, position) }
        var current = lastSave.load(ordering: .relaxed)
        while current < position {
            let (exchanged, now) = lastSave.compareExchange(expected: current, desired: position, ordering: .relaxed)
            if exchanged { break }
            current = now
        }
    }

    /// Forgets a context that ended.
    func forget(_ context: UUID) {
        _ = savedBy.withLock { $0.removeValue(forKey: context) }
    }

    /// The WAL position a fetch of `context` must see replayed.
    private func required(by context: UUID) -> UInt64 {
        switch consistency {
        case .context: savedBy.withLock { $0[context] ?? 0 }
        case .store: lastSave.load(ordering: .relaxed)
        }
    }

    /// Runs `read` on a standby that has replayed every save the context must see, or
    /// returns nil when none has (or each one tried failed): the caller reads from
    /// the primary.
    func read<R>(for context: UUID, _ read: (PostgresConnection) throws -> R) -> R? {
        guard !replicas.isEmpty else { return nil }
        let needed = required(by: context)
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
                    return try read(connection)
                }
                if let result { return result }
            } catch {
                // Unreachable, or a query cancelled by recovery: the primary serves,
                // and the standby rests.
                let rest = UInt64(Self.restTime.components.seconds) * 1_000_000_000
                replica.restingUntil.store(DispatchTime.now().uptimeNanoseconds + rest, ordering: .relaxed)
                logger.warning("a read replica failed a fetch; the primary serves fetches for a while", metadata: [
                    "replica": "\(replica.name)", "error": "\(error)",
                ])
            }
        }
        return nil
    }

    /// The WAL position `connection`'s standby has replayed. 0 for a server that is not a standby (it never serves a fetch that must see a save).
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
}

extension PostgresStore {
    /// Notes, after a save committed, where the primary's WAL is: past the save's
    /// commit record, so a standby that has replayed this far shows the save. When the
    /// primary cannot say (the connection failed after the commit), the save is
    /// noted as never replayed: the context reads from the primary from then on
    /// (with `.store`, every context), and the save still succeeds.
    func noteSave(by editingState: EditingState) {
        var position = UInt64.max
        do {
            let rows = try execute("SELECT pg_current_wal_insert_lsn()::text")
            if let text = try rows.rows.first?.makeRandomAccess()[0].decode(String.self),
               let known = PostgresReplicas.walPosition(text) {
                position = known
            }
        } catch {
            configuration.logger.warning("no WAL position after a save: its context reads from the primary", metadata: [
                "error": "\(error)",
            ])
        }
        replicas.saved(by: editingState.id, at: position)
    }
}
