import ArgumentParser
import OpenSwiftDataStore

extension Tool {
    /// `osd info`: what a document holds and how it is laid out on disk, read
    /// without touching its blob files.
    struct Info: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Describe a document: format, schema, row counts, sizes and blobs.")

        @Argument(help: "The document file.")
        var document: String

        @Flag(help: "Print one JSON object instead of text.")
        var json = false

        func run() throws {
            try reportingFailures {
                let contents = try DocumentReader.readShowingProgress(path: document, blobs: .skip)
                let summary = DocumentSummary(contents)
                let output = OutputSink.standardOutput()
                try output.write(json ? JSONWriter.pretty(summary.json, indent: 0) + "\n" : summary.text)
                try output.flush()
            }
        }
    }
}
