import DocumentTestSupport
import Foundation
import OpenSwiftDataStore
import Testing

/// Issue #12, point 4: a document keeps its store identifier (format 3) through
/// saves, compactions and reopens; older documents get one once.
@Suite struct StoreIdentityTests {
    /// The identifier a writable open of `path` reports, the document closed again.
    private func identifier(of path: String) throws -> UUID {
        let (document, _) = try Document.open(path: path, schema: DocumentFixture.schema)
        defer { document.close() }
        return document.storeIdentifier
    }

    @Test func everySnapshotKeepsTheIdentifier() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("a.store")

        let store = try DocumentFixture.openStore(path)
        let first = try #require(store.document?.storeIdentifier)
        for k in 1...3 { try DocumentFixture.save(k, in: store) }
        #expect(try DocumentReader.read(path: path).storeIdentifier == first)
        try store.compact()
        #expect(try DocumentReader.read(path: path).storeIdentifier == first)
        store.document?.close()
        #expect(try identifier(of: path) == first)

        // A copy keeps it when asked to; a new document gets its own.
        let version = try DocumentReader.read(path: path).version
        try Document.write(version, to: folder.path("copy.store"), identifier: first)
        #expect(try DocumentReader.read(path: folder.path("copy.store")).storeIdentifier == first)
        try Document.write(version, to: folder.path("other.store"))
        let other = try #require(try DocumentReader.read(path: folder.path("other.store")).storeIdentifier)
        #expect(other != first)
        #expect(try identifier(of: folder.path("fresh.store")) != first)
    }

    /// `file` (format 3, a snapshot with no journal) as format 2 wrote it: no history
    /// frames, no identifier at the end of its snapshot-end frame, and 2.0 in the header.
    private func asFormatTwo(_ file: [UInt8]) throws -> [UInt8] {
        var file = file
        for frame in FrameBytes.frames(in: file).reversed() where frame.kind == .history {
            file.removeSubrange(frame.offset..<(frame.offset + frame.length))
        }
        #expect(!FrameBytes.frames(in: file).contains { $0.kind == .commit }, "commit frames of format 4 keep history")
        let end = try #require(FrameBytes.frames(in: file).first { $0.kind == .snapshotEnd })
        let payload = try #require(FrameBytes.payload(of: end, in: file))
        var older = FrameBytes.replacing(end, in: file, stored: Array(payload.dropLast(16)))
        older[8] = 2
        older[10] = 0
        return FrameBytes.resealingHeader(older)
    }

    @Test func aFormatTwoDocumentGetsAnIdentifierOnce() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("old.store")
        let store = try DocumentFixture.openStore(path)
        for k in 1...2 { try DocumentFixture.save(k, in: store) }
        try store.compact()
        store.document?.close()
        let old = try asFormatTwo(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        try Data(old).write(to: URL(fileURLWithPath: path))

        // Read as it is: no identifier, and nothing written.
        let read = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(read.formatMajor == 2)
        #expect(read.storeIdentifier == nil)
        #expect(DocumentFixture.rows(of: read.version) == (try DocumentFixture.expectedRows(after: 2)))
        let (readOnly, _) = try Document.open(path: path, schema: DocumentFixture.schema, readOnly: true)
        readOnly.close()
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == old, "a read-only open wrote")

        // A writable open converts it once; the identifier it gets stays.
        let given = try identifier(of: path)
        let converted = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(converted.formatMajor == DocumentFormat.major)
        #expect(converted.storeIdentifier == given)
        #expect(DocumentFixture.rows(of: converted.version) == (try DocumentFixture.expectedRows(after: 2)))
        #expect(try identifier(of: path) == given)
    }

    @Test func aFormatThreeSnapshotWithoutItsIdentifierIsDamage() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("cut.store")
        try DocumentFixture.openStore(path).document?.close()
        let file = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let end = try #require(FrameBytes.frames(in: file).first { $0.kind == .snapshotEnd })
        let payload = try #require(FrameBytes.payload(of: end, in: file))
        try Data(FrameBytes.replacing(end, in: file, stored: Array(payload.dropLast(16)))).write(to: URL(fileURLWithPath: path))
        #expect {
            try DocumentReader.read(path: path)
        } throws: { error in
            guard case let .damaged(_, _, reason)? = error as? DocumentError else { return false }
            return reason.contains("snapshot")
        }
    }
}
