import ArgumentParser
import OpenSwiftDataStore

extension Tool {
    /// `osd export`: the export form into a file, written whole or not at all.
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a document (schema and rows) to a JSON file that import reads back.")

        @Argument(help: "The document file.")
        var document: String

        @Option(name: .shortAndLong, help: "The JSON file to write.")
        var output: String

        @Flag(help: "Replace the output file if it exists.")
        var force = false

        func run() throws {
            try reportingFailures {
                try FileSystem.checkReplaceable(output, force: force)
                if FileSystem.sameFile(output, document) { throw ToolFailure("the output is the document itself") }
                let version = try DocumentReader.readShowingProgress(path: document, blobs: .load).version
                try FileSystem.writeAtomically(output) { sink in try DocumentExport.write(version, to: sink) }
                let rows = version.tables.reduce(0) { $0 + $1.count }
                let summary = OutputSink.standardOutput()
                try summary.line("exported \(plural(rows, "row")) of \(plural(version.schema.entities.count, "entity", "entities")) to \(output)")
                try summary.flush()
            }
        }
    }
}
