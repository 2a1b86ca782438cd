import Foundation
import OpenSwiftDataStore
import Testing

/// Damaged documents: every cut and flipped byte gives a typed error or a
/// correct earlier state, never a crash or wrong data, and a failed open leaves
/// the file as it was.
@Suite struct DocumentRecoveryTests {
    static let saves = 6
    static let samplePath = "sample.store"

    /// A document with a snapshot of 3 saves and a journal of 3 more, its bytes,
    /// its frames, and the expected rows after each save.
    struct Sample {
        var bytes: [UInt8]
        var frames: [DocumentReader.FrameSummary]
        var expected: [[[RowID: Row]]]
    }

    static func sample(in folder: TemporaryFolder) throws -> Sample {
        let path = folder.path(samplePath)
        do {
            let (document, version) = try Document.open(path: path, schema: DocumentFixture.schema)
            let store = Store(document: document, version: version)
            for k in 1...3 { try DocumentFixture.save(k, in: store) }
            try store.compact()
            for k in 4...saves { try DocumentFixture.save(k, in: store) }
        }
        let contents = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        let expected = try (0...saves).map { try DocumentFixture.expectedRows(after: $0) }
        return Sample(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: path))), frames: contents.frames, expected: expected)
    }

    /// Writes `bytes` as a document and reads it back writable (which cuts a torn tail).
    static func reopen(_ bytes: [UInt8], in folder: TemporaryFolder, name: String) -> Result<Store, DocumentError> {
        let path = folder.path(name)
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        // The blob folder goes with the document's name.
        try? FileManager.default.copyItem(atPath: folder.path(samplePath) + ".blobs", toPath: path + ".blobs")
        do {
            let (document, version) = try Document.open(path: path, schema: DocumentFixture.schema)
            version._checkInvariants()
            return .success(Store(document: document, version: version))
        } catch {
            return .failure(error)
        }
    }

    @Test func cutsAtEveryFrameBoundaryAndInsideEveryFrame() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let sample = try Self.sample(in: folder)
        let commits = sample.frames.filter { $0.kind == .commit }
        let snapshotEnd = try #require(commits.first?.offset)
        var cuts: [Int] = [0, 4, 31]
        for frame in sample.frames {
            cuts += [frame.offset, frame.offset + 10, frame.offset + frame.length / 2, frame.offset + frame.length - 1]
        }
        for (i, cut) in cuts.enumerated() {
            let result = Self.reopen(Array(sample.bytes[0..<cut]), in: folder, name: "cut-\(i).store")
            if cut < snapshotEnd {
                // Inside the snapshot: always an error.
                guard case let .failure(error) = result else {
                    Issue.record("cut at \(cut) inside the snapshot opened")
                    continue
                }
                switch error {
                case .damaged, .notADocument: break
                default: Issue.record("cut at \(cut): unexpected \(error)")
                }
            } else {
                // In the journal: the saves whose frames are whole.
                let whole = commits.filter { $0.offset + $0.length <= cut }.count
                guard case let .success(store) = result else {
                    Issue.record("cut at \(cut) in the journal failed to open")
                    continue
                }
                #expect(DocumentFixture.rows(of: store.current) == sample.expected[3 + whole], "cut at \(cut)")
                // The torn tail was cut off, and a new save appends cleanly after it.
                try DocumentFixture.save(3 + whole + 1, in: store)
                let again = try DocumentReader.read(path: folder.path("cut-\(i).store"), expected: DocumentFixture.schema)
                #expect(again.tornTail == nil)
                #expect(DocumentFixture.rows(of: again.version) == sample.expected[3 + whole + 1])
            }
        }
    }

    @Test(arguments: [1, 2, 3, 4])
    func flippedBytesInEverySection(seed: UInt64) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let sample = try Self.sample(in: folder)
        var random = SplitMix(seed: seed)
        let lastCommit = try #require(sample.frames.last)
        // The header, then some bytes of every frame (its header, payload and checksum).
        var regions: [Range<Int>] = [0..<32]
        for frame in sample.frames {
            regions.append(frame.offset..<(frame.offset + 20))
            regions.append((frame.offset + 20)..<(frame.offset + frame.length - 4))
            regions.append((frame.offset + frame.length - 4)..<(frame.offset + frame.length))
        }
        for (i, region) in regions.enumerated() where !region.isEmpty {
            var bytes = sample.bytes
            let at = region.lowerBound + Int(random.next() % UInt64(region.count))
            bytes[at] ^= UInt8(1 << (random.next() % 8))
            let path = folder.path("flip-\(i).store")
            let result = Self.reopen(bytes, in: folder, name: "flip-\(i).store")
            switch result {
            case let .success(store):
                // Only a flip in the last frame reads as a torn tail (no intact frame
                // follows it): the document is then as of the save before it.
                #expect(at >= lastCommit.offset, "flip at \(at) opened")
                #expect(DocumentFixture.rows(of: store.current) == sample.expected[Self.saves - 1], "flip at \(at)")
            case .failure:
                // A failed open leaves the file exactly as it was.
                #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == bytes, "flip at \(at)")
            }
        }
    }

    /// Power loss can leave any page of the last append unwritten, its header's
    /// included: zeros there with the rest of the frame on disk are a torn tail.
    @Test func aZeroedHeaderOfTheLastFrameIsATornTailButNotOfAnEarlierOne() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let sample = try Self.sample(in: folder)
        let commits = sample.frames.filter { $0.kind == .commit }
        let last = try #require(commits.last)
        var bytes = sample.bytes
        for i in last.offset..<(last.offset + 20) { bytes[i] = 0 }
        let store = try Self.reopen(bytes, in: folder, name: "zeroed-last.store").get()
        #expect(DocumentFixture.rows(of: store.current) == sample.expected[Self.saves - 1])
        // The dropped bytes are kept beside the document.
        let kept = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter { $0.hasPrefix("zeroed-last.store.torn-") }
        #expect(kept.count == 1)

        var middle = sample.bytes
        let earlier = commits[commits.count - 2]
        for i in earlier.offset..<(earlier.offset + 20) { middle[i] = 0 }
        guard case .failure(.damaged) = Self.reopen(middle, in: folder, name: "zeroed-middle.store") else {
            Issue.record("a zeroed frame header followed by an intact frame opened")
            return
        }
    }

    @Test func zeroBytesAfterTheLastFrameAreATornTail() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let sample = try Self.sample(in: folder)
        let result = Self.reopen(sample.bytes + [UInt8](repeating: 0, count: 4096), in: folder, name: "zeros.store")
        let store = try result.get()
        #expect(DocumentFixture.rows(of: store.current) == sample.expected[Self.saves])
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.path("zeros.store"))).count == sample.bytes.count)
    }

    @Test func aReadOnlyOpenNeverCutsTheTornTail() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let sample = try Self.sample(in: folder)
        let torn = Array(sample.bytes.dropLast(3))
        let path = folder.path("torn.store")
        _ = FileManager.default.createFile(atPath: path, contents: Data(torn))
        try FileManager.default.copyItem(atPath: folder.path(Self.samplePath) + ".blobs", toPath: path + ".blobs")
        let (_, version) = try Document.open(path: path, schema: DocumentFixture.schema, readOnly: true)
        #expect(DocumentFixture.rows(of: version) == sample.expected[Self.saves - 1])
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == torn)
    }
}
