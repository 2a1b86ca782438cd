import Dispatch
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization

/// The store's connections: postgres-nio's `PostgresClient`, a pool of at most
/// `PostgresStoreConfiguration.poolSize` connections, opened as calls need them.
///
/// The pool is the container's: its `run()` runs in a task the pool owns from
/// opening to `shutdown()` (which the store calls when it is released, and after
/// which the task closes the connections and ends), so nothing of it outlives the
/// container. A `ServiceGroup` (swift-service-lifecycle) does not own it: SwiftData
/// opens a store inside `ModelContainer(for:configurations:)`, synchronously, with no
/// service group to hand it to, and an app's container lives as long as the app
/// holds it, inside or outside one.
///
/// The `DataStore` protocol is synchronous, so a call blocks its thread while a
/// task leases it a connection (`withConnection`). That task and the client's
/// `run()` run on one of NIO's event loops (`EventLoopTaskExecutor`), never on
/// Swift's cooperative pool: the calls that wait for them may be blocking every
/// thread of that pool (a `@ModelActor` per core, each in `save()`).
final class PostgresConnectionPool: Sendable {
    let client: PostgresClient
    /// Where the pool's tasks run (and the change feed's listener's).
    let executor: EventLoopTaskExecutor
    /// The names of the fetch statements its connections prepare (`PostgresStore+Prepared`).
    let statements = PreparedStatements()
    /// An executor on each of the group's loops (`consumer(of:)`).
    private let loops: [EventLoopTaskExecutor]
    private let runner: Task<Void, Never>

    init(_ configuration: PostgresClient.Configuration, logger: Logger) {
        let group = MultiThreadedEventLoopGroup.singleton
        client = PostgresClient(configuration: configuration, eventLoopGroup: group, backgroundLogger: logger)
        executor = EventLoopTaskExecutor(group.next())
        loops = group.makeIterator().map(EventLoopTaskExecutor.init)
        runner = Task(executorPreference: executor) { [client] in await client.run() }
    }

    /// Runs `body` on the calling thread with a connection leased for its length.
    /// - Parameter patience: how long to wait for a connection; nil waits as long as
    ///   the pool tries (a server that is down trips its circuit breaker after about
    ///   a minute of retries).
    /// - Throws: what `body` throws, or `PostgresStoreError.connection` when no
    ///   connection could be had in time.
    func withConnection<R>(patience: Duration? = nil, _ body: (PostgresConnection) throws -> R) throws -> R {
        let handoff = Handoff()
        let lease = Task(executorPreference: executor) { [client] in
            do {
                try await client.withConnection { connection in
                    // Held until the caller is done with it.
                    await withCheckedContinuation { handoff.lend(connection, until: $0) }
                }
            } catch {
                handoff.fail(error)
            }
        }
        let connection: PostgresConnection, release: CheckedContinuation<Void, Never>
        do {
            (connection, release) = try handoff.wait(patience: patience)
        } catch let error as Handoff.OutOfPatience {
            lease.cancel()
            throw PostgresStoreError.connection("no connection from the pool: \(error)")
        } catch {
            throw PostgresStoreError.connection("no connection from the pool: \(error)")
        }
        defer { release.resume() }
        return try body(connection)
    }

    /// Runs `body` with a connection leased for its length, all in one task (leased on
    /// the pool's event loop, `body` run on the connection's: `consumer(of:)`), while
    /// the calling thread waits (once, where `withConnection` and a statement's future
    /// make it wait twice). The thread
    /// goes on as soon as `body` ends, while the task gives the connection back (the
    /// pool's bookkeeping and timers then run beside the caller, not before it).
    /// - Throws: what `body` throws, or `PostgresStoreError.connection` when no
    ///   connection could be had.
    func withConnectionTask<R: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> R) throws -> R {
        let outcome = Outcome<R>()
        Task(executorPreference: executor) { [client] in
            do {
                try await client.withConnection { connection in
                    await withTaskExecutorPreference(self.consumer(of: connection)) {
                        do { outcome.end(.success(try await body(connection))) } catch { outcome.end(.failure(error)) }
                    }
                }
            } catch {
                // No connection (`body` never ran, so this is the only end).
                outcome.end(.failure(PostgresStoreError.connection("no connection from the pool: \(error)")))
            }
        }
        return try outcome.wait()
    }

    /// Where a task reading `connection`'s rows runs: on the connection's own loop,
    /// so rows reach it with no hop between threads. (Reading them on another loop,
    /// for one thread to parse while the other decodes, made fetches of 100 rows
    /// a tenth slower and look-ups a third: the hops cost more than the overlap won.)
    func consumer(of connection: PostgresConnection) -> EventLoopTaskExecutor {
        loops.first { $0.runs(on: connection.eventLoop) } ?? executor
    }

    /// Runs `body` in a task on the pool's event loop, blocking the calling thread
    /// until it ends: how a synchronous store call uses postgres-nio's async API.
    func wait<R: Sendable>(_ body: @escaping @Sendable () async throws -> R) throws -> R {
        let outcome = Outcome<R>()
        Task(executorPreference: executor) {
            do { outcome.end(.success(try await body())) } catch { outcome.end(.failure(error)) }
        }
        return try outcome.wait()
    }

    /// Ends `run()`, which closes the connections and then returns, ending the
    /// runner task: the store's last act.
    ///
    /// It does not wait for that: the pool's timers sleep on Swift's global executor,
    /// whose threads may all be blocked in calls of other stores (two containers
    /// released at once on a two-core machine did so), and a release must not wait on
    /// them.
    func shutdown() {
        runner.cancel()
    }
}

/// What a task of `wait` ended with, on its way to the waiting thread.
private final class Outcome<R: Sendable>: Sendable {
    private let result = Mutex<Result<R, any Error>?>(nil)
    private let ended = DispatchSemaphore(value: 0)

    /// The first end counts; a later one is dropped. (`withConnectionTask` ends once:
    /// with `body`'s result, or, when no connection came, with that failure.)
    func end(_ result: Result<R, any Error>) {
        let first = self.result.withLock { kept in
            guard kept == nil else { return false }
            kept = result
            return true
        }
        if first { ended.signal() }
    }

    func wait() throws -> R {
        ended.wait()
        return try result.withLock { $0! }.get()
    }
}

/// A leased connection on its way from the task that leases it to the thread that
/// waits for it, and the continuation that gives it back.
private final class Handoff: Sendable {
    private enum State {
        case waiting
        case lent(PostgresConnection, CheckedContinuation<Void, Never>)
        case failed(any Error)
        /// The waiter ran out of patience: a connection lent later goes straight back.
        case abandoned
    }

    struct OutOfPatience: Error, CustomStringConvertible {
        let patience: Duration
        var description: String { "none within \(patience)" }
    }

    private let state = Mutex(State.waiting)
    private let ready = DispatchSemaphore(value: 0)

    func lend(_ connection: PostgresConnection, until release: CheckedContinuation<Void, Never>) {
        let abandoned = state.withLock { state in
            if case .abandoned = state { return true }
            state = .lent(connection, release)
            return false
        }
        if abandoned { release.resume() } else { ready.signal() }
    }

    func fail(_ error: any Error) {
        state.withLock { state in
            if case .abandoned = state { return }
            state = .failed(error)
        }
        ready.signal()
    }

    func wait(patience: Duration? = nil) throws -> (PostgresConnection, CheckedContinuation<Void, Never>) {
        if let patience {
            let (seconds, attoseconds) = patience.components
            let nanoseconds = UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
            if ready.wait(timeout: .now() + .nanoseconds(Int(nanoseconds))) == .timedOut {
                // Lent or failed just now, after all: take it as it is.
                let gaveUp = state.withLock { state in
                    guard case .waiting = state else { return false }
                    state = .abandoned
                    return true
                }
                if gaveUp { throw OutOfPatience(patience: patience) }
                ready.wait()
            }
        } else {
            ready.wait()
        }
        return try state.withLock { state in
            switch state {
            case let .lent(connection, release): return (connection, release)
            case let .failed(error): throw error
            case .waiting, .abandoned: preconditionFailure("a handoff signalled before it was lent")
            }
        }
    }
}

/// Runs tasks on a NIO event loop (a task executor preference), so they never need a
/// thread of Swift's cooperative pool.
final class EventLoopTaskExecutor: TaskExecutor {
    private let loop: any EventLoop

    init(_ loop: any EventLoop) { self.loop = loop }

    func runs(on loop: any EventLoop) -> Bool { self.loop === loop }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

