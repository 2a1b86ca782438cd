import Foundation

/// State behind a lock.
///
/// A pthread mutex (through `NSLock`) rather than `Synchronization.Mutex`: on Linux
/// the latter waits on raw futexes, which ThreadSanitizer cannot see, so every
/// access it guards shows up as a false race and hides real ones.
public final class Locked<State>: @unchecked Sendable {
    // The lock comes first: a zero-sized state (Void) would otherwise share its
    // address, and TSan would take the state's exclusive access for a race on it.
    @usableFromInline let lock = NSLock()
    /// Unchecked: the lock makes every access exclusive (a nested `withLock` on
    /// one `Locked` would deadlock before it could overlap), and the runtime's check
    /// (`swift_beginAccess`) cost about 75 instructions per use.
    @usableFromInline @exclusivity(unchecked) var state: State

    public init(_ state: State) {
        self.state = state
    }

    /// Runs `body` with exclusive access to the state.
    ///
    /// Inlinable, so callers in other modules run it specialized to their state: the
    /// generic version cost a call and value-witness accesses on every use.
    @inlinable
    public func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
