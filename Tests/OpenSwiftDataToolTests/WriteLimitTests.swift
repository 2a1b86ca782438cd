import Foundation
import OpenSwiftDataStore
import Testing

/// Limits are enforced when writing, not only when reading (#45, point 3): a save
/// that would cross one throws a typed error and writes nothing, and the document
/// still opens.
@Suite struct WriteLimitTests {
    @Test func theSaveThatWouldUseUpRowIdentifiersThrowsAndWritesNothing() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd"), json = folder.path("trips.json"), edge = folder.path("edge.osd")
        try TripDocument.create(at: path)
        #expect(try OSD.run(["export", path, "--output", json]).status == 0)
        // The export as a tool might write it: Destination's identifiers used up to the
        // limit the reader accepts (2^32), which import takes.
        var text = try String(contentsOfFile: json, encoding: .utf8)
        let next = try #require(text.range(of: #""Destination": \d+"#, options: .regularExpression))
        text.replaceSubrange(next, with: "\"Destination\": \(DocumentFormat.maximumRowID + 1)")
        try text.write(toFile: json, atomically: true, encoding: .utf8)
        let imported = try OSD.run(["import", json, "--output", edge])
        #expect(imported.status == 0, "\(imported.error)")

        let before = try Data(contentsOf: URL(fileURLWithPath: edge))
        do {
            let (document, version) = try TripDocument.openForWriting(edge)
            defer { document.close() }
            let store = Store(document: document, version: version)
            var changes = ChangeSet()
            changes.inserts.append(.init(
                entity: 0, temporaryID: RowID(-1), row: [.string("Quito"), .string("EC"), .int(3), .references([])]))
            #expect {
                try store.commit(changes)
            } throws: { error in
                guard case let .limitExceeded(reason) = error as? StoreError else { return false }
                return reason.contains("Destination")
            }
            // Another entity still takes inserts.
            var trip = ChangeSet()
            trip.inserts.append(.init(entity: 1, temporaryID: RowID(-1), row: TripDocument.trip(1)))
            trip.inserts[0].row[5] = .uuid(UUID())
            // (No destination: its inverse is not written here, and verify checks both sides.)
            trip.inserts[0].row[trip.inserts[0].row.count - 1] = .null
            _ = try store.commit(trip)
        }
        // The refused save wrote nothing; the document opens, with the trip saved after.
        let contents = try DocumentReader.read(path: edge)
        #expect(contents.version.tables[0].count == TripDocument.destinations.count)
        #expect(contents.journalFrames == 1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: edge)).count > before.count)
        #expect(try OSD.run(["verify", edge]).status == 0)
    }
}

/// A write that fails on a full disk leaves nothing of its own behind (#45, point 2):
/// "nothing was modified" holds for the blob folder too.
@Suite struct FullDiskWriteTests {
    /// Runs `osd arguments…` with files limited to `kilobytes` (writes past it fail
    /// with EFBIG, as on a full disk; the signal it would send is ignored).
    private func runLimited(_ arguments: [String], kilobytes: Int) throws -> OSD.Result {
        let osd = try #require(OSD.executable).path
        let quoted = ([osd] + arguments).map { "'\($0)'" }.joined(separator: " ")
        return try OSD.runShell("trap '' XFSZ; ulimit -f \(kilobytes); exec \(quoted)")
    }

    @Test func aFailedImportLeavesNoBlobs() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd"), json = folder.path("trips.json"), target = folder.path("big.osd")
        try TripDocument.create(at: path)
        // A trip with 400 KB of notes that do not compress: the snapshot outgrows the
        // limit after the photos (20 and 24 KB) went to the blob folder.
        do {
            let (document, version) = try TripDocument.openForWriting(path)
            defer { document.close() }
            let store = Store(document: document, version: version)
            var random = SystemRandomNumberGenerator()
            var changes = ChangeSet()
            changes.updates.append(.init(
                entity: 1, id: RowID(1), values: [13: .data(Data((0..<400_000).map { _ in UInt8.random(in: 0...255, using: &random) }))]))
            _ = try store.commit(changes)
        }
        #expect(try OSD.run(["export", path, "--output", json]).status == 0)

        let failed = try runLimited(["import", json, "--output", target], kilobytes: 200)
        #expect(failed.status == 1, "\(failed.output) \(failed.error)")
        #expect(failed.error.contains("nothing was modified") || failed.error.hasPrefix("osd: "), "\(failed.error)")
        #expect(!FileManager.default.fileExists(atPath: target))
        #expect(!FileManager.default.fileExists(atPath: target + ".blobs"), "the failed import left its blobs")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter { $0.hasSuffix(".tmp") }.isEmpty)

        // With room, the same import succeeds.
        #expect(try OSD.run(["import", json, "--output", target]).status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: target + ".blobs").count == 2)
    }
}
