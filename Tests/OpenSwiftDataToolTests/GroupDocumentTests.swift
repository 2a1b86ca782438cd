import Foundation
import OpenSwiftDataStore
import Testing

/// The files of a container with several configurations (`DocumentGroup`) are
/// documents `osd` reads, verifies and compacts one at a time, though their
/// generations skip (format 4.1).
@Suite struct GroupDocumentTests {
    static let schema = StoreSchema(entities: [
        EntityDescription(name: "Note", attributes: [AttributeDescription(name: "text", type: .string, isOptional: false)], relationships: []),
        EntityDescription(name: "Tally", attributes: [AttributeDescription(name: "count", type: .int(bits: 64), isOptional: false)], relationships: []),
    ])

    /// Six saves, alternating between the two files, then one to both.
    static func write(_ notes: String, _ tallies: String) throws {
        let members = [
            DocumentGroup.Member(path: notes, entityNames: ["Note"], readOnly: false, durability: .full),
            DocumentGroup.Member(path: tallies, entityNames: ["Tally"], readOnly: false, durability: .full),
        ]
        let (group, version) = try DocumentGroup.open(members, schema: schema, migrating: nil)
        let store = Store(document: group, version: version)
        for k in 0..<6 {
            var changes = ChangeSet()
            changes.inserts.append(k % 2 == 0
                ? .init(entity: 0, temporaryID: RowID(-1), row: [.string("note \(k)")])
                : .init(entity: 1, temporaryID: RowID(-1), row: [.int(Int64(k))]))
            _ = try store.commit(changes)
        }
        var both = ChangeSet()
        both.inserts = [.init(entity: 0, temporaryID: RowID(-1), row: [.string("both")]), .init(entity: 1, temporaryID: RowID(-2), row: [.int(99)])]
        _ = try store.commit(both)
    }

    @Test func eachFileVerifiesAndCompactsAlone() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let notes = folder.path("notes.osd"), tallies = folder.path("tallies.osd")
        try Self.write(notes, tallies)

        let verify = try OSD.run(["verify", notes])
        #expect(verify.status == 0, "\(verify.output)\(verify.error)")
        #expect(verify.output.hasSuffix("intact\n"))
        let info = try OSD.run(["info", tallies])
        #expect(info.status == 0)
        #expect(info.output.contains("4.1"), "\(info.output)")

        let compact = try OSD.runLocking(["compact", tallies])
        #expect(compact.status == 0, "\(compact.error)")
        let contents = try DocumentReader.read(path: tallies)
        #expect(contents.version.tables[0].count == 4)
        #expect(contents.version.generation == 7)
        #expect(try OSD.run(["verify", tallies]).status == 0)
    }
}
