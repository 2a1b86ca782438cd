import Foundation
import Testing

@Suite struct ErrorTests {
    @Test func missingAndForeignFilesAreClearErrors() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let missing = folder.path("missing.osd"), text = folder.path("notes.txt")
        try Data("just some notes, long enough to hold a header".utf8).write(to: URL(fileURLWithPath: text))

        for command in ["info", "verify", "dump", "compact"] {
            let result = try OSD.run([command, missing])
            #expect(result.status == 1, "\(command)")
            #expect(result.error == "osd: \(missing) does not exist\n", "\(command)")
            #expect(!FileManager.default.fileExists(atPath: missing), "\(command)")
        }
        let info = try OSD.run(["info", text])
        #expect(info.status == 1)
        #expect(info.error == "osd: \(text) is not an OpenSwiftData document\n")
        let verify = try OSD.run(["verify", text])
        #expect(verify.status == 2)
        #expect(verify.output.contains("damaged: \(text) is not an OpenSwiftData document"))
        let compact = try OSD.run(["compact", text])
        #expect(compact.status == 1)
        #expect(try String(contentsOfFile: text, encoding: .utf8).hasPrefix("just some notes"))
    }

    @Test func usageErrorsExitWith64() throws {
        let result = try OSD.run(["info"])
        #expect(result.status == 64)
        #expect(result.error.contains("Missing expected argument '<document>'"))
        let help = try OSD.run(["--help"])
        #expect(help.status == 0)
        for command in ["info", "verify", "dump", "export", "import", "query", "compact", "save-as"] {
            #expect(help.output.contains(command))
        }
    }
}
