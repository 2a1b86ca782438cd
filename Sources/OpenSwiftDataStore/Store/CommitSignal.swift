/// Wakes tasks waiting for the store to publish something new: what lets a
/// change feed wait for the next commit instead of polling.
final class CommitSignal: Sendable {
    private struct Waiter {
        var id: UInt64
        var continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var nextID: UInt64 = 0
        var waiters: [Waiter] = []
    }

    private let state = Locked(State())

    /// Resumes every waiting task.
    func signal() {
        let woken = state.withLock { state in
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in woken { waiter.continuation.resume() }
    }

    /// Returns once `ready()` holds: at once if it does, else after a later
    /// `signal()` finds it so, or when the task is cancelled.
    ///
    /// `ready` is checked after the task is registered, so a signal between the
    /// check and the wait is not lost.
    func wait(until ready: @escaping @Sendable () -> Bool) async {
        while !ready(), !Task.isCancelled {
            let id = state.withLock { state in
                state.nextID += 1
                return state.nextID
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let resumeNow = state.withLock { state in
                        if ready() || Task.isCancelled { return true }
                        state.waiters.append(Waiter(id: id, continuation: continuation))
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            } onCancel: {
                let waiter = state.withLock { state -> Waiter? in
                    guard let i = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiters.remove(at: i)
                }
                waiter?.continuation.resume()
            }
        }
    }
}
