import Logging
@_spi(DataStores) import OpenSwiftData
import PostgresNIO
import Synchronization

/// Fetches as prepared statements.
///
/// An unnamed statement is parsed and planned on every call, and that was a third
/// of what a unique-key look-up cost the store over hand-written postgres-nio with
/// prepared statements (README, #43). postgres-nio prepares the statements of types
/// conforming to `PostgresPreparedStatement`, each connection once per statement
/// name, and reads a type's name and text (static properties) as a call begins. A
/// fetch's text is made at run time from its predicate, so `FetchStatement` reads
/// them from a task-local value that the call binds: one type serves every text.
///
/// A text is prepared when it comes a second time (one-off fetches never are), under
/// a name this pool gives it (`PreparedStatements`), and with its parameters' types
/// in the key: a statement prepared for some types is never sent others. At most
/// `PreparedStatements.limit` texts are named; later ones run unnamed. postgres-nio
/// remembers a failed preparation on its connection for good, so a text whose
/// prepared call fails gets a new name, and after `PreparedStatements.failures`
/// failures runs unnamed from then on. Fetches inside a save's transaction run
/// unnamed: a preparation that failed there would abort the save.
final class PreparedStatements: Sendable {
    /// The most texts named (each is prepared on the connections that run it).
    static let limit = 500
    /// Failed prepared calls after which a text runs unnamed.
    static let failures = 3
    /// The most texts remembered as seen once, before forgetting them all.
    static let remembered = 4_096

    private struct State {
        var names: [String: String] = [:]
        var seenOnce: Set<String> = []
        var failed: [String: Int] = [:]
        var named = 0
    }

    private let state = Mutex(State())

    /// The name to prepare `key` (a text and its parameters' types) under, or nil
    /// when it runs unnamed.
    func name(for key: String) -> String? {
        state.withLock { state in
            if let name = state.names[key] { return name }
            guard state.names.count < Self.limit, state.failed[key, default: 0] < Self.failures else { return nil }
            guard state.seenOnce.remove(key) != nil else {
                if state.seenOnce.count >= Self.remembered { state.seenOnce.removeAll() }
                state.seenOnce.insert(key)
                return nil
            }
            state.named += 1
            let name = "osd_fetch_\(state.named)"
            state.names[key] = name
            return name
        }
    }

    /// A prepared call of `key` failed: its name is retired (postgres-nio would fail
    /// it again on that connection), and after `failures` failures it runs unnamed.
    func failed(_ key: String) {
        state.withLock { state in
            state.names[key] = nil
            state.failed[key, default: 0] += 1
        }
    }
}

/// Any fetch, as a prepared statement of postgres-nio's: its name and text are the
/// task-local `text` of the call (`PostgresStore+Prepared`).
struct FetchStatement: PostgresPreparedStatement {
    typealias Row = PostgresRow

    @TaskLocal static var text: (name: String, sql: String) = ("", "")

    static var name: String { text.name }
    static var sql: String { text.sql }

    let bindings: PostgresBindings

    func makeBindings() -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
}

extension PostgresStore {
    /// The rows of fetch statement `sql` on `connection` (not in a transaction), run
    /// as a prepared statement when it came before (`PreparedStatements`), each made
    /// into what the caller keeps of it as it arrives.
    /// - Parameter kinds: the types of `binds` (`PostgresPredicate.bindKinds`).
    /// - Throws: as `execute` does, or what `each` throws.
    static func fetchRows<R>(
        _ sql: String, _ binds: PostgresBindings, kinds: String, on connection: PostgresConnection, statements: PreparedStatements,
        logger: Logger, each: (PostgresRow) throws -> R
    ) async throws -> [R] {
        let key = kinds + " " + sql
        var results: [R] = []
        func take(_ row: PostgresRow) throws {
            do { results.append(try each(row)) } catch { throw RowFailure(error: error) }
        }
        if let name = statements.name(for: key) {
            do {
                try await FetchStatement.$text.withValue((name, sql)) {
                    for try await row in try await connection.execute(FetchStatement(bindings: binds), logger: logger) { try take(row) }
                }
                return results
            } catch let failure as RowFailure {
                throw failure.error
            } catch let error as PSQLError where error.serverInfo != nil {
                // The server refused it (perhaps its preparation): unnamed, it fails
                // alike or not at all.
                statements.failed(key)
                results.removeAll()
            } catch {
                throw storeError(error, retryable: false)
            }
        }
        do {
            for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger) { try take(row) }
            return results
        } catch let failure as RowFailure {
            throw failure.error
        } catch {
            throw storeError(error, retryable: false)
        }
    }
}

/// A failure of a fetch's `each`, kept apart from the connection's failures.
private struct RowFailure: Error {
    let error: any Error
}
