import ArgumentParser
import Foundation
import OpenSwiftDataStore

extension Tool {
    /// `osd import`: a new document from an export, with the same schema, row
    /// identifiers and references.
    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a document from a JSON export.",
            discussion: "Refuses to replace an existing document unless --force, and never one open for writing.")

        @Argument(help: "The JSON file (as export writes it).")
        var file: String

        @Option(name: .shortAndLong, help: "The document to create.")
        var output: String

        @Flag(help: "Replace the output document if it exists.")
        var force = false

        // (Named apart from the parsed file's `json` below.)
        @Flag(name: .customLong("json"), help: "Print one JSON object instead of text.")
        var printsJSON = false

        func run() throws {
            try reportingFailures {
                try FileSystem.checkReplaceable(output, force: force)
                guard let data = FileManager.default.contents(atPath: file) else {
                    throw ToolFailure(FileSystem.exists(file) ? "cannot read \(file)" : "\(file) does not exist")
                }
                let json: JSON
                let source = [UInt8](data)
                do throws(JSONParser.Failure) {
                    json = try JSONParser.parse(source)
                } catch {
                    throw ToolFailure("\(file) is not valid JSON: \(error.description)")
                }
                let imported = try DocumentImport.version(from: json, source: source)
                // The file may have appeared, or a writer opened it, while we read.
                try FileSystem.checkReplaceable(output, force: force)
                try Document.write(imported.version, to: output, replacing: force)
                let summary = OutputSink.standardOutput()
                let entities = imported.version.schema.entities.count
                if printsJSON {
                    try summary.line(JSONWriter.compact(.object([
                        ("path", .string(output)), ("source", .string(file)), ("rows", .integer(Int64(imported.rows))),
                        ("entities", .integer(Int64(entities))), ("fileBytes", .integer(Int64(FileSystem.size(of: output) ?? 0))),
                    ])))
                } else {
                    try summary.line("imported \(plural(imported.rows, "row")) of \(plural(entities, "entity", "entities")) into \(output)")
                }
                try summary.flush()
            }
        }
    }
}
