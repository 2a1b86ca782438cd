import Foundation
import OpenSwiftDataStore
import Testing

/// How a shared document's follower keeps up with other writers (#41), at the
/// store's level, where the moments between its reads can be chosen.
@Suite struct SharedFollowingTests {
    let folder: TemporaryFolder
    init() throws { folder = try TemporaryFolder() }

    /// A follower that reads the file whole (another writer replaced it) remembers
    /// the file's size from before its read: a frame appended while it read is read
    /// by its next look. (It once remembered the size after the read, and waited
    /// for the file's next change to look again: with no other save coming, it
    /// never saw that frame; the four-writer process test caught it under load.)
    @Test func aFrameAppendedWhileAFollowerReadsTheFileWholeIsReadByItsNextLook() throws {
        defer { folder.remove() }
        let path = folder.path("reread.store")
        let writer = try DocumentFixture.openStore(path)
        let follower = try DocumentFixture.openStore(path)
        try DocumentFixture.save(1, in: writer)
        follower.catchUp()
        #expect(follower.current.generation == 1)
        // The writer compacts, so the follower's next look reads the new file whole;
        // the writer saves again right after that read.
        try writer.compact()
        let document = try #require(follower.document)
        let appended = Locked(false)
        document._rereadDidRead = {
            guard !appended.withLock({ $0 }) else { return }
            appended.withLock { $0 = true }
            try? DocumentFixture.save(2, in: writer)
        }
        follower.catchUp()
        #expect(appended.withLock { $0 })
        #expect(writer.current.generation == 2)
        // The next look reads save 2.
        follower.catchUp()
        #expect(follower.current.generation == 2)
        #expect(DocumentFixture.rows(of: follower.current) == DocumentFixture.rows(of: writer.current))
        document._rereadDidRead = nil
    }
}
