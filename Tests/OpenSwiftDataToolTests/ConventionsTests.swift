import Foundation
import OpenSwiftDataStore
import Testing

/// What users expect of any command-line tool: a version, and shell completion.
@Suite struct ConventionsTests {
    @Test func versionNamesTheReleaseAndTheDocumentFormat() throws {
        let result = try OSD.run(["--version"])
        #expect(result.status == 0)
        #expect(result.output == "0.3.0 (writes document format 4.1)\n")
        #expect(result.error.isEmpty)
    }

    /// Docs/CLI.md tells users to install these; each names every command.
    @Test(arguments: ["bash", "zsh", "fish"])
    func completionScripts(_ shell: String) throws {
        let result = try OSD.run(["--generate-completion-script", shell])
        #expect(result.status == 0)
        for command in ["info", "verify", "dump", "export", "import", "query", "compact", "save-as", "salvage"] {
            #expect(result.output.contains(command), "\(shell): \(command)")
        }
    }
}

/// `--json` summaries of the commands that write: one object on one line, the same
/// facts as the text, for scripts (as info, verify and query have).
@Suite struct WriteSummaryJSONTests {
    @Test func compactSaveAsAndImportPrintOneObject() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd"), copy = folder.path("copy.osd")
        let exported = folder.path("trips.json"), imported = folder.path("imported.osd")
        try TripDocument.create(at: path)
        let before = try DocumentReader.read(path: path, blobs: .skip)

        let compact = try OSD.runLocking(["compact", path, "--json"])
        #expect(compact.status == 0, "\(compact.error)")
        #expect(compact.output.hasSuffix("}\n") && compact.output.filter { $0 == "\n" }.count == 1)
        let compacted = try ParsedJSON.object(compact.output)
        #expect(compacted["path"] as? String == path)
        let beforeJSON = try #require(compacted["before"] as? [String: Any]), afterJSON = try #require(compacted["after"] as? [String: Any])
        #expect(beforeJSON["journalFrames"] as? Int == before.journalFrames)
        #expect(beforeJSON["journalBytes"] as? Int == before.journalLength)
        #expect(afterJSON["journalBytes"] as? Int == 0)
        #expect(afterJSON["fileBytes"] as? Int == FileSystemSize.of(path))
        #expect(compacted["removedBlobs"] as? Int == 0)

        let saveAs = try OSD.run(["save-as", path, copy, "--json"])
        #expect(saveAs.status == 0, "\(saveAs.error)")
        let saved = try ParsedJSON.object(saveAs.output)
        #expect(saved["path"] as? String == copy)
        #expect(saved["source"] as? String == path)
        #expect(saved["rows"] as? Int == 10)
        #expect(saved["blobs"] as? Int == 2)
        #expect(saved["fileBytes"] as? Int == FileSystemSize.of(copy))

        #expect(try OSD.run(["export", path, "--output", exported]).status == 0)
        let importRun = try OSD.run(["import", exported, "--output", imported, "--json"])
        #expect(importRun.status == 0, "\(importRun.error)")
        let importJSON = try ParsedJSON.object(importRun.output)
        #expect(importJSON["path"] as? String == imported)
        #expect(importJSON["source"] as? String == exported)
        #expect(importJSON["rows"] as? Int == 10)
        #expect(importJSON["entities"] as? Int == 2)
        #expect(importJSON["fileBytes"] as? Int == FileSystemSize.of(imported))
    }
}

/// A file's size, as the tests check the summaries' byte counts.
enum FileSystemSize {
    static func of(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
    }
}

/// Long operations show their progress on a terminal (count, rate, time left) and
/// print nothing of it when standard error is a file or a pipe.
@Suite struct ProgressTests {
    @Test func progressOnATerminalOnly() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("many.osd")
        // 200,000 rows: an export takes long enough (well over 0.1 s) to show a rate.
        let (document, version) = try TripDocument.openForWriting(path)
        var places = ChangeSet()
        for i in 0..<200_000 {
            places.inserts.append(.init(
                entity: 0, temporaryID: RowID(Int64(-1 - i)), row: [.string("d\(i)"), .string("XX"), .int(Int64(i)), .references([])]))
        }
        _ = try Store(document: document, version: version).commit(places)
        document.close()
        let osd = try #require(OSD.executable).path

        // `script` runs the command on a pseudo-terminal and copies what it wrote.
        let terminal = try OSD.runShell("script -qec '\(osd) export \(path) --output \(folder.path("a.json"))' /dev/null")
        #expect(terminal.status == 0, "\(terminal.output)")
        #expect(terminal.output.contains("exporting rows: "))
        #expect(terminal.output.contains("/200000 ("), "\(terminal.output.suffix(300))")
        #expect(terminal.output.contains("/s"))

        let piped = try OSD.run(["export", path, "--output", folder.path("b.json")])
        #expect(piped.status == 0)
        #expect(!piped.error.contains("exporting rows"))
        #expect(!piped.error.contains("reading the document"))
    }

    /// The document read behind every command, verify's frames and compaction's
    /// rewrite show progress too: bytes for reads, rows for the rewrite. (The first
    /// and the last position are always drawn, so a fast run shows them as well.)
    @Test func readsVerifiesAndCompactionsShowProgress() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("many.osd")
        let (document, version) = try TripDocument.openForWriting(path)
        let store = Store(document: document, version: version)
        for batch in 0..<4 {
            var places = ChangeSet()
            for i in 0..<25_000 {
                let n = batch * 25_000 + i
                places.inserts.append(.init(
                    entity: 0, temporaryID: RowID(Int64(-1 - i)), row: [.string("d\(n)"), .string("XX"), .int(Int64(n)), .references([])]))
            }
            _ = try store.commit(places)
        }
        document.close()
        let osd = try #require(OSD.executable).path
        func onATerminal(_ arguments: String) throws -> String {
            let run = try OSD.runShell("script -qec '\(osd) \(arguments)' /dev/null")
            #expect(run.status == 0, "\(run.output)")
            return run.output
        }

        let info = try onATerminal("info \(path)")
        #expect(info.contains("reading the document: "), "\(info.prefix(300))")
        #expect(info.contains(" MB"))
        let verify = try onATerminal("verify \(path)")
        #expect(verify.contains("checking frames: "), "\(verify.prefix(300))")
        let compact = try onATerminal("compact \(path)")
        #expect(compact.contains("opening for writing: "), "\(compact.prefix(300))")
        #expect(compact.contains("compacting rows: 100000/100000"), "\(compact.suffix(300))")
        #expect(compact.contains("compacted \(path)"))

        let piped = try OSD.run(["compact", path])
        #expect(piped.status == 0)
        #expect(piped.error.isEmpty, "\(piped.error)")
    }
}
