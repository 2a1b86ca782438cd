import ArgumentParser
import OpenSwiftDataStore

extension Tool {
    /// `osd save-as`: a complete, compacted copy of a document and its blobs.
    struct SaveAs: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "save-as",
            abstract: "Write a complete copy of a document (one snapshot, with its blobs) to a new path.")

        @OptionGroup var target: CopyTarget

        func run() throws {
            try reportingFailures {
                try target.check()
                let (document, newDocument, force) = (target.document, target.newDocument, target.force)
                // Loading every blob verifies it: a copy never carries damage along silently.
                let contents = try DocumentReader.read(path: document, blobs: .load)
                // A copy keeps the store identifier (nil from an older document: a new one).
                try Document.write(
                    contents.version, to: newDocument, identifier: contents.storeIdentifier,
                    schemaVersion: contents.schemaVersion, replacing: force)
                let rows = contents.version.tables.reduce(0) { $0 + $1.count }
                let blobs = BlobStore(documentPath: newDocument).names().count
                let output = OutputSink.standardOutput()
                try output.line(
                    "wrote \(newDocument): \(plural(FileSystem.size(of: newDocument) ?? 0, "byte")), \(plural(rows, "row")), \(plural(blobs, "blob"))")
                try output.flush()
            }
        }
    }
}
