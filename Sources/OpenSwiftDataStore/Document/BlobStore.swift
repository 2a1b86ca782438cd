import Foundation

/// The folder of external-storage blobs beside a document: one file per value,
/// named by the SHA-256 of its content, so equal values share a file and a file
/// is never rewritten in place.
///
/// Blobs are written and synced before the frame that refers to them, verified
/// against their name when read, and removed by compaction once no snapshot row
/// refers to them. Public for tools that inspect the folder (`osd verify`).
/// Sendable: its one mutable property is guarded by `lock` (an open loads blobs
/// from several threads).
public final class BlobStore: @unchecked Sendable {
    /// `.externalStorage` values shorter than this stay inline in their row.
    static let inlineLimit = 16 * 1024

    public let directory: String
    /// Blobs this store wrote or read back intact: a compaction stores every blob
    /// again, and rereading (and hashing) all of them each time would cost the whole
    /// external storage per compaction. Checked once per store, then trusted while
    /// the file keeps its size.
    private var verified = Set<String>()
    private let lock = NSLock()

    public init(documentPath: String) {
        self.directory = documentPath + ".blobs"
    }

    private func isVerified(_ name: String) -> Bool { lock.withLock { verified.contains(name) } }
    private func markVerified(_ name: String) { _ = lock.withLock { verified.insert(name) } }

    static func reference(for data: Data) -> BlobReference {
        BlobReference(hash: SHA256Hasher.hash(data: data), length: data.count)
    }

    /// Whether `name` is a blob name (64 lowercase hex digits): anything else,
    /// such as `../x`, never reaches the file system.
    public static func isBlobName(_ name: String) -> Bool {
        name.utf8.count == 64 && name.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    public func path(of name: String) -> String { directory + "/" + name }

    /// Writes `data` under its hash unless a file of that name already holds it.
    /// Returns whether it wrote a file (the directory then needs a sync).
    ///
    /// An existing file is checked by content, not size: a damaged blob of the
    /// right length is replaced (atomically, by rename), never trusted.
    func store(_ data: Data, as reference: BlobReference) throws(DocumentError) -> Bool {
        let target = path(of: reference.name)
        var info = stat()
        if stat(target, &info) == 0, info.st_mode & S_IFMT == S_IFREG, Int(info.st_size) == reference.length,
           isVerified(reference.name) || (try? load(reference)) != nil {
            return false
        }
        if DocumentFile.makeDirectory(directory) == 0 {
            // The new folder must survive power loss as much as the blobs in it.
            try DocumentFile.syncDirectory(URL(fileURLWithPath: directory).deletingLastPathComponent().path)
        } else if errno != EEXIST {
            throw .io(operation: "mkdir", path: directory, errno: errno)
        }
        // (Unique per call: a compaction in the background may store the blob an
        // append stores at the same moment.)
        let temporary = target + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        DocumentFile.remove(temporary)
        let file = try DocumentFile.open(temporary, writable: true, create: true)
        do {
            try file.write(Array(data), at: 0)
            try file.sync()
            file.close()
            try DocumentFile.rename(temporary, to: target)
            markVerified(reference.name)
        } catch {
            file.close()
            DocumentFile.remove(temporary)
            throw error
        }
        return true
    }

    func syncDirectory() throws(DocumentError) {
        try DocumentFile.syncDirectory(directory)
    }

    /// The blob's content, verified against its hash and length.
    func load(_ reference: BlobReference) throws(DocumentError) -> Data {
        let name = reference.name
        let file: DocumentFile
        do {
            file = try DocumentFile.open(path(of: name), writable: false)
        } catch .notFound {
            throw .blob(name: name, reason: "missing from \(directory)")
        } catch .notARegularFile {
            throw .blob(name: name, reason: "is not a regular file")
        }
        let bytes = try file.readAll()
        guard bytes.count == reference.length else {
            throw .blob(name: name, reason: "holds \(bytes.count) bytes, the document expects \(reference.length)")
        }
        let data = Data(bytes)
        guard SHA256Hasher.hash(data: data) == reference.hash else {
            throw .blob(name: name, reason: "content does not match its hash")
        }
        markVerified(name)
        return data
    }

    /// The names of the blob files in the folder, sorted; none without a folder.
    public func names() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter(Self.isBlobName).sorted()
    }

    /// The size of blob `name`, or nil when there is no such file.
    public func size(of name: String) -> Int? {
        var info = stat()
        return stat(path(of: name), &info) == 0 ? Int(info.st_size) : nil
    }

    /// What is wrong with blob `name`, which the document says holds `length`
    /// bytes (missing, not a regular file, another length, content not matching its
    /// name), or nil when it is intact. Unlike a read of the document, which stops
    /// at the first bad blob, this lets a tool report each one.
    /// - Throws: `DocumentError.io` when the blob exists but cannot be read
    ///   (permissions, an I/O error): that is not damage the document has.
    public func problem(with name: String, length: Int) throws(DocumentError) -> String? {
        guard let reference = BlobReference(name: name, length: length) else { return "not a blob name" }
        do {
            _ = try load(reference)
            return nil
        } catch {
            switch error {
            case let .blob(_, reason): return reason
            default: throw error
            }
        }
    }

    /// Removes every blob file not in `keeping`, and leftover temporary files.
    /// Returns how many blobs it removed.
    ///
    /// Only from a real folder: a blob folder that is a symbolic link is read and
    /// written through, but nothing is ever deleted where it points.
    @discardableResult
    func collect(keeping: Set<String>) -> Int {
        var info = stat()
        guard lstat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return 0 }
        var removed = 0
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            if Self.isBlobName(name) {
                guard !keeping.contains(name) else { continue }
                DocumentFile.remove(path(of: name))
                removed += 1
            } else if name.contains(".tmp-"), Self.isBlobName(String(name.prefix(64))) {
                DocumentFile.remove(path(of: name))
            }
        }
        return removed
    }

    /// Removes the blob files `names`, and the folder when that leaves it empty.
    func remove(_ names: [String]) {
        guard !names.isEmpty else { return }
        for name in names { DocumentFile.remove(path(of: name)) }
        rmdir(directory)
    }

    /// Removes the folder and every blob in it.
    func removeAll() {
        try? FileManager.default.removeItem(atPath: directory)
    }
}
