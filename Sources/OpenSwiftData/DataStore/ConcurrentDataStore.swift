/// A `DataStore` whose calls may run at the same time: its container does not
/// serialize them, so contexts on several threads and `@ModelActor`s fetch and save
/// in parallel. *Additive*: Apple's SwiftData has no such protocol.
///
/// By default a container makes calls into its store one at a time, so a store
/// written as Apple's documentation shows (a file read and rewritten whole) needs no
/// lock. A store that keeps its own consistency, as a database client with a pool of
/// connections does, adopts this protocol to be called from several threads at once;
/// being `Sendable`, it states that its state is safe to share.
///
/// ```swift
/// final class ServerStore: ConcurrentDataStore {
///     // Each call takes a connection of its own from a pool.
/// }
/// ```
public protocol ConcurrentDataStore: DataStore, Sendable {}
