import Foundation
import OpenSwiftDataStore
import Testing

@Suite struct SaveAsTests {
    @Test func writesACompleteReadableCopyWithItsBlobs() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd"), copy = folder.path("copy.osd")
        let version = try TripDocument.create(at: path)

        let result = try OSD.run(["save-as", path, copy])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("10 rows, 2 blobs"))
        let contents = try DocumentReader.read(path: copy, expected: TripDocument.schema, blobs: .load)
        #expect(TripDocument.sameContents(contents.version, version))
        #expect(contents.journalFrames == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: copy + ".blobs").count == 2)
        #expect(try OSD.run(["verify", copy]).status == 0)
    }

    @Test func refusesAnExistingTargetUnlessForcedAndNeverItself() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd"), copy = folder.path("copy.osd")
        try TripDocument.create(at: path)
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: copy))

        let refused = try OSD.run(["save-as", path, copy])
        #expect(refused.status == 1)
        #expect(refused.error.contains("already exists"))
        #expect(try String(contentsOfFile: copy, encoding: .utf8) == "keep me")
        let itself = try OSD.run(["save-as", path, path, "--force"])
        #expect(itself.status == 1)
        #expect(itself.error.contains("the new document is the document itself"))
        #expect(try OSD.run(["save-as", path, copy, "--force"]).status == 0)
        #expect(try DocumentReader.read(path: copy).version.tables.map(\.count) == [4, 6])
    }
}
