import ArgumentParser
import OpenSwiftDataStore

extension Tool {
    /// `osd compact`: folds the journal into a fresh snapshot, as the application
    /// would, holding the document's write lock while it does.
    struct Compact: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Rewrite a document as one fresh snapshot (journal folded in, unreferenced blobs removed).",
            discussion: "Fails without touching the document if another process has it open for writing.")

        @Argument(help: "The document file.")
        var document: String

        @Flag(help: "Print one JSON object instead of text.")
        var json = false

        func run() throws {
            try reportingFailures {
                // The schema comes from the document itself; opening for writing then
                // checks it, takes the lock and verifies every blob.
                let before = try DocumentReader.readShowingProgress(path: document, blobs: .skip)
                let beforeBytes = FileSystem.size(of: document) ?? before.validLength
                let folder = BlobStore(documentPath: document)
                let blobsBefore = folder.names().count
                let (opened, version) = try Progress.showing("opening for writing", unit: .bytes) {
                    (progress) throws(DocumentError) in
                    try Document.open(path: document, schema: before.schema, exclusive: true, progress: progress)
                }
                defer { opened.close() }
                // The document's own compaction, as a store's `compact()` runs it.
                try Progress.showing("compacting rows", unit: .items) { (progress) throws(DocumentError) in
                    try opened.compact(version, progress: progress)
                }
                let snapshot = opened.snapshotLength, journal = opened.journalLength
                opened.close()
                let afterBytes = FileSystem.size(of: document) ?? snapshot
                let output = OutputSink.standardOutput()
                let removed = blobsBefore - folder.names().count
                if json {
                    try output.line(JSONWriter.compact(.object([
                        ("path", .string(document)),
                        ("before", .object([
                            ("fileBytes", .integer(Int64(beforeBytes))), ("snapshotBytes", .integer(Int64(before.snapshotLength))),
                            ("journalBytes", .integer(Int64(before.journalLength))), ("journalFrames", .integer(Int64(before.journalFrames))),
                        ])),
                        ("after", .object([
                            ("fileBytes", .integer(Int64(afterBytes))), ("snapshotBytes", .integer(Int64(snapshot))),
                            ("journalBytes", .integer(Int64(journal))),
                        ])),
                        ("removedBlobs", .integer(Int64(removed))),
                    ])))
                } else {
                    try output.line("compacted \(document): \(beforeBytes) → \(plural(afterBytes, "byte"))")
                    try output.line("  before: snapshot \(plural(before.snapshotLength, "byte")), journal \(plural(before.journalLength, "byte")) in \(plural(before.journalFrames, "frame"))")
                    try output.line("  after:  snapshot \(plural(snapshot, "byte")), journal \(plural(journal, "byte"))")
                    if removed > 0 { try output.line("  removed \(plural(removed, "unreferenced blob file"))") }
                }
                try output.flush()
            }
        }
    }
}
