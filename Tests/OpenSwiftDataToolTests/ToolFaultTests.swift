import ArgumentParser
import Foundation
import OpenSwiftDataStore
import OpenSwiftDataTool
import Testing

/// `osd import`, `save-as` and `export` when a file call fails (#45, point 2): the
/// commands run in this process, so `_FileFaults` reaches their calls. Each fault
/// ends the command with a failure, and what it was writing is either whole or not
/// there at all, blobs included; the source is never touched.
@Suite(.serialized) struct ToolFaultTests {
    static let faults: [(name: String, calls: Set<_FileFaults.Call>, failure: _FileFaults.Failure)] = [
        ("ENOSPC", Set(_FileFaults.Call.allCases), .error(ENOSPC)),
        ("EIO", Set(_FileFaults.Call.allCases), .error(EIO)),
        ("short write", [.write], .shortWrite),
        ("fsync failure", [.sync, .syncDirectory], .error(EIO)),
        ("rename failure", [.rename, .link], .error(EXDEV)),
    ]

    /// Runs `osd arguments…` in this process; whether it succeeded.
    static func osd(_ arguments: [String]) -> Bool {
        do {
            var command = try Tool.parseAsRoot(arguments)
            try command.run()
            return true
        } catch {
            return false
        }
    }

    /// The blob files beside `document`.
    static func blobs(of document: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: document + ".blobs")) ?? []
    }

    /// For each fault and n = 1, 2, …: a fresh folder with the trips document and its
    /// export, `command` run with the nth matching call failing, then `check`.
    /// Returns how many faults fired.
    static func eachFault(
        _ command: (_ folder: TemporaryFolder) -> [String],
        check: (_ folder: TemporaryFolder, _ succeeded: Bool, _ fault: String) throws -> Void
    ) throws -> Int {
        var fired = 0
        for fault in faults {
            for n in 1...200 {
                let folder = try TemporaryFolder()
                defer { folder.remove() }
                _ = try TripDocument.create(at: folder.path("trips.osd"))
                #expect(osd(["export", folder.path("trips.osd"), "--output", folder.path("trips.json")]))
                _FileFaults.install(under: folder.url.path, failing: n, of: fault.calls, with: fault.failure)
                let succeeded = osd(command(folder))
                let happened = _FileFaults.remove(under: folder.url.path)
                try check(folder, succeeded, fault.name)
                guard happened else { break }
                fired += 1
            }
        }
        return fired
    }

    @Test func importUnderEveryFaultLeavesAWholeDocumentOrNone() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let expected = try TripDocument.create(at: scratch.path("expected.osd"))
        let fired = try Self.eachFault({ ["import", $0.path("trips.json"), "--output", $0.path("copy.osd")] }) { folder, succeeded, fault in
            let copy = folder.path("copy.osd")
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter { $0.contains(".tmp") }
            #expect(leftovers == [], "\(fault): \(leftovers)")
            if FileManager.default.fileExists(atPath: copy) {
                // Whole, with every blob it names.
                let contents = try DocumentReader.read(path: copy, blobs: .load)
                #expect(TripDocument.sameContents(contents.version, expected), "\(fault)")
                #expect(Set(Self.blobs(of: copy)) == contents.blobNames, "\(fault)")
            } else {
                #expect(!succeeded, "\(fault): import reported success without a document")
                #expect(Self.blobs(of: copy) == [], "\(fault): a failed import left blobs")
            }
        }
        print("ToolFaultTests: \(fired) faults injected into imports")
        #expect(fired > 20)
    }

    @Test func saveAsUnderEveryFaultLeavesTheSourceAndAWholeCopyOrNone() throws {
        let fired = try Self.eachFault({ ["save-as", $0.path("trips.osd"), $0.path("copy.osd")] }) { folder, succeeded, fault in
            let source = try DocumentReader.read(path: folder.path("trips.osd"), blobs: .load)
            let copy = folder.path("copy.osd")
            if FileManager.default.fileExists(atPath: copy) {
                let contents = try DocumentReader.read(path: copy, blobs: .load)
                #expect(TripDocument.sameContents(contents.version, source.version), "\(fault)")
                #expect(Set(Self.blobs(of: copy)) == contents.blobNames, "\(fault)")
            } else {
                #expect(!succeeded, "\(fault): save-as reported success without a copy")
                #expect(Self.blobs(of: copy) == [], "\(fault): a failed save-as left blobs")
            }
        }
        print("ToolFaultTests: \(fired) faults injected into save-as")
        #expect(fired > 20)
    }

    @Test func exportUnderEveryFaultFailsWithoutTouchingTheDocument() throws {
        let fired = try Self.eachFault({ ["export", $0.path("trips.osd"), "--output", $0.path("again.json")] }) { folder, succeeded, fault in
            if succeeded {
                let again = try Data(contentsOf: URL(fileURLWithPath: folder.path("again.json")))
                #expect(again == (try Data(contentsOf: URL(fileURLWithPath: folder.path("trips.json")))), "\(fault)")
            }
            #expect(throws: Never.self, "\(fault)") { try DocumentReader.read(path: folder.path("trips.osd"), blobs: .load) }
        }
        print("ToolFaultTests: \(fired) faults injected into exports")
        #expect(fired > 3)
    }
}
