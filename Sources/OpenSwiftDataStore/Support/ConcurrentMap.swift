import Dispatch

/// `(0..<count).map(body)` on every core (`DispatchQueue.concurrentPerform`): how
/// documents decode their frames and build their indexes in parallel.
///
/// Each result goes to a slot of its own in a buffer, so no array's copy-on-write
/// check runs concurrently.
func concurrentMap<T: Sendable>(_ count: Int, _ body: @Sendable (Int) -> T) -> [T] {
    let slots = ResultSlots<T>(count: count)
    DispatchQueue.concurrentPerform(iterations: count) { i in slots.put(body(i), at: i) }
    return slots.all
}

/// One result per iteration, each slot written by one thread.
private final class ResultSlots<T: Sendable>: @unchecked Sendable {
    private let slots: UnsafeMutableBufferPointer<T?>

    init(count: Int) {
        slots = .allocate(capacity: count)
        slots.initialize(repeating: nil)
    }

    deinit {
        slots.deinitialize()
        slots.deallocate()
    }

    /// Called once per slot, from any thread.
    func put(_ result: T, at i: Int) { slots[i] = result }

    /// Every slot, once every `put` returned.
    var all: [T] { slots.map { $0! } }
}
