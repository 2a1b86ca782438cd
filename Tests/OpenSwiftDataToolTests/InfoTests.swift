import Foundation
import OpenSwiftDataStore
import Testing

@Suite struct InfoTests {
    @Test func describesEntitiesCountsSizesAndBlobs() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd")
        try TripDocument.create(at: path)

        let result = try OSD.run(["info", path])
        #expect(result.status == 0)
        #expect(result.error.isEmpty)
        // Format 4.0 (history), whether or not a schema version is recorded.
        #expect(result.output.contains("format      4.0"))
        let identifier = try #require(DocumentReader.read(path: path, blobs: .skip).storeIdentifier)
        #expect(result.output.contains("store id    \(identifier.uuidString)"))
        #expect(result.output.contains("fingerprint \(TripDocument.schema.fingerprint), 2 entities"))
        #expect(result.output.contains("Destination: 4 rows (next #id 5)"))
        #expect(result.output.contains("Trip: 6 rows (next #id 9)"))
        #expect(result.output.contains("in 5 frames"))
        // 4 + 8 inserts, 4 links, 2 deletes with 2 unlinks, 1 update.
        #expect(result.output.contains("history     5 transactions, 21 changes"))
        #expect(result.output.contains("blobs       2 blobs, 44000 bytes"))
        // Columns are padded to their widest cell: compare with single spaces.
        let lines = result.output.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
        #expect(lines.contains("photo Data? external storage"))
        #expect(lines.contains("name String unique"))
        #expect(lines.contains("trips → [Trip] to-many, delete rule cascade, inverse destination"))
        #expect(lines.contains("destination → Destination to-one, delete rule nullify, inverse trips"))
        #expect(lines.contains("unique (name)"))
        #expect(lines.contains("index (days) binary"))
        #expect(lines.contains("index (days, budget) rtree"))
    }

    @Test func jsonParsesAndAgreesWithTheEngine() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd")
        try TripDocument.create(at: path)
        let contents = try DocumentReader.read(path: path, blobs: .skip)

        let result = try OSD.run(["info", "--json", path])
        #expect(result.status == 0)
        let info = try ParsedJSON.object(result.output)
        #expect(info["fingerprint"] as? String == TripDocument.schema.fingerprint)
        #expect(info["format"] as? String == "4.0")
        #expect(info["schemaVersion"] is NSNull)
        #expect(info["storeIdentifier"] as? String == contents.storeIdentifier?.uuidString)
        #expect(info["journalFrames"] as? Int == 5)
        #expect(info["journalBytes"] as? Int == contents.journalLength)
        #expect(info["snapshotBytes"] as? Int == contents.snapshotLength)
        #expect(info["fileBytes"] as? Int == contents.validLength)
        #expect(info["tornTail"] is NSNull)
        let blobs = try #require(info["blobs"] as? [String: Any])
        #expect(blobs["count"] as? Int == 2)
        #expect(blobs["bytes"] as? Int == 44_000)
        let entities = try #require(info["entities"] as? [[String: Any]])
        #expect(entities.map { $0["name"] as? String } == ["Destination", "Trip"])
        #expect(entities.map { $0["rows"] as? Int } == [4, 6])
        #expect(entities.map { $0["nextID"] as? Int } == [5, 9])
        let attributes = try #require(entities[1]["attributes"] as? [[String: Any]])
        #expect(attributes.count == 15)
        #expect(attributes.first { $0["name"] as? String == "photo" }?["externalStorage"] as? Bool == true)
    }

    @Test func reportsATornTail() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd")
        try TripDocument.create(at: path)
        // A save cut short: half of a frame header at the end.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([0x4F, 0x53, 0x44, 0x46, 4, 0, 0, 0]))
        try handle.close()

        let result = try OSD.run(["info", path])
        #expect(result.status == 0)
        #expect(result.output.contains("torn tail"))
        let verify = try OSD.run(["verify", path])
        #expect(verify.status == 0)
        #expect(verify.output.contains("warning: torn last frame"))
        let strict = try OSD.run(["verify", "--strict", path])
        #expect(strict.status == 2)
    }

    @Test func showsTheSchemaVersionAPlanRecorded() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd")
        let version = try TripDocument.create(at: path)
        let recorded = folder.path("recorded.osd")
        try Document.write(version, to: recorded, schemaVersion: SchemaVersionStamp(2, 1, 0))
        #expect(try DocumentReader.read(path: recorded, blobs: .skip).schemaVersion == SchemaVersionStamp(2, 1, 0))

        let result = try OSD.run(["info", recorded])
        #expect(result.output.contains("entities, version 2.1.0 (recorded by a migration plan)"))
        // A copy keeps it, and so does a compaction.
        let copy = folder.path("copy.osd")
        #expect(try OSD.run(["save-as", recorded, copy]).status == 0)
        #expect(try OSD.run(["compact", copy]).status == 0)
        let info = try ParsedJSON.object(try OSD.run(["info", "--json", copy]).output)
        #expect(info["schemaVersion"] as? String == "2.1.0")
        #expect(info["format"] as? String == "4.0")
    }
}
