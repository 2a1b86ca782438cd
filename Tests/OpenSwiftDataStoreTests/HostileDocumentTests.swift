import Foundation
import OpenSwiftDataStore
import DocumentTestSupport
import Testing

/// Documents made to hurt the reader: claimed lengths and counts it must not
/// allocate for, zstd bombs, and user data shaped like frames. Each gives a typed
/// error (or the right earlier state), never a crash or an allocation sized by a claim.
@Suite struct HostileDocumentTests {
    /// A new, empty document's bytes and frames (schema, snapshot end).
    static func emptyDocument(in folder: TemporaryFolder) throws -> (bytes: [UInt8], frames: [DocumentReader.FrameSummary]) {
        let path = folder.path("empty.store")
        do { _ = try Document.open(path: path, schema: DocumentFixture.schema) }
        let frames = try DocumentReader.read(path: path, expected: DocumentFixture.schema).frames
        return (Array(try Data(contentsOf: URL(fileURLWithPath: path))), frames)
    }

    /// Reads `bytes` as the document `name`, with the blobs of the document `blobsOf`.
    static func read(
        _ bytes: [UInt8], in folder: TemporaryFolder, name: String, blobsOf: String? = nil
    ) -> Result<DocumentReader.Contents, DocumentError> {
        let path = folder.path(name)
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        if let blobsOf { try? FileManager.default.copyItem(atPath: folder.path(blobsOf) + ".blobs", toPath: path + ".blobs") }
        do { return .success(try DocumentReader.read(path: path, expected: DocumentFixture.schema)) } catch { return .failure(error) }
    }

    static func damageReason(_ result: Result<DocumentReader.Contents, DocumentError>) -> String? {
        if case let .failure(.damaged(_, _, reason)) = result { return reason }
        return nil
    }

    @Test func aClaimedLengthIsNotAllocatedBeforeDecompressing() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (bytes, frames) = try Self.emptyDocument(in: folder)
        // 30 bytes of zstd that claim to hold a 2 GiB schema: refused by the expansion
        // budget before any allocation (this used to zero-fill 2 GiB first).
        let small = FrameBytes.zstd(Array(repeating: 7, count: 100))
        let huge = FrameBytes.replacing(frames[0], in: bytes, codec: 1, stored: small, raw: Int(Int32.max))
        let reason = try #require(Self.damageReason(Self.read(huge, in: folder, name: "huge.store")))
        #expect(reason.contains("times the file's size"))
        // Within the budget, a claim the data does not fill is found while decoding.
        let short = FrameBytes.replacing(frames[0], in: bytes, codec: 1, stored: small, raw: 10 << 20)
        let shortReason = try #require(Self.damageReason(Self.read(short, in: folder, name: "short.store")))
        #expect(shortReason.contains("decompressed to 100 bytes"))
        // And data longer than its claim stops one byte past it (small claims are
        // decoded in one call, large ones streamed).
        let megabyte = FrameBytes.zstd(Array(repeating: 7, count: 1 << 20))
        for claim in [1_000, 100_000] {
            let long = FrameBytes.replacing(frames[0], in: bytes, codec: 1, stored: megabyte, raw: claim)
            let longReason = try #require(Self.damageReason(Self.read(long, in: folder, name: "long-\(claim).store")))
            #expect(longReason.contains("does not decompress"), "\(longReason)")
        }
    }

    @Test func aZstdBombIsRefusedByTheExpansionBudget() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (bytes, frames) = try Self.emptyDocument(in: folder)
        // 128 MiB of zeros compress to a few kilobytes, and honestly claim their size.
        let raw = 128 << 20
        let bomb = FrameBytes.zstd([UInt8](repeating: 0, count: raw))
        #expect(bomb.count * 256 < raw)
        let file = FrameBytes.replacing(frames[1], in: bytes, codec: 1, stored: bomb, raw: raw)
        let reason = try #require(Self.damageReason(Self.read(file, in: folder, name: "bomb.store")))
        #expect(reason.contains("times the file's size"))
    }

    @Test func countsInTheFileAreBoundedByTheBytesLeft() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (bytes, frames) = try Self.emptyDocument(in: folder)
        // A rows frame for entity 0 with one row whose first value is an array of 2^40 items.
        let payload = FrameBytes.varint(0) + FrameBytes.varint(1) + FrameBytes.varint(1) + [12] + FrameBytes.varint(1 << 40)
        let rows = FrameBytes.frame(kind: .rows, stored: payload)
        let file = Array(bytes[..<frames[1].offset]) + rows + Array(bytes[frames[1].offset...])
        let reason = try #require(Self.damageReason(Self.read(file, in: folder, name: "count.store")))
        #expect(reason.contains("count 1099511627776 exceeds"), "\(reason)")
    }

    @Test func framesThatCompressTooWellArePaddedAndStillOpen() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("padded.store")
        let tags = Value.array((0..<200_000).map { _ in .string("same") })
        do {
            let (document, version) = try Document.open(path: path, schema: DocumentFixture.schema)
            let store = Store(document: document, version: version)
            var changes = ChangeSet()
            var row = DocumentFixture.item(1)
            row[9] = tags
            changes.inserts.append(.init(entity: 0, temporaryID: RowID(-1), row: row))
            _ = try store.commit(changes)
            try store.compact()
            var again = ChangeSet()
            row[0] = .string("item-again")
            again.inserts.append(.init(entity: 0, temporaryID: RowID(-1), row: row))
            _ = try store.commit(again)
        }
        let contents = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(contents.tornTail == nil)
        for frame in contents.frames {
            let stored = frame.length - 24
            #expect(frame.rawLength <= max(stored, 1) * 256, "\(frame.kind) frame of \(frame.rawLength) bytes stored in \(stored)")
        }
        var seen = 0
        contents.version.tables[0].forEach { _, row in
            #expect(row[9] == tags)
            seen += 1
        }
        #expect(seen == 2)
    }

    /// A torn last save is dropped even when the data it held looks like frames: a
    /// whole commit frame of an earlier generation and a bare frame header.
    @Test func aTornSaveIsDroppedWhateverItsDataLooksLike() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("lookalike.store")
        var random = SplitMix(seed: 11)
        func noise(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8.random(in: 0...255, using: &random) } }
        let lookalike = FrameBytes.frame(kind: .commit, stored: FrameBytes.varint(1) + noise(40))
            + FrameBytes.header(kind: .commit, codec: 0, stored: 10, raw: 10)
        do {
            let (document, version) = try Document.open(path: path, schema: DocumentFixture.schema)
            let store = Store(document: document, version: version)
            for k in 1...3 { try DocumentFixture.save(k, in: store) }
            var changes = ChangeSet()
            changes.updates.append(.init(entity: 0, id: RowID(1), values: [11: .codable(Data(noise(300) + lookalike + noise(300)))]))
            _ = try store.commit(changes)
        }
        let frames = try DocumentReader.read(path: path, expected: DocumentFixture.schema).frames
        let last = try #require(frames.last)
        // The last save stored as writers store what does not compress: the user
        // data verbatim, where the reader meets it.
        let bytes = FrameBytes.uncompressing(last, in: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        let ends = try Self.read(bytes, in: folder, name: "uncompressed.store", blobsOf: "lookalike.store").get().frames.map { $0.offset + $0.length }
        #expect(ends.last == bytes.count)
        let found = bytes.indices.contains { i in
            i >= last.offset + 20 && i + lookalike.count <= bytes.count && Array(bytes[i..<(i + lookalike.count)]) == lookalike
        }
        try #require(found)
        let expected = try DocumentFixture.expectedRows(after: 3)

        // The end of the save's payload never reached the disk (its header did).
        var lostTail = bytes
        for i in (bytes.count - 40)..<bytes.count { lostTail[i] = 0 }
        // The save's header never reached the disk.
        var lostHeader = bytes
        for i in last.offset..<(last.offset + 20) { lostHeader[i] = 0 }
        for (name, file) in [("lost-tail", lostTail), ("lost-header", lostHeader)] {
            let contents = try Self.read(file, in: folder, name: "\(name).store", blobsOf: "lookalike.store").get()
            #expect(contents.tornTail?.offset == last.offset, "\(name)")
            #expect(DocumentFixture.rows(of: contents.version) == expected, "\(name)")
        }
        // The same loss in the save before it is damage: a whole frame follows.
        let previous = frames[frames.count - 2]
        var damaged = bytes
        for i in (previous.offset + previous.length - 10)..<(previous.offset + previous.length) { damaged[i] ^= 0xFF }
        #expect(Self.damageReason(Self.read(damaged, in: folder, name: "damaged.store", blobsOf: "lookalike.store")) != nil)
        var damagedHeader = bytes
        for i in previous.offset..<(previous.offset + 20) { damagedHeader[i] = 0 }
        #expect(Self.damageReason(Self.read(damagedHeader, in: folder, name: "damaged-header.store", blobsOf: "lookalike.store")) != nil)
    }
}
