import Foundation
import OpenSwiftDataStore
import Testing

/// Group commit (#42, point 1): saves with durability `.full` that overlap share
/// fsyncs. Each test holds the first save's fsync (`_syncWillBegin`) until the
/// other saves have appended their frames, so what one fsync covers is exact.
@Suite struct GroupCommitTests {
    let folder: TemporaryFolder
    init() throws { folder = try TemporaryFolder() }

    /// A save of one new item, `n`, that depends on no other save.
    static func insert(_ n: Int, into store: Store) throws {
        var changes = ChangeSet()
        changes.author = "saver \(n)"
        changes.inserts.append(.init(entity: 0, temporaryID: RowID(-1), row: DocumentFixture.item(n)))
        _ = try store.commit(changes)
    }

    /// Starts `count` saves (items `first`…), one per thread; returns what each threw.
    static func startSaves(
        _ range: ClosedRange<Int>, into store: Store, finished group: DispatchGroup
    ) -> Locked<[Int: any Error]> {
        let failures = Locked<[Int: any Error]>([:])
        for n in range {
            group.enter()
            Thread {
                do {
                    try insert(n, into: store)
                } catch {
                    failures.withLock { $0[n] = error }
                }
                group.leave()
            }.start()
        }
        return failures
    }

    /// Waits (up to ten seconds) until the document holds `frames` journal frames.
    static func waitForFrames(_ frames: Int, in document: Document) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while document.journalFrames < frames {
            guard Date() < deadline else { return false }
            usleep(1_000)
        }
        return true
    }

    /// The first fsync of the document waits at `gate`; later ones go through.
    static func holdFirstSync(of document: Document, at gate: Gate) {
        document._syncWillBegin = { [weak document] in
            document?._syncWillBegin = nil
            gate.pass()
        }
    }

    @Test func savesThatAppendWhileAnFsyncWaitsShareTheNextOne() throws {
        defer { folder.remove() }
        let path = folder.path("group.store")
        let store = try DocumentFixture.openStore(path)
        let document = try #require(store.document)
        let gate = Gate()
        Self.holdFirstSync(of: document, at: gate)
        let finished = DispatchGroup()
        // Save 1 appends and leads the first fsync, which waits; saves 2…9 append
        // behind it meanwhile (the commit path is free) and wait for it.
        let first = Self.startSaves(1...1, into: store, finished: finished)
        #expect(gate.waitUntilReached())
        let others = Self.startSaves(2...9, into: store, finished: finished)
        #expect(Self.waitForFrames(9, in: document))
        // Nothing is published before it is durable.
        #expect(store.current.generation == 0)
        #expect(store.current.tables[0].count == 0)
        gate.open()
        #expect(finished.wait(timeout: .now() + 10) == .success)
        #expect(first.withLock { $0.isEmpty } && others.withLock { $0.isEmpty })
        // One fsync acknowledged all nine saves: it began after they appended.
        #expect(document.journalSyncs == 1)
        #expect(store.current.generation == 9)
        #expect(store.current.tables[0].count == 9)
        store.current._checkInvariants()
        // A save alone takes an fsync of its own.
        try Self.insert(10, into: store)
        #expect(document.journalSyncs == 2)
        document.close()
        let reopened = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(reopened.version.generation == 10)
        #expect(DocumentFixture.rows(of: reopened.version) == DocumentFixture.rows(of: store.current))
    }

    @Test func aFailedFsyncFailsEverySaveItWouldHaveAcknowledged() throws {
        defer { folder.remove() }
        let path = folder.path("failing.store")
        let store = try DocumentFixture.openStore(path)
        let document = try #require(store.document)
        try Self.insert(1, into: store)
        let gate = Gate()
        Self.holdFirstSync(of: document, at: gate)
        _FileFaults.install(under: folder.path(""), failing: 1, of: [.sync], with: .error(EIO))
        defer { _FileFaults.remove(under: folder.path("")) }
        let finished = DispatchGroup()
        let first = Self.startSaves(2...2, into: store, finished: finished)
        #expect(gate.waitUntilReached())
        let others = Self.startSaves(3...6, into: store, finished: finished)
        #expect(Self.waitForFrames(6, in: document))
        gate.open()
        #expect(finished.wait(timeout: .now() + 10) == .success)
        #expect(_FileFaults.remove(under: folder.path("")))
        // The fsync failed: every save waiting on it throws, and none is published.
        let failed = first.withLock { $0 }.merging(others.withLock { $0 }) { a, _ in a }
        #expect(failed.keys.sorted() == [2, 3, 4, 5, 6])
        #expect(failed.values.allSatisfy { $0 is StoreError })
        #expect(store.current.generation == 1)
        #expect(store.current.tables[0].count == 1)
        // Saves stop until the document is opened again, and it holds only save 1:
        // the frames no fsync covered were cut off again.
        #expect(throws: StoreError.self) { try Self.insert(7, into: store) }
        document.close()
        let reopened = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(reopened.version.generation == 1)
        #expect(reopened.journalFrames == 1)
        #expect(DocumentFixture.rows(of: reopened.version) == DocumentFixture.rows(of: store.current))
    }

    @Test func aCompactionOnDemandWaitsForTheSavesWaitingForAnFsync() throws {
        defer { folder.remove() }
        let path = folder.path("compacting.store")
        let store = try DocumentFixture.openStore(path)
        let document = try #require(store.document)
        try Self.insert(1, into: store)
        let gate = Gate()
        Self.holdFirstSync(of: document, at: gate)
        let finished = DispatchGroup()
        let first = Self.startSaves(2...2, into: store, finished: finished)
        #expect(gate.waitUntilReached())
        let others = Self.startSaves(3...5, into: store, finished: finished)
        #expect(Self.waitForFrames(5, in: document))
        // A compaction on demand waits for the saves before it to be durable, then
        // writes every one of them into its snapshot.
        let compacted = DispatchSemaphore(value: 0)
        let compaction = Locked<(any Error)?>(nil)
        Thread {
            do { try store.compact() } catch { compaction.withLock { $0 = error } }
            compacted.signal()
        }.start()
        gate.open()
        #expect(compacted.wait(timeout: .now() + 10) == .success)
        #expect(finished.wait(timeout: .now() + 10) == .success)
        #expect(compaction.withLock { $0 == nil })
        #expect(first.withLock { $0.isEmpty } && others.withLock { $0.isEmpty })
        #expect(store.current.generation == 5)
        document.close()
        let reopened = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(reopened.snapshotGeneration == 5)
        #expect(DocumentFixture.rows(of: reopened.version) == DocumentFixture.rows(of: store.current))
    }

    @Test func aBackgroundCompactionThatCopiedTheFramesAcknowledgesTheirSaves() throws {
        defer { folder.remove() }
        let path = folder.path("replaced.store")
        let store = try DocumentFixture.openStore(path)
        let document = try #require(store.document)
        document.compactionPolicy = .init(ratio: 0, minimumJournalBytes: 0)
        let compactionGate = Gate()
        document._compactionWillFinish = { compactionGate.pass() }
        // Save 1 starts a compaction, which writes its snapshot and waits.
        try Self.insert(1, into: store)
        #expect(compactionGate.waitUntilReached())
        document._compactionWillFinish = nil
        #expect(document.journalSyncs == 1)
        // Save 2 leads the next fsync, which waits; saves 3 and 4 append behind it.
        let syncGate = Gate()
        Self.holdFirstSync(of: document, at: syncGate)
        let leader = DispatchGroup(), followers = DispatchGroup()
        let leaderFailures = Self.startSaves(2...2, into: store, finished: leader)
        #expect(syncGate.waitUntilReached())
        let followerFailures = Self.startSaves(3...4, into: store, finished: followers)
        #expect(Self.waitForFrames(4, in: document))
        // The compaction copies frames 2…4 behind its snapshot, syncs the new file
        // and renames it over the document: saves 3 and 4 are durable, and return
        // while the fsync save 2 leads is still held.
        compactionGate.open()
        #expect(followers.wait(timeout: .now() + 10) == .success)
        #expect(followerFailures.withLock { $0.isEmpty })
        #expect(store.current.tables[0].count >= 3)
        syncGate.open()
        #expect(leader.wait(timeout: .now() + 10) == .success)
        #expect(leaderFailures.withLock { $0.isEmpty })
        // Save 2's fsync found the file replaced: no fsync of its own was needed.
        #expect(document.journalSyncs == 1)
        #expect(store.current.generation == 4)
        document.close()
        let reopened = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(reopened.snapshotGeneration == 1)
        #expect(reopened.version.generation == 4)
        #expect(DocumentFixture.rows(of: reopened.version) == DocumentFixture.rows(of: store.current))
    }
}
