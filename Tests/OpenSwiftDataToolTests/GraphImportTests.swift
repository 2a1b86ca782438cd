import Foundation
import OpenSwiftDataStore
import Testing

/// `osd import` and `osd verify` refuse relationship graphs whose sides disagree
/// (#45, point 3): a cascade delete in the app would otherwise act on rows another
/// owner lists.
@Suite struct GraphImportTests {
    /// The export of `TripDocument`, and the text of Destination #1's `trips` list.
    private func export(in folder: TemporaryFolder) throws -> (text: String, list: Range<String.Index>) {
        let path = folder.path("trips.osd"), json = folder.path("trips.json")
        try TripDocument.create(at: path)
        #expect(try OSD.run(["export", path, "--output", json]).status == 0)
        let text = try String(contentsOfFile: json, encoding: .utf8)
        let list = try #require(text.range(of: #""trips": \{"refs": \[[0-9, ]*\]\}"#, options: .regularExpression))
        return (text, list)
    }

    private func importing(_ text: String, in folder: TemporaryFolder) throws -> OSD.Result {
        let json = folder.path("edited.json"), target = folder.path("edited.osd")
        try text.write(toFile: json, atomically: true, encoding: .utf8)
        return try OSD.run(["import", json, "--output", target, "--force"])
    }

    @Test func aToManyListingARowTwiceIsRefused() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var (text, list) = try export(in: folder)
        let refs = text[list].split(separator: "[")[1].split(separator: "]")[0]
        let first = try #require(refs.split(separator: ",").first).trimmingCharacters(in: .whitespaces)
        text.replaceSubrange(list, with: "\"trips\": {\"refs\": [\(refs), \(first)]}")
        let result = try importing(text, in: folder)
        #expect(result.status == 1)
        #expect(result.error.contains("Destination #1: trips lists a row more than once"), "\(result.error)")
    }

    @Test func aChildListedByTwoOwnersIsRefused() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var (text, list) = try export(in: folder)
        let refs = text[list].split(separator: "[")[1].split(separator: "]")[0]
        let listed = Set(refs.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces))! })
        // A trip of another destination, listed by Destination #1 too.
        let stranger = try #require((1...12).first { !listed.contains($0) && text.contains("\"#id\": \($0),") })
        text.replaceSubrange(list, with: "\"trips\": {\"refs\": [\(refs), \(stranger)]}")
        let result = try importing(text, in: folder)
        #expect(result.status == 1)
        #expect(result.error.contains("Destination #1: trips names Trip #\(stranger), whose destination does not name it back"), "\(result.error)")
    }

    @Test func verifyReportsAGraphWhoseSidesDisagree() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd")
        try TripDocument.create(at: path)
        #expect(try OSD.run(["verify", path]).status == 0)
        // A writer that keeps only one side: Destination #1 lists every trip.
        do {
            let (document, version) = try TripDocument.openForWriting(path)
            defer { document.close() }
            let store = Store(document: document, version: version)
            var ids: [RowID] = []
            version.tables[1].forEachID { ids.append($0) }
            var changes = ChangeSet()
            changes.updates.append(.init(entity: 0, id: RowID(1), values: [3: .references(ids)]))
            _ = try store.commit(changes)
        }
        let result = try OSD.run(["verify", path])
        #expect(result.status == 2)
        #expect(result.output.contains("damaged: relationship: Destination #1: trips names Trip #"), "\(result.output)")
    }
}
