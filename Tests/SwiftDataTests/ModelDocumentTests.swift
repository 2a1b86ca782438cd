import Foundation
import SwiftData
import Testing

/// Document mode: open, edit, save, save as, revert, close.
@Suite struct ModelDocumentTests {
    let folder: TemporaryFolder
    init() throws { folder = try TemporaryFolder("osd-modeldoc") }

    func url(_ name: String) -> URL { folder.file(name) }
    func cleanUp() { folder.remove() }

    static func titles(_ document: ModelDocument) throws -> [String] {
        try document.mainContext.fetch(FetchDescriptor<Photo>(sortBy: [SortDescriptor(\.title)])).map(\.title)
    }

    @Test func savedWorkIsThereWhenTheDocumentIsOpenedAgain() throws {
        defer { cleanUp() }
        let location = url("album.store")
        do {
            let document = try ModelDocument(for: Photo.self, contentsOf: location)
            #expect(!document.hasUnsavedChanges)
            document.mainContext.insert(Photo(title: "a", image: Data([1])))
            #expect(document.hasUnsavedChanges)
            try document.save()
            #expect(!document.hasUnsavedChanges)
            document.mainContext.insert(Photo(title: "unsaved", image: Data([2])))
            document.close()
            #expect(throws: DocumentError.self) { try document.save() }
        }
        let document = try ModelDocument(for: Photo.self, contentsOf: location)
        #expect(try Self.titles(document) == ["a"])
    }

    @Test func contextSavesStayInTheWorkingCopyUntilTheDocumentSaves() throws {
        defer { cleanUp() }
        let location = url("working.store")
        let document = try ModelDocument(for: Photo.self, contentsOf: location)
        let before = try Data(contentsOf: location)
        document.mainContext.insert(Photo(title: "draft", image: Data()))
        try document.mainContext.save()
        #expect(document.hasUnsavedChanges)
        #expect(try Data(contentsOf: location) == before)
        try document.save()
        #expect(try Data(contentsOf: location) != before)
    }

    @Test func revertToSavedDropsEverythingSinceTheLastSave() throws {
        defer { cleanUp() }
        let document = try ModelDocument(for: Photo.self, contentsOf: url("revert.store"))
        document.mainContext.insert(Photo(title: "kept", image: Data()))
        try document.save()
        let kept = try #require(try document.mainContext.fetch(FetchDescriptor<Photo>()).first)
        kept.title = "renamed"
        document.mainContext.insert(Photo(title: "dropped", image: Data()))
        try document.mainContext.save()
        document.mainContext.insert(Photo(title: "pending", image: Data()))
        try document.revertToSaved()
        #expect(try Self.titles(document) == ["kept"])
        #expect(!document.hasUnsavedChanges)
    }

    @Test func saveAsWritesACopyWithItsBlobsAndContinuesThere() throws {
        defer { cleanUp() }
        let original = url("original.store")
        let copy = url("copy.store")
        let document = try ModelDocument(for: Photo.self, contentsOf: original)
        let picture = Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 * 7) })
        document.mainContext.insert(Photo(title: "picture", image: picture))
        try document.save()
        document.mainContext.insert(Photo(title: "second", image: Data()))
        try document.save(as: copy)
        #expect(document.url == copy)
        #expect(try FileManager.default.contentsOfDirectory(atPath: copy.path + ".blobs").count == 1)
        document.close()

        let reopenedCopy = try ModelDocument(for: Photo.self, contentsOf: copy)
        #expect(try Self.titles(reopenedCopy) == ["picture", "second"])
        #expect(try reopenedCopy.mainContext.fetch(FetchDescriptor<Photo>(predicate: #Predicate { $0.title == "picture" })).first?.image == picture)
        let reopenedOriginal = try ModelDocument(for: Photo.self, contentsOf: original)
        #expect(try Self.titles(reopenedOriginal) == ["picture"])
    }

    @Test func anOpenDocumentIsLockedAgainstOtherWriters() throws {
        defer { cleanUp() }
        let location = url("locked.store")
        let document = try ModelDocument(for: Photo.self, contentsOf: location)
        #expect(throws: DocumentError.locked(path: location.path)) {
            _ = try ModelDocument(for: Photo.self, contentsOf: location)
        }
        #expect(throws: SwiftDataError.loadIssueModelContainer) {
            _ = try ModelContainer(for: Photo.self, configurations: ModelConfiguration(url: location))
        }
        document.close()
        _ = try ModelDocument(for: Photo.self, contentsOf: location)
    }
}
