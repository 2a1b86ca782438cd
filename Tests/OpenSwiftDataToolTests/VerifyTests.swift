import Foundation
import OpenSwiftDataStore
import Testing

@Suite struct VerifyTests {
    @Test func intactDocumentPasses() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd")
        try TripDocument.create(at: path)

        let result = try OSD.run(["verify", path])
        #expect(result.status == 0)
        #expect(result.output.contains("blobs: 2 referenced, 2 intact"))
        #expect(result.output.hasSuffix("intact\n"))
        #expect(!result.output.contains("damaged"))

        let json = try ParsedJSON.object(try OSD.run(["verify", "--json", path]).output)
        #expect(json["intact"] as? Bool == true)
        #expect((json["problems"] as? [Any])?.isEmpty == true)
    }

    @Test func flippedByteIsDamageAndTheFileIsLeftAlone() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd")
        try TripDocument.create(at: path)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[bytes.count / 2] ^= 0x5A
        try bytes.write(to: URL(fileURLWithPath: path))

        let result = try OSD.run(["verify", path])
        #expect(result.status == 2)
        #expect(result.output.contains("damaged: \(path) is damaged at byte"))
        #expect(result.output.hasSuffix("damaged\n"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)

        let json = try ParsedJSON.object(try OSD.run(["verify", "--json", path]).output)
        #expect(json["intact"] as? Bool == false)
        #expect((json["problems"] as? [String])?.count == 1)
    }

    @Test func tamperedAndMissingBlobsAreEachReported() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd")
        try TripDocument.create(at: path)
        let blobs = try FileManager.default.contentsOfDirectory(atPath: path + ".blobs").sorted()
        #expect(blobs.count == 2)
        let tampered = URL(fileURLWithPath: path + ".blobs/" + blobs[0])
        var content = try Data(contentsOf: tampered)
        content[100] ^= 1
        try content.write(to: tampered)
        try FileManager.default.removeItem(atPath: path + ".blobs/" + blobs[1])

        let result = try OSD.run(["verify", path])
        #expect(result.status == 2)
        #expect(result.output.contains("external-storage blob \(blobs[0]): content does not match its hash"))
        #expect(result.output.contains("external-storage blob \(blobs[1]): missing"))
        #expect(result.output.contains("blobs: 2 referenced, 0 intact"))
    }

    @Test func unreferencedBlobFilesAreReportedButNotDamage() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd")
        try TripDocument.create(at: path)
        let stray = String(repeating: "ab", count: 32)
        try Data("left over".utf8).write(to: URL(fileURLWithPath: path + ".blobs/" + stray))

        let result = try OSD.run(["verify", path])
        #expect(result.status == 0)
        #expect(result.output.contains("unreferenced blob files (not an error; compaction removes them): 1"))
        #expect(result.output.contains(stray))
        let json = try ParsedJSON.object(try OSD.run(["verify", "--json", path]).output)
        #expect(json["unreferencedBlobs"] as? [String] == [stray])
    }
}
