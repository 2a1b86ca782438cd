import ArgumentParser
import OpenSwiftDataStore

extension Tool {
    /// `osd dump`: the export form on standard output, or one entity's rows.
    struct Dump: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a document (schema and rows) as JSON.",
            discussion: "With --entity, prints only that entity's rows, as a JSON array.")

        @Argument(help: "The document file.")
        var document: String

        @Option(help: "Print only this entity's rows.")
        var entity: String?

        func run() throws {
            try reportingFailures {
                let version = try DocumentReader.readShowingProgress(path: document, blobs: .load).version
                let output = OutputSink.standardOutput()
                if let entity {
                    let e = try EntityLookup.index(of: entity, in: version.schema)
                    try DocumentExport.checkExportable(version.schema)
                    var progress = Progress("exporting rows", total: version.tables[e].count)
                    defer { progress.finish() }
                    try DocumentExport.writeRows(
                        of: version.tables[e], entity: version.schema.entities[e], indent: 0, to: output, progress: &progress)
                    try output.line()
                } else {
                    try DocumentExport.write(version, to: output)
                }
                try output.flush()
            }
        }
    }
}
