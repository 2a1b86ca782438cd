import ArgumentParser

extension Tool {
    /// `osd verify`: checks every frame checksum and every blob of a document, and
    /// lists what is wrong rather than stopping at the first problem where it can.
    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check every checksum and every blob of a document.",
            discussion: """
                Exits 0 when the document is intact, 2 when it is damaged. A torn last \
                frame (a save cut short by a crash, dropped at the next open) is a warning \
                unless --strict; blob files nothing refers to are reported, not errors.
                """)

        @Argument(help: "The document file.")
        var document: String

        @Flag(help: "Print one JSON object instead of text.")
        var json = false

        @Flag(help: "Count a torn last frame as damage.")
        var strict = false

        func run() throws {
            var report: VerifyReport?
            try reportingFailures {
                let result = try VerifyReport(path: document)
                let output = OutputSink.standardOutput()
                try output.write(json ? JSONWriter.pretty(result.json(strict: strict), indent: 0) + "\n" : result.text(strict: strict))
                try output.flush()
                report = result
            }
            if let report, !report.isIntact(strict: strict) { throw ExitStatus.damaged }
        }
    }
}
