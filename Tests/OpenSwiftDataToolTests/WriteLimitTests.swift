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
