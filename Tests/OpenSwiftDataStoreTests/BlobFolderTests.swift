import Foundation
import OpenSwiftDataStore
import Testing

/// The blob folder beside a document: checked by content, collected only where it
/// really is, and never raced into damage by two writers.
@Suite struct BlobFolderTests {
    /// A store with saves 1…`saves` of the fixture: every third save has a 20 KB photo (a blob).
    static func store(saves: Int) throws -> Store {
        let store = Store(schema: DocumentFixture.schema)
        for k in 1...saves { try DocumentFixture.save(k, in: store) }
        return store
    }

    static func blobFiles(of path: String) -> [String] {
        BlobStore(documentPath: path).names()
    }

    /// A blob file already in the target's folder (left by an earlier copy, say) is
    /// checked by content before it is reused: a damaged one of the right size is
    /// replaced, not trusted.
    @Test func aDamagedBlobOfTheRightSizeIsRewrittenNotTrusted() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let source = folder.path("source.store"), target = folder.path("target.store")
        let version = try Self.store(saves: 3).current
        try Document.write(version, to: source)
        let name = try #require(Self.blobFiles(of: source).first)
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: BlobStore(documentPath: source).path(of: name))))
        bytes[100] ^= 0xFF
        try FileManager.default.createDirectory(atPath: target + ".blobs", withIntermediateDirectories: false)
        try Data(bytes).write(to: URL(fileURLWithPath: BlobStore(documentPath: target).path(of: name)))
        #expect(try BlobStore(documentPath: target).problem(with: name, length: bytes.count) == "content does not match its hash")

        try Document.write(version, to: target)
        #expect(try BlobStore(documentPath: target).problem(with: name, length: bytes.count) == nil)
        let contents = try DocumentReader.read(path: target, expected: DocumentFixture.schema, blobs: .load)
        #expect(DocumentFixture.rows(of: contents.version) == (try DocumentFixture.expectedRows(after: 3)))
    }

    @Test func aBlobIsCheckedForItsLengthAndKind() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("doc.store")
        try Document.write(try Self.store(saves: 3).current, to: path)
        let blobs = BlobStore(documentPath: path)
        let name = try #require(blobs.names().first)
        let length = try #require(blobs.size(of: name))
        #expect(try blobs.problem(with: name, length: length) == nil)
        #expect(try blobs.problem(with: name, length: length + 1) == "holds \(length) bytes, the document expects \(length + 1)")
        // A directory (or FIFO, or device) where a blob should be is refused, not read.
        try FileManager.default.removeItem(atPath: blobs.path(of: name))
        try FileManager.default.createDirectory(atPath: blobs.path(of: name), withIntermediateDirectories: false)
        #expect(try blobs.problem(with: name, length: length) == "is not a regular file")
        #expect(throws: DocumentError.blob(name: name, reason: "is not a regular file")) {
            try DocumentReader.read(path: path, expected: DocumentFixture.schema, blobs: .load)
        }
    }

    @Test func aSymlinkedBlobFolderIsNeverCollectedFrom() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("doc.store")
        try Document.write(try Self.store(saves: 3).current, to: path)
        // The folder moves elsewhere, beside a file that only looks like a blob.
        let elsewhere = folder.path("elsewhere")
        try FileManager.default.moveItem(atPath: path + ".blobs", toPath: elsewhere)
        try FileManager.default.createSymbolicLink(atPath: path + ".blobs", withDestinationPath: elsewhere)
        let bystander = elsewhere + "/" + String(repeating: "ab", count: 32)
        try Data("not a blob of this document".utf8).write(to: URL(fileURLWithPath: bystander))

        let (document, version) = try Document.open(path: path, schema: DocumentFixture.schema)
        let store = Store(document: document, version: version)
        try DocumentFixture.save(4, in: store)
        try store.compact()
        document.close()
        try Document.write(store.current, to: path)
        #expect(FileManager.default.fileExists(atPath: bystander))
        // Reads and writes still go through the link.
        let contents = try DocumentReader.read(path: path, expected: DocumentFixture.schema, blobs: .load)
        #expect(DocumentFixture.rows(of: contents.version) == (try DocumentFixture.expectedRows(after: 4)))
    }

    /// Two writers of the same new path at once: one wins whole, with every blob it
    /// refers to; the other replaces it whole, or is told the path is taken.
    @Test(arguments: [true, false]) func twoWritersOfOneNewPathLeaveAnIntactDocument(replacing: Bool) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let versions = [try Self.store(saves: 3).current, try Self.store(saves: 9).current]
        let expected = try [DocumentFixture.expectedRows(after: 3), DocumentFixture.expectedRows(after: 9)]
        for round in 0..<8 {
            let path = folder.path("race-\(round).store")
            let outcomes = await withTaskGroup(of: DocumentError?.self) { group in
                for version in versions {
                    group.addTask {
                        do {
                            try Document.write(version, to: path, replacing: replacing)
                            return nil
                        } catch {
                            return error as? DocumentError ?? .io(operation: "write", path: path, errno: 0)
                        }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let failures = outcomes.compactMap { $0 }
            if replacing {
                #expect(failures.isEmpty, "\(failures)")
            } else {
                #expect(failures.count == 1)
                for failure in failures {
                    #expect(failure == .io(operation: "create", path: path, errno: EEXIST) || failure == .locked(path: path), "\(failure)")
                }
            }
            let contents = try DocumentReader.read(path: path, expected: DocumentFixture.schema, blobs: .load)
            #expect(expected.contains(DocumentFixture.rows(of: contents.version)))
            #expect(Set(Self.blobFiles(of: path)) == contents.blobNames)
        }
    }
}
