import Foundation
import OpenSwiftDataStore
import Testing

/// Compaction off the commit path (#40, point 5): a save that passes the policy starts
/// a compaction in the background and returns; saves made while it writes land in the
/// new file; a failure leaves the journal whole.
@Suite struct BackgroundCompactionTests {
    let folder: TemporaryFolder
    init() throws { folder = try TemporaryFolder() }

    /// A store whose every save wants a compaction, and whose background compactions
    /// stop before their last step until `gate.open()`.
    func pausedStore(_ path: String, gate: Gate) throws -> (Store, Document) {
        let store = try DocumentFixture.openStore(path)
        let document = try #require(store.document)
        document.compactionPolicy = .init(ratio: 0, minimumJournalBytes: 0)
        document._compactionWillFinish = { gate.pass() }
        return (store, document)
    }

    /// Save 1, whose compaction (of generation 1) is left waiting before its last
    /// step; later saves start none of their own while it waits.
    func startPausedCompaction(_ store: Store, _ document: Document, _ gate: Gate) throws {
        try DocumentFixture.save(1, in: store)
        #expect(gate.waitUntilReached())
        document._compactionWillFinish = nil
    }

    /// The temporary files in the test's folder (a compaction's, left behind).
    func temporaryFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path("")).filter { $0.hasSuffix(".tmp") }
    }

    /// 400 items with 15,000 random bytes each, inline (under the external-storage
    /// threshold): about 6 MB that zstd cannot shrink.
    static func incompressibleItems(seed: UInt64) -> ChangeSet {
        var random = SplitMix(seed: seed)
        var changes = ChangeSet()
        for n in 0..<400 {
            var row = DocumentFixture.item(1_000 + n)
            row[12] = .data(Data((0..<15_000).map { _ in UInt8(truncatingIfNeeded: random.next()) }))
            changes.inserts.append(.init(entity: 0, temporaryID: RowID(Int64(-1 - n)), row: row))
        }
        return changes
    }

    static func inode(_ path: String) -> UInt64? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? UInt64) ?? nil
    }

    @Test func savesGoOnWhileACompactionWritesAndLandInTheNewFile() throws {
        defer { folder.remove() }
        let path = folder.path("busy.store")
        let gate = Gate()
        let (store, document) = try pausedStore(path, gate: gate)
        let before = Self.inode(path)
        // The compaction of generation 1 writes its snapshot and waits.
        try startPausedCompaction(store, document, gate)
        // Saves return while it waits (they never wait for the rewrite). Saves 3
        // and 6 store photos as blobs, which only their frames name.
        for k in 2...6 { try DocumentFixture.save(k, in: store) }
        #expect(Self.inode(path) == before)
        #expect(document.journalFrames == 6)
        gate.open()
        document.waitForCompaction()
        #expect(Self.inode(path) != before)
        #expect(document.journalFrames == 5)
        let reopened = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(reopened.snapshotGeneration == 1)
        #expect(reopened.journalFrames == 5)
        #expect(DocumentFixture.rows(of: reopened.version) == (try DocumentFixture.expectedRows(after: 6)))
        // The new file takes later saves.
        document.compactionPolicy = .init()
        try DocumentFixture.save(7, in: store)
        let again = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(DocumentFixture.rows(of: again.version) == (try DocumentFixture.expectedRows(after: 7)))
        #expect(again.journalFrames == 6)
    }

    @Test func aBackgroundCompactionThatFailsLeavesTheJournalWhole() throws {
        defer { folder.remove() }
        let path = folder.path("failing.store")
        let gate = Gate()
        let (store, document) = try pausedStore(path, gate: gate)
        try startPausedCompaction(store, document, gate)
        try DocumentFixture.save(2, in: store)
        // Its rename fails (a full disk would fail its write the same way).
        _FileFaults.install(under: folder.path(""), failing: 1, of: [.rename], with: .error(EIO))
        gate.open()
        document.waitForCompaction()
        #expect(_FileFaults.remove(under: folder.path("")))
        #expect(document.journalFrames == 2)
        // No temporary file is left, and saves go on (without compacting again at once).
        #expect(try temporaryFiles().isEmpty)
        try DocumentFixture.save(3, in: store)
        #expect(document.journalFrames == 3)
        let reopened = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(reopened.snapshotGeneration == 0)
        #expect(DocumentFixture.rows(of: reopened.version) == (try DocumentFixture.expectedRows(after: 3)))
    }

    @Test func aCompactionIsDroppedWhenSavesStopWhileItWrites() throws {
        defer { folder.remove() }
        let path = folder.path("stopped.store")
        let gate = Gate()
        let (store, document) = try pausedStore(path, gate: gate)
        try startPausedCompaction(store, document, gate)
        // A save's fsync fails: saves stop until the document is opened again.
        _FileFaults.install(under: folder.path(""), failing: 1, of: [.sync], with: .error(EIO))
        #expect(throws: StoreError.self) { try DocumentFixture.save(2, in: store) }
        #expect(_FileFaults.remove(under: folder.path("")))
        gate.open()
        document.waitForCompaction()
        // The compaction was not put in place, and left nothing behind.
        #expect(try temporaryFiles().isEmpty)
        let reopened = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(reopened.snapshotGeneration == 0)
        #expect(DocumentFixture.rows(of: reopened.version) == (try DocumentFixture.expectedRows(after: 1)))
    }

    @Test func closingWaitsForARunningCompaction() throws {
        defer { folder.remove() }
        let path = folder.path("closing.store")
        let store = try DocumentFixture.openStore(path)
        let document = try #require(store.document)
        document.compactionPolicy = .init(ratio: 0, minimumJournalBytes: 0)
        document._compactionWillFinish = { usleep(200_000) }
        try DocumentFixture.save(1, in: store)
        document.close()
        let reopened = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(reopened.snapshotGeneration == 1)
        #expect(reopened.journalFrames == 0)
        // The lock is free: a writer opens it.
        let writer = try DocumentFixture.openStore(path)
        #expect(DocumentFixture.rows(of: writer.current) == (try DocumentFixture.expectedRows(after: 1)))
    }

    /// A snapshot larger than the write-back step (4 MiB) is written and synced in
    /// parts; a failed part leaves the document as it was.
    @Test func aLargeSnapshotIsWrittenInPartsAndAFailedPartChangesNothing() throws {
        defer { folder.remove() }
        let path = folder.path("large.store")
        let store = try DocumentFixture.openStore(path)
        // (No compaction of its own in the background: this one compacts on demand.)
        try #require(store.document).compactionPolicy = .init(ratio: 100, minimumJournalBytes: 1 << 30)
        _ = try store.commit(Self.incompressibleItems(seed: 42))
        let expected = DocumentFixture.rows(of: store.current)
        // The first write-back sync (`fdatasync` after the first 4 MiB) fails.
        _FileFaults.install(under: folder.path(""), failing: 1, of: [.sync], with: .error(EIO))
        #expect(throws: StoreError.self) { try store.compact() }
        #expect(_FileFaults.remove(under: folder.path("")))
        #expect(try DocumentReader.read(path: path, expected: DocumentFixture.schema).journalFrames == 1)
        try store.compact()
        let reopened = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(reopened.snapshotLength > 4 << 20)
        #expect(reopened.journalFrames == 0)
        #expect(DocumentFixture.rows(of: reopened.version) == expected)
    }

    /// A background compaction compresses its frames on its own thread (on 2 cores
    /// or fewer) or on all cores but two: a snapshot of many frames comes out whole
    /// and in order either way.
    @Test func aLargeSnapshotCompactsInTheBackgroundFrameByFrame() throws {
        defer { folder.remove() }
        let path = folder.path("large-background.store")
        let store = try DocumentFixture.openStore(path)
        let document = try #require(store.document)
        document.compactionPolicy = .init(ratio: 100, minimumJournalBytes: 1 << 30)
        // Several frames of the snapshot.
        _ = try store.commit(Self.incompressibleItems(seed: 7))
        // The next save starts a compaction in the background.
        document.compactionPolicy = .init(ratio: 0, minimumJournalBytes: 0)
        try DocumentFixture.save(1, in: store)
        document.waitForCompaction()
        let expected = DocumentFixture.rows(of: store.current)
        let reopened = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(reopened.snapshotLength > 4 << 20)
        #expect(reopened.journalFrames == 0)
        #expect(DocumentFixture.rows(of: reopened.version) == expected)
    }

    @Test func aCompactionOnDemandWaitsForTheOneInTheBackground() throws {
        defer { folder.remove() }
        let path = folder.path("demand.store")
        let gate = Gate()
        let (store, document) = try pausedStore(path, gate: gate)
        try startPausedCompaction(store, document, gate)
        try DocumentFixture.save(2, in: store)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { gate.open() }
        try store.compact()
        #expect(document.journalFrames == 0)
        let reopened = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(reopened.snapshotGeneration == 2)
        #expect(DocumentFixture.rows(of: reopened.version) == (try DocumentFixture.expectedRows(after: 2)))
    }
}

/// Holds a background compaction before its last step: `pass` (on its thread) reports
/// arrival and waits for `open`.
final class Gate: Sendable {
    private let reached = DispatchSemaphore(value: 0)
    private let opened = DispatchSemaphore(value: 0)

    func pass() {
        reached.signal()
        opened.wait()
    }

    /// Whether a compaction arrived within ten seconds.
    func waitUntilReached() -> Bool { reached.wait(timeout: .now() + 10) == .success }

    func open() { opened.signal() }
}
