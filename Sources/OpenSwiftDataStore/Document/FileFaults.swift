import Foundation

/// Makes document file calls fail on purpose, for the fault-injection tests
/// (Docs/Testing.md): every system call documents make goes through
/// `DocumentFile`, which asks `check` first. Not for applications.
///
/// One plan at a time, for paths under one folder, so tests running beside the
/// one that installs it are not touched.
public enum _FileFaults {
    /// The kinds of call a plan counts.
    public enum Call: String, Sendable, CaseIterable {
        case open, read, write, sync, truncate, rename, link, mkdir, syncDirectory
    }

    /// How the chosen call fails.
    public enum Failure: Sendable, Equatable {
        /// Fails with `errno` (ENOSPC, EIO, …), doing nothing.
        case error(Int32)
        /// A write that stores half its bytes, then fails with ENOSPC, as a disk
        /// filling up mid-write does.
        case shortWrite
    }

    private struct Plan {
        var folder: String
        var calls: Set<Call>
        var failAt: Int
        var failure: Failure
        var seen = 0
        var fired = false
    }

    private static let plan = Locked<Plan?>(nil)

    /// From now on, the `nth` call (counting from 1) of one of `calls` on a path
    /// under `folder` fails as `failure` says; the others go through. Waits while
    /// another plan is installed (tests of several suites take turns), until `remove`.
    public static func install(under folder: String, failing nth: Int, of calls: Set<Call>, with failure: Failure) {
        let new = Plan(folder: folder.hasSuffix("/") ? folder : folder + "/", calls: calls, failAt: nth, failure: failure)
        while !plan.withLock({ current in
            guard current == nil else { return false }
            current = new
            return true
        }) {
            usleep(1_000)
        }
    }

    /// Removes the plan installed for `folder` (another's stays); returns whether
    /// its failure happened.
    @discardableResult
    public static func remove(under folder: String) -> Bool {
        let folder = folder.hasSuffix("/") ? folder : folder + "/"
        return plan.withLock { plan in
            guard let current = plan, current.folder == folder else { return false }
            plan = nil
            return current.fired
        }
    }

    /// How call `call` on `path` fails, or nil to make it.
    static func check(_ call: Call, path: String) -> Failure? {
        plan.withLock { plan -> Failure? in
            guard var current = plan, current.calls.contains(call), path.hasPrefix(current.folder) else { return nil }
            current.seen += 1
            defer { plan = current }
            guard current.seen == current.failAt else { return nil }
            current.fired = true
            return current.failure
        }
    }

    /// The errno to fail call `call` on `path` with, or nil to make it; a short
    /// write is a write's own business (`DocumentFile.write`).
    static func errorCode(_ call: Call, path: String) -> Int32? {
        switch check(call, path: path) {
        case let .error(code)?: code
        case .shortWrite?: ENOSPC
        case nil: nil
        }
    }
}
