import ArgumentParser
import OpenSwiftDataStore

extension Tool {
    /// `osd save-as`: a complete, compacted copy of a document and its blobs.
    struct SaveAs: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "save-as",
            abstract: "Write a complete copy of a document (one snapshot, with its blobs) to a new path.")

        @OptionGroup var target: CopyTarget

        @Flag(help: "Print one JSON object instead of text.")
        var json = false

        func run() throws {
            try reportingFailures {
                try target.check()
                let (document, newDocument, force) = (target.document, target.newDocument, target.force)
                // Loading every blob verifies it: a copy never carries damage along silently.
                let contents = try DocumentReader.readShowingProgress(path: document, blobs: .load)
                // A copy keeps the store identifier (nil from an older document: a new one).
                try Document.write(
                    contents.version, to: newDocument, identifier: contents.storeIdentifier,
                    schemaVersion: contents.schemaVersion, replacing: force)
                let rows = contents.version.tables.reduce(0) { $0 + $1.count }
                let blobs = BlobStore(documentPath: newDocument).names().count
                let output = OutputSink.standardOutput()
                let bytes = FileSystem.size(of: newDocument) ?? 0
                if json {
                    try output.line(JSONWriter.compact(.object([
                        ("path", .string(newDocument)), ("source", .string(document)), ("fileBytes", .integer(Int64(bytes))),
                        ("rows", .integer(Int64(rows))), ("blobs", .integer(Int64(blobs))),
                    ])))
                } else {
                    try output.line("wrote \(newDocument): \(plural(bytes, "byte")), \(plural(rows, "row")), \(plural(blobs, "blob"))")
                }
                try output.flush()
            }
        }
    }
}
