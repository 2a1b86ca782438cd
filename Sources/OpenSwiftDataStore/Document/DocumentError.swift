import Foundation

/// What can go wrong with a document file, said precisely enough to act on.
///
/// An open that throws one of these has not modified the file. A save that throws
/// one has not changed the document either: a frame it began is cut off again.
public enum DocumentError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file does not start with the document magic: it is not a document.
    case notADocument(path: String)
    /// The document was written by a newer format this build cannot read.
    case unsupportedFormat(path: String, major: Int, minor: Int)
    /// A checksum, length or count does not match: the file is damaged at `offset`.
    case damaged(path: String, offset: Int, reason: String)
    /// The document's schema is not the schema the application opened it with.
    case schemaMismatch(path: String, reason: String)
    /// Another process (or container) has the document open for writing.
    case locked(path: String)
    /// The document, or the blob it needs, does not exist.
    case notFound(path: String)
    /// The path names a FIFO, device, socket or directory: documents and blobs are
    /// regular files, and reading anything else could hang or never end.
    case notARegularFile(path: String)
    /// A system call failed (`errno` as the system reported it, e.g. ENOSPC on a full disk).
    case io(operation: String, path: String, errno: Int32)
    /// An external-storage blob is missing or does not match its content hash.
    case blob(name: String, reason: String)
    /// A write on a document opened read-only.
    case readOnly(path: String)
    /// The document was closed.
    case closed(path: String)

    public var description: String {
        switch self {
        case let .notADocument(path): "\(path) is not an OpenSwiftData document"
        case let .unsupportedFormat(path, major, minor):
            "\(path) has document format \(major).\(minor); this build reads \(DocumentFormat.knownMinors.keys.sorted().map { "\($0).x" }.joined(separator: " and ")) and writes \(DocumentFormat.major).\(DocumentFormat.minor)"
        case let .damaged(path, offset, reason): "\(path) is damaged at byte \(offset): \(reason)"
        case let .schemaMismatch(path, reason): "\(path) was written with another schema: \(reason)"
        case let .locked(path): "\(path) is open for writing in another process or container"
        case let .notFound(path): "\(path) does not exist"
        case let .notARegularFile(path): "\(path) is not a regular file (a FIFO, device, socket or directory)"
        case let .io(operation, path, code):
            "\(operation) failed on \(path): \(String(cString: strerror(code))) (errno \(code))"
        case let .blob(name, reason): "external-storage blob \(name): \(reason)"
        case let .readOnly(path): "\(path) is open read-only"
        case let .closed(path): "\(path) is closed"
        }
    }
}
