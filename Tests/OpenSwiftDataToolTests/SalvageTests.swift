import Foundation
import OpenSwiftDataStore
import Testing

/// `osd salvage`: the way out of a damaged journal (#45, point 1).
@Suite struct SalvageTests {
    /// A document whose journal holds six saves after `TripDocument`'s, each adding
    /// one destination, `extra-1` ... `extra-6`.
    private func document(at path: String) throws -> [DocumentReader.FrameSummary] {
        try TripDocument.create(at: path)
        let (document, version) = try TripDocument.openForWriting(path)
        let store = Store(document: document, version: version)
        for k in 1...6 {
            var changes = ChangeSet()
            changes.inserts.append(.init(
                entity: 0, temporaryID: RowID(-1),
                row: [.string("extra-\(k)"), .string("XX"), .int(Int64(k)), .references([])]))
            _ = try store.commit(changes)
        }
        document.close()
        return try DocumentReader.read(path: path).frames.filter { $0.kind == .commit }
    }

    private func destinations(_ path: String) throws -> Set<String> {
        let version = try DocumentReader.read(path: path).version
        var names = Set<String>()
        version.tables[0].forEach { _, row in if case let .string(name) = row[0] { names.insert(name) } }
        return names
    }

    @Test func writesEverySaveThatStillReadsAndNamesTheLostOnes() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd"), rescued = folder.path("rescued.osd")
        let commits = try document(at: path)
        // Two adjacent damaged frames in the middle: extra-3's and extra-4's saves.
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        for frame in commits.suffix(4).prefix(2) { bytes[frame.offset + frame.length / 2] ^= 0x10 }
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        // Never silent: opening and verifying report the damage.
        #expect(throws: DocumentError.self) { try DocumentReader.read(path: path) }
        #expect(try OSD.run(["verify", path]).status == 2)

        let result = try OSD.run(["salvage", path, rescued])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("lost: save 8: "), "\(result.output)")
        #expect(result.output.contains("lost: save 9: "), "\(result.output)")
        #expect(result.output.contains("2 damaged stretches skipped"), "\(result.output)")
        let names = try destinations(rescued)
        #expect(names.isSuperset(of: ["extra-1", "extra-2", "extra-5", "extra-6"]))
        #expect(names.isDisjoint(with: ["extra-3", "extra-4"]))
        #expect(try OSD.run(["verify", rescued]).status == 0)
        // With saves lost, the copy is another store: old identifiers do not resolve in it.
        let original = try DocumentReader.read(path: path, salvaging: true).storeIdentifier
        #expect(try DocumentReader.read(path: rescued).storeIdentifier != original)
        // The damaged document is left as it was.
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == bytes)
    }

    @Test func anUndamagedDocumentSalvagesWhole() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd"), rescued = folder.path("rescued.osd")
        _ = try document(at: path)
        let result = try OSD.run(["salvage", path, rescued])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("nothing lost"))
        #expect(try destinations(rescued) == destinations(path))
        #expect(try DocumentReader.read(path: rescued).storeIdentifier == DocumentReader.read(path: path).storeIdentifier)
        #expect(try OSD.run(["salvage", path, rescued]).status == 1)
    }
}
