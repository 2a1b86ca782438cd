import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An open file descriptor, with the few system calls documents need, each
/// turning failure into a `DocumentError` that names the call, path and errno.
final class DocumentFile {
    /// The path errors name; a renamed file takes its new path.
    var path: String
    private(set) var descriptor: Int32
    /// Where this file's frames are known durable up to (group commit,
    /// `Document+GroupCommit.swift`): `Int.max` once a compaction copied them into a
    /// synced file that replaced this one. Guarded by the document's `syncCondition`.
    var syncedEnd = 0
    /// The fsync that failed on this file: every frame past `syncedEnd` waits in vain.
    /// Guarded by the document's `syncCondition`.
    var syncFailure: DocumentError?

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close() }

    /// Opens `path`, which must be a regular file: a FIFO, device or directory is
    /// refused with `.notARegularFile` (opened non-blocking, so a FIFO without a
    /// writer cannot hang the open).
    static func open(_ path: String, writable: Bool, create: Bool = false) throws(DocumentError) -> DocumentFile {
        if let code = _FileFaults.errorCode(.open, path: path) { throw .io(operation: "open", path: path, errno: code) }
        var flags = writable ? O_RDWR : O_RDONLY
        if create { flags |= O_CREAT | O_EXCL }
        flags |= O_CLOEXEC | O_NONBLOCK
        let fd = Glibc.open(path, flags, 0o644)
        guard fd >= 0 else {
            if errno == ENOENT { throw .notFound(path: path) }
            if errno == EISDIR || errno == ENXIO { throw .notARegularFile(path: path) }
            throw .io(operation: "open", path: path, errno: errno)
        }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            _ = Glibc.close(fd)
            throw .notARegularFile(path: path)
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return DocumentFile(path: path, descriptor: fd)
    }

    func close() {
        if descriptor >= 0 { _ = Glibc.close(descriptor) }
        descriptor = -1
    }

    /// Closes the descriptor on a thread of its own, for a caller that must not wait
    /// for it: closing a replaced file's last descriptor frees the file's blocks.
    func closeInBackground() {
        let closing = descriptor
        descriptor = -1
        guard closing >= 0 else { return }
        BackgroundThread.start(name: "OpenSwiftData.close") { _ = Glibc.close(closing) }
    }

    /// Takes the advisory write lock, or throws `.locked` if another open file
    /// description holds it (another process, or another container) for longer
    /// than `lockPatience`.
    ///
    /// Why wait at all: a process this program spawns holds a copy of every open
    /// descriptor from its fork until its exec closes them (`O_CLOEXEC`), so a lock
    /// a closed container just released can look held for that instant, and a
    /// document reopened right after closing would fail now and then. A writer that
    /// really holds the document still gets `.locked`, a fraction of a second later.
    func lockExclusively() throws(DocumentError) {
        var delay: useconds_t = 1_000
        var waited: useconds_t = 0
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                throw .io(operation: "flock", path: path, errno: errno)
            }
            guard waited < Self.lockPatience else { throw .locked(path: path) }
            usleep(delay)
            waited += delay
            delay = min(delay * 2, 32_000)
        }
    }

    /// Takes the advisory write lock for a writer's turn, waiting for it in a
    /// blocking `flock` (on a thread of its own, so the wait can end after `patience`
    /// with `.locked`): the kernel wakes the waiter the moment the holder releases the
    /// lock, where a poll that sleeps between tries finds a writer saving back to back
    /// holding it almost every time (W12: p99 1.6 s, max 7.6 s when polling; 0.95 ms
    /// and 2.6 ms blocking). The descriptor must stay open while it waits: the
    /// caller holds the turn lock, and only a turn closes a document's old files.
    func lockForTurn(patience: useconds_t) throws(DocumentError) {
        if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return }
        guard errno == EWOULDBLOCK || errno == EINTR else { throw .io(operation: "flock", path: path, errno: errno) }
        /// 0 waiting, 1 taken, 2 given up (the waiter releases what it takes after).
        let outcome = Locked(0)
        let taken = DispatchSemaphore(value: 0)
        let fd = descriptor
        let failure = Locked<Int32>(0)
        Thread {
            var result: Int32
            repeat { result = flock(fd, LOCK_EX) } while result != 0 && errno == EINTR
            let code = result == 0 ? 0 : errno
            let abandoned = outcome.withLock { state -> Bool in
                if state == 2 { return true }
                state = 1
                return false
            }
            if abandoned {
                if code == 0 { _ = flock(fd, LOCK_UN) }
                return
            }
            failure.withLock { $0 = code }
            taken.signal()
        }.start()
        if taken.wait(timeout: .now() + .microseconds(Int(patience))) == .timedOut {
            let gaveUp = outcome.withLock { state -> Bool in
                if state == 1 { return false }
                state = 2
                return true
            }
            if gaveUp { throw .locked(path: path) }
            taken.wait()
        }
        let code = failure.withLock { $0 }
        if code != 0 { throw .io(operation: "flock", path: path, errno: code) }
    }

    /// Releases the advisory write lock (`lockExclusively`).
    func unlock() {
        _ = flock(descriptor, LOCK_UN)
    }

    /// How long `lockExclusively` retries a held lock, in microseconds.
    static let lockPatience: useconds_t = 250_000

    /// How long a writer of a shared document waits for its turn: other writers hold
    /// the lock only while they append (an fsync) or finish a compaction, so waiting
    /// longer than this means one of them is stuck.
    static let turnPatience: useconds_t = 30_000_000

    /// How a writer holds a document for its life, apart from the turns it takes
    /// (`flock`): sharing it with other sharing writers, or alone (a group's
    /// document, a `ModelDocument`, save-as replacing the file).
    enum Claim {
        case shared, exclusive
    }

    /// Claims the file for as long as this descriptor is open: a read (shared) or
    /// write (exclusive) lock on its first byte, in the lock space of open file
    /// description locks (`F_OFD_SETLK`), which `flock`'s turns do not touch. Throws
    /// `.locked` when another descriptor's claim conflicts for longer than
    /// `lockPatience` (a claim just released can look held for that instant, as
    /// `lockExclusively` says, and a container just released may still be finishing
    /// a background compaction).
    func claim(_ claim: Claim) throws(DocumentError) {
        var range = flock()
        range.l_type = Int16(claim == .shared ? F_RDLCK : F_WRLCK)
        range.l_whence = Int16(SEEK_SET)
        range.l_start = 0
        range.l_len = 1
        var delay: useconds_t = 1_000
        var waited: useconds_t = 0
        while fcntl(descriptor, Self.setOpenFileDescriptionLock, &range) != 0 {
            if errno == EINTR { continue }
            guard errno == EAGAIN || errno == EACCES else { throw .io(operation: "fcntl", path: path, errno: errno) }
            guard waited < Self.lockPatience else { throw .locked(path: path) }
            usleep(delay)
            waited += delay
            delay = min(delay * 2, 32_000)
        }
    }

    /// `F_OFD_SETLK` (Linux 3.15), which Glibc's module does not export.
    private static let setOpenFileDescriptionLock: Int32 = 37

    /// What a follower of the file looks at (`Document+Sharing.swift`): a renamed-over
    /// or deleted file has no link left.
    struct Status {
        var size: Int
        var links: Int
        var modified: timespec
    }

    /// The file's status, in one `fstat`.
    var status: Status? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        return Status(size: Int(info.st_size), links: Int(info.st_nlink), modified: info.st_mtim)
    }

    /// Whether `path` still names this file.
    var isStillAtPath: Bool {
        guard let mine = identity, let current = Self.identity(of: path) else { return false }
        return mine.0 == current.0 && mine.1 == current.1
    }

    /// Opens the folder `directory` and takes its advisory lock, waiting for any
    /// other holder: writers of whole documents into one folder take turns.
    static func lockFolder(_ directory: String) throws(DocumentError) -> DocumentFile {
        let fd = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .io(operation: "open directory", path: directory, errno: errno) }
        let folder = DocumentFile(path: directory, descriptor: fd)
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw .io(operation: "flock", path: directory, errno: errno) }
        }
        return folder
    }

    /// Opens `path` for writing and takes its lock, making sure the path still
    /// names the file locked: compaction in another process may rename a new file
    /// over the path between the open and the lock (then that one is tried).
    /// Throws `.notFound` when there is no file, `.locked` when a writer holds it.
    static func openLocked(_ path: String) throws(DocumentError) -> DocumentFile {
        for _ in 0..<8 {
            let file = try open(path, writable: true)
            try file.lockExclusively()
            if let mine = file.identity, let current = identity(of: path), mine.0 == current.0, mine.1 == current.1 {
                return file
            }
            file.close()
        }
        throw .locked(path: path)
    }

    var size: Int {
        get throws(DocumentError) {
            var info = stat()
            guard fstat(descriptor, &info) == 0 else { throw .io(operation: "fstat", path: path, errno: errno) }
            return Int(info.st_size)
        }
    }

    /// Device and inode, to tell whether the path still names this file.
    var identity: (dev_t, ino_t)? {
        var info = stat()
        return fstat(descriptor, &info) == 0 ? (info.st_dev, info.st_ino) : nil
    }

    static func identity(of path: String) -> (dev_t, ino_t)? {
        var info = stat()
        return stat(path, &info) == 0 ? (info.st_dev, info.st_ino) : nil
    }

    /// The whole file.
    func readAll() throws(DocumentError) -> [UInt8] {
        try read(at: 0, count: size)
    }

    /// The `count` bytes at `offset` (fewer when the file ends first).
    func read(at offset: Int, count: Int) throws(DocumentError) -> [UInt8] {
        if let code = _FileFaults.errorCode(.read, path: path) { throw .io(operation: "read", path: path, errno: code) }
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes {
                pread(descriptor, $0.baseAddress! + done, count - done, off_t(offset + done))
            }
            if got < 0 {
                if errno == EINTR { continue }
                throw .io(operation: "read", path: path, errno: errno)
            }
            if got == 0 { break }
            done += got
        }
        if done < count { bytes.removeSubrange(done...) }
        return bytes
    }

    /// Writes all of `bytes` at `offset`.
    func write(_ bytes: [UInt8], at offset: Int) throws(DocumentError) {
        var done = 0
        switch _FileFaults.check(.write, path: path) {
        case let .error(code)?: throw .io(operation: "write", path: path, errno: code)
        case .shortWrite?:
            // Half the bytes land, then the disk is full.
            let half = bytes.count / 2
            _ = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress!, half, off_t(offset)) }
            throw .io(operation: "write", path: path, errno: ENOSPC)
        case nil: break
        }
        while done < bytes.count {
            let wrote = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress! + done, bytes.count - done, off_t(offset + done)) }
            if wrote < 0 {
                if errno == EINTR { continue }
                throw .io(operation: "write", path: path, errno: errno)
            }
            done += wrote
        }
    }

    func truncate(to length: Int) throws(DocumentError) {
        if let code = _FileFaults.errorCode(.truncate, path: path) { throw .io(operation: "ftruncate", path: path, errno: code) }
        guard ftruncate(descriptor, off_t(length)) == 0 else { throw .io(operation: "ftruncate", path: path, errno: errno) }
    }

    /// `fdatasync`: the data written so far, without the metadata `sync` adds.
    func syncData() throws(DocumentError) {
        if let code = _FileFaults.errorCode(.sync, path: path) { throw .io(operation: "fdatasync", path: path, errno: code) }
        guard fdatasync(descriptor) == 0 else { throw .io(operation: "fdatasync", path: path, errno: errno) }
    }

    /// Another descriptor for the same open file: a group commit's fsync runs on it
    /// outside the document's lock, while a compaction may close this one.
    func duplicate() throws(DocumentError) -> DocumentFile {
        let fd = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard fd >= 0 else { throw .io(operation: "dup", path: path, errno: errno) }
        return DocumentFile(path: path, descriptor: fd)
    }

    func sync() throws(DocumentError) {
        if let code = _FileFaults.errorCode(.sync, path: path) { throw .io(operation: "fsync", path: path, errno: code) }
        guard fsync(descriptor) == 0 else { throw .io(operation: "fsync", path: path, errno: errno) }
    }

    /// Makes a rename or a new file in `directory` durable.
    static func syncDirectory(_ directory: String) throws(DocumentError) {
        if let code = _FileFaults.errorCode(.syncDirectory, path: directory + "/") {
            throw .io(operation: "fsync directory", path: directory, errno: code)
        }
        let fd = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .io(operation: "open directory", path: directory, errno: errno) }
        defer { _ = Glibc.close(fd) }
        guard fsync(fd) == 0 else { throw .io(operation: "fsync directory", path: directory, errno: errno) }
    }

    static func rename(_ from: String, to: String) throws(DocumentError) {
        if let code = _FileFaults.errorCode(.rename, path: to) { throw .io(operation: "rename", path: to, errno: code) }
        guard Glibc.rename(from, to) == 0 else { throw .io(operation: "rename", path: to, errno: errno) }
    }

    static func remove(_ path: String) {
        _ = unlink(path)
    }

    /// `link(2)`: 0, or -1 with `errno` set (callers tell EEXIST from failure).
    static func link(_ from: String, _ to: String) -> Int32 {
        if let code = _FileFaults.errorCode(.link, path: to) {
            errno = code
            return -1
        }
        return Glibc.link(from, to)
    }

    /// `mkdir(2)`: 0, or -1 with `errno` set.
    static func makeDirectory(_ path: String) -> Int32 {
        if let code = _FileFaults.errorCode(.mkdir, path: path) {
            errno = code
            return -1
        }
        return mkdir(path, 0o755)
    }
}
