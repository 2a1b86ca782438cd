import Foundation
import OpenSwiftDataStore
import Testing

/// Damage is never silent (#45, point 1): only a crash tears, and only the last
/// append, so a document with one, two or three damaged frames anywhere (first,
/// middle, last, adjacent, apart; with and without a snapshot, blobs and a
/// compaction) either opens whole, opens without its last append, or is reported
/// damaged. Never does it open with fewer saves and no error.
@Suite struct DocumentDamageTests {
    static let saves = 20

    /// Documents of 20 saves (every third with a 20 KB blob beside it): the whole
    /// journal after the initial snapshot, or compacted after save 5, 15 saves after.
    enum Shape: CaseIterable { case journalOnly, compacted }

    struct Sample {
        var bytes: [UInt8]
        var commits: [DocumentReader.FrameSummary]
        var expected: [[[RowID: Row]]]
        /// Saves the snapshot holds.
        var inSnapshot: Int
    }

    static func sample(_ shape: Shape, in folder: TemporaryFolder) throws -> Sample {
        let path = folder.path("sample.store")
        let inSnapshot = shape == .compacted ? 5 : 0
        do {
            let store = try DocumentFixture.openStore(path)
            for k in 1...saves {
                try DocumentFixture.save(k, in: store)
                if k == inSnapshot { try store.compact() }
            }
        }
        let contents = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        return Sample(
            bytes: Array(try Data(contentsOf: URL(fileURLWithPath: path))),
            commits: contents.frames.filter { $0.kind == .commit },
            expected: try (0...saves).map { try DocumentFixture.expectedRows(after: $0) },
            inSnapshot: inSnapshot)
    }

    /// What opening the damaged bytes (writable, then read-only) gave; `wrong` names
    /// the save the rows are as of, when they are as of one.
    enum Outcome: Equatable { case whole, lastAppendDropped, reported, wrong(Int?) }

    static func open(_ bytes: [UInt8], _ sample: Sample, in folder: TemporaryFolder, name: String, readOnly: Bool) -> Outcome {
        let path = folder.path(name)
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        try? FileManager.default.removeItem(atPath: path + ".blobs")
        try? FileManager.default.copyItem(atPath: folder.path("sample.store") + ".blobs", toPath: path + ".blobs")
        defer {
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: path + ".blobs")
        }
        do {
            let (_, version) = try Document.open(path: path, schema: DocumentFixture.schema, readOnly: readOnly)
            let rows = DocumentFixture.rows(of: version)
            if rows == sample.expected[saves] { return .whole }
            if rows == sample.expected[saves - 1] { return .lastAppendDropped }
            return .wrong(sample.expected.firstIndex(of: rows))
        } catch {
            return .reported
        }
    }

    /// Flips one random bit in each of `frames` (commit frame indexes) and checks
    /// the outcome on both kinds of open.
    static func damage(_ frames: [Int], _ sample: Sample, seed: UInt64, in folder: TemporaryFolder) -> [Outcome] {
        var random = SplitMix(seed: seed)
        var bytes = sample.bytes
        for index in frames {
            let frame = sample.commits[index]
            let at = frame.offset + Int(random.next() % UInt64(frame.length))
            bytes[at] ^= UInt8(1 << (random.next() % 8))
        }
        return [false, true].map { open(bytes, sample, in: folder, name: "damaged.store", readOnly: $0) }
    }

    @Test(arguments: Shape.allCases)
    func oneTwoOrThreeDamagedFramesAreNeverSilent(_ shape: Shape) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let sample = try Self.sample(shape, in: folder)
        let last = sample.commits.count - 1
        let middle = last / 2
        // Frame sets by position: first, middle, last; adjacent and apart pairs; triples.
        let sets: [[Int]] = [
            [0], [middle], [last],
            [0, 1], [middle, middle + 1], [last - 1, last], [0, last], [0, middle], [middle, last],
            [0, 1, 2], [middle - 1, middle, middle + 1], [last - 2, last - 1, last], [0, middle, last],
        ]
        for frames in sets {
            // Every byte of a frame is under a checksum, so a flipped bit is never
            // harmless: damage confined to the last frame reads as its tear (what a
            // crash leaves), anything else is reported. Never fewer saves, silently.
            let expected: Outcome = frames == [last] ? .lastAppendDropped : .reported
            for seed in 1...12 as ClosedRange<UInt64> {
                let outcomes = Self.damage(frames, sample, seed: seed &* 7919 &+ UInt64(frames.count), in: folder)
                #expect(outcomes == [expected, expected], "frames \(frames), seed \(seed) (writable, read-only)")
            }
        }
    }

    /// A crash's tear (the last append cut anywhere) still opens as of the save before.
    @Test(arguments: Shape.allCases)
    func aCutLastAppendIsStillATornTail(_ shape: Shape) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let sample = try Self.sample(shape, in: folder)
        let last = try #require(sample.commits.last)
        for cut in [last.offset + 1, last.offset + 19, last.offset + 20, last.offset + last.length / 2, last.offset + last.length - 1] {
            #expect(Self.open(Array(sample.bytes[..<cut]), sample, in: folder, name: "cut.store", readOnly: true) == .lastAppendDropped)
            #expect(Self.open(Array(sample.bytes[..<cut]), sample, in: folder, name: "cut.store", readOnly: false) == .lastAppendDropped)
        }
    }
}

/// A document whose name fits compacts, saves and keeps a torn tail whatever the
/// length of its name (#45, point 3): the files beside it shorten the name.
@Suite struct LongDocumentNameTests {
    @Test(arguments: [200, 226, 229, 240, 255 - ".blobs".utf8.count])
    func compactsAndKeepsATornTail(nameBytes: Int) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        // Multi-byte characters, so the shortened name must end on a character.
        let name = String(repeating: "é", count: nameBytes / 2) + (nameBytes % 2 == 0 ? "" : "x")
        #expect(name.utf8.count == nameBytes)
        let path = folder.path(name)
        do {
            let store = try DocumentFixture.openStore(path)
            for k in 1...3 { try DocumentFixture.save(k, in: store) }
            try store.compact()
            try DocumentFixture.save(4, in: store)
        }
        var contents = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(contents.journalFrames == 1)
        #expect(DocumentFixture.rows(of: contents.version) == (try DocumentFixture.expectedRows(after: 4)))

        // A torn last append: a writable open cuts it off and keeps it beside.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.dropLast(5).write(to: URL(fileURLWithPath: path))
        _ = try DocumentFixture.openStore(path)
        contents = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(DocumentFixture.rows(of: contents.version) == (try DocumentFixture.expectedRows(after: 3)))
        let kept = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter { $0.contains(".torn-") }
        #expect(kept.count == 1)
        #expect(kept.allSatisfy { $0.utf8.count <= 255 })
    }
}
