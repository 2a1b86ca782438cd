import Foundation
import OpenSwiftDataStore
import DocumentTestSupport
import Testing

/// History bytes made to hurt the reader (format 4): each is damage, reported as
/// such, never a crash or an allocation sized by a claim.
@Suite struct HostileHistoryTests {
    /// A commit frame for `generation` that writes no row, ending with `history`
    /// (the history section's bytes).
    private static func commit(_ generation: UInt64, history: [UInt8]) -> [UInt8] {
        let payload = FrameBytes.varint(generation) + [UInt8](repeating: 0, count: 8) + [0] + [0, 0, 0] + history
        return FrameBytes.frame(kind: .commit, stored: payload)
    }

    /// The changes of one insert run of `count` rows from row 1 of entity 0.
    private static func insertRun(_ count: UInt64) -> [UInt8] {
        [1] + [1, 0] + FrameBytes.varint(2) + FrameBytes.varint(count)
    }

    private static func pruning(horizon: UInt64, _ generations: [UInt64]) -> [UInt8] {
        var bytes = FrameBytes.varint(horizon) + FrameBytes.varint(UInt64(generations.count))
        var previous: UInt64 = 0
        for g in generations {
            bytes += FrameBytes.varint(g - previous)
            previous = g
        }
        return bytes
    }

    private func read(_ journal: [UInt8]) throws -> Result<DocumentReader.Contents, DocumentError> {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (bytes, _) = try HostileDocumentTests.emptyDocument(in: folder)
        return HostileDocumentTests.read(bytes + journal, in: folder, name: "hostile.store")
    }

    @Test func aWellFormedJournalReadsBack() throws {
        let result = try read(Self.commit(1, history: [1] + Self.insertRun(3))
            + Self.commit(2, history: [1] + Self.insertRun(1))
            + Self.commit(3, history: [2] + Self.pruning(horizon: 1, [1])))
        let history = try result.get().version.history
        #expect(history.count == 1)
        #expect(history[0].generation == 2)
        #expect(history.horizon == 1)
    }

    @Test func anInsertRunOfBillionsOfRowsIsRefusedByTheBudget() throws {
        let reason = HostileDocumentTests.damageReason(try read(Self.commit(1, history: [1] + Self.insertRun(1 << 30))))
        #expect(reason?.contains("history names more rows") == true, "\(String(describing: reason))")
    }

    @Test func malformedSectionsAreDamage() throws {
        let cases: [(String, [UInt8])] = [
            ("unknown flags", Self.commit(1, history: [4])),
            ("no changes", Self.commit(1, history: [1, 0])),
            ("an update of no slot", Self.commit(1, history: [1, 1, 2, 0, 2, 0])),
            ("deleting its own generation", Self.commit(1, history: [2] + Self.pruning(horizon: 1, []))),
            ("generation 0", Self.commit(2, history: [2] + Self.pruning(horizon: 1, [0]))),
            ("deleting what is not there", Self.commit(1, history: [1] + Self.insertRun(1))
                + Self.commit(2, history: [2] + Self.pruning(horizon: 1, [1]))
                + Self.commit(3, history: [2] + Self.pruning(horizon: 1, [1]))),
            ("a run past the last row identifier", Self.commit(1, history: [1, 1, 1, 0] + FrameBytes.varint(1 << 33) + FrameBytes.varint(2))),
        ]
        for (what, journal) in cases {
            let result = try read(journal)
            #expect(HostileDocumentTests.damageReason(result) != nil, "\(what): \(result)")
        }
    }

    @Test func aHistoryFrameInAFormatThreeDocumentIsDamage() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (bytes, frames) = try HostileDocumentTests.emptyDocument(in: folder)
        let end = try #require(frames.last { $0.kind == .snapshotEnd })
        let history = FrameBytes.frame(kind: .history, stored: FrameBytes.varint(0) + FrameBytes.varint(0))
        var file = Array(bytes[..<end.offset]) + history + Array(bytes[end.offset...])
        #expect(try HostileDocumentTests.read(file, in: folder, name: "four.store").get().version.history.isEmpty)
        file[8] = 3
        file = FrameBytes.resealingHeader(file)
        #expect(HostileDocumentTests.damageReason(HostileDocumentTests.read(file, in: folder, name: "three.store")) != nil)
    }
}
