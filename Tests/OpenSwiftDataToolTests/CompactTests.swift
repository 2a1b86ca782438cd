import Foundation
import OpenSwiftDataStore
import Testing

@Suite struct CompactTests {
    @Test func foldsTheJournalIntoTheSnapshotAndKeepsTheRows() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd")
        let version = try TripDocument.create(at: path)
        let before = try DocumentReader.read(path: path, blobs: .skip)
        #expect(before.journalLength > 0)
        #expect(before.journalFrames == 5)

        let result = try OSD.runLocking(["compact", path])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("before: snapshot \(before.snapshotLength) bytes, journal \(before.journalLength) bytes in 5 frames"))
        #expect(result.output.contains("journal 0 bytes"))

        let after = try DocumentReader.read(path: path, blobs: .load)
        #expect(after.journalLength == 0)
        #expect(after.journalFrames == 0)
        #expect(TripDocument.sameContents(after.version, version))
        let info = try ParsedJSON.object(try OSD.run(["info", "--json", path]).output)
        #expect(info["journalBytes"] as? Int == 0)
        #expect(try OSD.run(["verify", path]).status == 0)
    }

    @Test func refusesWhileAnotherWriterHoldsTheDocument() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd")
        try TripDocument.create(at: path)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let (writer, _) = try TripDocument.openForWriting(path)
        defer { writer.close() }

        let result = try OSD.run(["compact", path])
        #expect(result.status == 1)
        #expect(result.error == "osd: \(path) is open for writing in another process or container\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)

        writer.close()
        #expect(try OSD.runLocking(["compact", path]).status == 0)
    }
}
