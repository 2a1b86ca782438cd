import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The few file-system questions commands ask before they touch anything.
enum FileSystem {
    /// The size of the file at `path`, or nil when nothing is there.
    static func size(of path: String) -> Int? {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : nil
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// Whether two paths name the same file (same device and inode).
    static func sameFile(_ a: String, _ b: String) -> Bool {
        var first = stat(), second = stat()
        guard stat(a, &first) == 0, stat(b, &second) == 0 else { return false }
        return first.st_dev == second.st_dev && first.st_ino == second.st_ino
    }

    /// Whether a process has the document at `path` open for writing: a writable
    /// `Document` holds `flock(LOCK_EX)` on its file until it closes. Commands that
    /// replace a document check this first rather than pull it from under a writer.
    static func isLockedForWriting(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        if flock(descriptor, LOCK_EX | LOCK_NB) == 0 {
            flock(descriptor, LOCK_UN)
            return false
        }
        return errno == EWOULDBLOCK
    }

    /// Whether `path` itself (not a link's target) is a regular file.
    static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }

    /// Refuses to replace `path` unless `force`, never while a writer has it open,
    /// and never when it is not a regular file: `--force` does not replace a
    /// device, FIFO, directory or symbolic link (`-o /dev/null --force` is refused).
    static func checkReplaceable(_ path: String, force: Bool) throws(ToolFailure) {
        guard exists(path) else { return }
        guard force else { throw ToolFailure("\(path) already exists (use --force to replace it)") }
        guard isRegularFile(path) else {
            throw ToolFailure("\(path) is not a regular file (a device, FIFO, directory or link); osd replaces only regular files")
        }
        if isLockedForWriting(path) {
            throw ToolFailure("\(path) is open for writing in another process or container; close it first")
        }
    }

    /// Writes `path` through a temporary file beside it, renamed into place only once
    /// `body` has written everything: a failed command leaves any old file as it was.
    static func writeAtomically(_ path: String, _ body: (OutputSink) throws -> Void) throws {
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).osd-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).tmp").path
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw ToolFailure("cannot create \(temporary): \(String(cString: strerror(errno)))")
        }
        var isOpen = true
        do {
            let sink = OutputSink(descriptor: descriptor, name: path)
            try body(sink)
            try sink.flush()
            guard fsync(descriptor) == 0 else { throw ToolFailure("fsync failed on \(path): \(String(cString: strerror(errno)))") }
            close(descriptor)
            isOpen = false
            // Whatever took the name meanwhile, it is replaced only if it is a regular file.
            guard !exists(path) || isRegularFile(path) else {
                throw ToolFailure("\(path) is not a regular file (a device, FIFO, directory or link); osd replaces only regular files")
            }
            guard rename(temporary, path) == 0 else {
                throw ToolFailure("cannot rename into \(path): \(String(cString: strerror(errno)))")
            }
        } catch {
            if isOpen { close(descriptor) }
            unlink(temporary)
            throw error
        }
    }
}
