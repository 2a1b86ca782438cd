import Foundation
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
