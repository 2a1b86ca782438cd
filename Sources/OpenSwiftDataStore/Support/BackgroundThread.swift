import Foundation

/// Work that must not slow the saves beside it: a thread of its own, at a lower
/// CPU priority, that ends with the work.
///
/// A background compaction encodes and compresses a whole document. On a
/// dispatch queue it took every core (the encoder plus its compression workers),
/// and a save beside it waited for a core: p99 save latency rose from 0.7 ms to
/// 3 ms on a 2-core machine (W9 saves, N = 1,000,000). Its own thread at nice +10
/// gives the core back whenever a save wants it. The thread is not a pooled one,
/// so the lower priority ends with it (an unprivileged process cannot raise a
/// thread's priority again).
enum BackgroundThread {
    /// How much lower than the process this work runs (`nice` steps, Linux only).
    static let niceness: Int32 = 10

    /// Runs `body` on a new thread at `niceness`; returns at once.
    static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            lowerPriority()
            body()
        }
        thread.name = name
        thread.start()
    }

    /// How many threads beside this one encode and compress a background
    /// snapshot's frames: none on a machine of 2 cores or fewer (this thread does
    /// it all, and one core stays free for saves), else all cores but two. (A
    /// compaction on demand uses every core: no save waits beside it.)
    static var compressionWorkers: Int {
        max(0, ProcessInfo.processInfo.activeProcessorCount - 2)
    }

    /// Lowers the calling thread's CPU priority by `niceness`. On Linux the nice
    /// value belongs to the thread, not the process (`nice` sets the caller's).
    private static func lowerPriority() {
        #if os(Linux)
        _ = nice(niceness)
        #endif
    }
}
