import Logging
@_spi(DataStores) import OpenSwiftData
import PostgresNIO

/// How the store's statements reach the server: each on a connection leased from
/// the pool for it, or, inside `transaction(_:)`, on the transaction's connection.
extension PostgresStore {
    /// The connection a transaction holds (`transaction(_:)`), which every statement
    /// run in its body, on its thread, uses.
    struct Lease: Sendable {
        /// The store whose transaction it is (another store's statements lease their own).
        let store: ObjectIdentifier
        let connection: PostgresConnection
    }

    @TaskLocal static var lease: Lease?

    /// How often a transaction runs before its failure is the caller's: deadlocks
    /// and history order (`RetryableFailure`) are given this many attempts, a unique key
    /// another save inserted meanwhile `uniqueKeyAttempts` (the second sees the key's
    /// row and upserts onto it; a key the save itself doubles fails every time).
    static let transactionAttempts = 10
    static let uniqueKeyAttempts = 3

    /// A failure that running the transaction again may not meet: a deadlock or a
    /// serialization failure (PostgreSQL's SQLSTATE 40P01, 40001), or a row this save
    /// locked that a transaction newer than it wrote (`PostgresStore+History`).
    struct RetryableFailure: Error {
        let message: String
    }

    /// Runs one statement: on the transaction's connection inside `transaction(_:)`,
    /// else on one leased for it.
    /// - Throws: `SwiftDataError.uniqueConstraintViolation` for a unique index's
    ///   refusal, `RetryableFailure` in a transaction, else `PostgresStoreError`
    ///   (`.server` for a statement the server refused, `.connection` when there was
    ///   no connection or it failed).
    @discardableResult
    func execute(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) throws -> PostgresQueryResult {
        if let lease = Self.lease, lease.store == ObjectIdentifier(self) {
            return try run(sql, binds, on: lease.connection, retryable: true)
        }
        return try pool.withConnection { try run(sql, binds, on: $0, retryable: false) }
    }

    func run(_ sql: String, _ binds: PostgresBindings, on connection: PostgresConnection, retryable: Bool) throws -> PostgresQueryResult {
        do {
            return try connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: configuration.logger).wait()
        } catch {
            throw Self.storeError(error, retryable: retryable)
        }
    }

    /// What a statement's failure is to the store's callers (see `execute`).
    static func storeError(_ error: any Error, retryable: Bool) -> any Error {
        guard let error = error as? PSQLError else {
            // (The connection's channel failed: the server went away.)
            return PostgresStoreError.connection("\(error)")
        }
        let message = error.serverInfo?[.message] ?? String(describing: error.code)
        switch error.serverInfo?[.sqlState] {
        case "23505"?: return SwiftDataError.uniqueConstraintViolation
        case let state? where retryable && (state == "40P01" || state == "40001"): return RetryableFailure(message: message)
        default: return PostgresStoreError.server(message)
        }
    }

    /// Runs a fetch's statement: on a read replica that has replayed what the fetch
    /// must see (`PostgresStore+Replicas`), else on the primary; prepared when it came
    /// before (`PostgresStore+Prepared`). Inside a transaction it is `execute`: a
    /// save reads what it writes.
    /// - Parameters:
    ///   - kinds: the types of `binds` (`PostgresPredicate.bindKinds`).
    ///   - each: what the caller keeps of a row, made as the row arrives, in the task
    ///     that reads the rows (on the primary, on the connection's event loop; on a
    ///     replica, on its pool's), so the calling thread has only the results to
    ///     take. Inside a transaction, on the calling thread once the rows are read.
    func read<R: Sendable>(
        _ sql: String, _ binds: PostgresBindings, kinds: String, for editingState: EditingState,
        each: @escaping @Sendable (PostgresRow) throws -> R
    ) throws -> [R] {
        if let lease = Self.lease, lease.store == ObjectIdentifier(self) {
            return try run(sql, binds, on: lease.connection, retryable: true).rows.map(each)
        }
        let logger = configuration.logger
        if let rows = replicas.read(for: editingState.id, { connection, pool in
            try pool.wait {
                try await Self.fetchRows(sql, binds, kinds: kinds, on: connection, statements: pool.statements, logger: logger, each: each)
            }
        }) {
            return rows
        }
        // Leased, run and given back in one task: the calling thread waits once.
        return try pool.withConnectionTask { [pool] connection in
            try await Self.fetchRows(sql, binds, kinds: kinds, on: connection, statements: pool.statements, logger: logger, each: each)
        }
    }

    /// Runs `body` in one transaction on one leased connection: committed when it
    /// returns, rolled back when it throws. A deadlock, a save that would be out of
    /// history's order, or a unique key inserted meanwhile runs it again (`body` must
    /// change nothing but the database), up to `transactionAttempts` times.
    func transaction<R>(_ body: () throws -> R) throws -> R {
        try pool.withConnection { connection in
            try Self.$lease.withValue(Lease(store: ObjectIdentifier(self), connection: connection)) {
                var attempt = 1
                while true {
                    try execute("BEGIN")
                    do {
                        let result = try body()
                        try execute("COMMIT")
                        return result
                    } catch {
                        _ = try? execute("ROLLBACK")
                        switch error {
                        case let failure as RetryableFailure:
                            guard attempt < Self.transactionAttempts else {
                                throw PostgresStoreError.server("\(failure.message) (\(attempt) attempts)")
                            }
                        case SwiftDataError.uniqueConstraintViolation where attempt < Self.uniqueKeyAttempts:
                            break
                        default:
                            throw error
                        }
                        attempt += 1
                    }
                }
            }
        }
    }
}
