import ArgumentParser
import OpenSwiftDataStore

extension Tool {
    /// `osd query`: the rows of one entity that pass a filter, sorted and limited,
    /// as a table or as JSON lines.
    struct Query: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the rows of an entity that match a filter.",
            discussion: """
                Filter: comparisons (== != < <= > >=, contains, startsWith) of attributes, \
                to-one paths (destination.name) or #id with literals (numbers, "strings", \
                true, false, nil), joined with && || ! and parentheses. Example: \
                --where 'name == "Paris" && count > 3 || flag == true'.
                """)

        @Argument(help: "The document file.")
        var document: String

        @Argument(help: "The entity whose rows to print.")
        var entity: String

        @Option(name: .customLong("where"), help: ArgumentHelp("The filter rows must pass.", valueName: "filter"))
        var filter: String?

        @Option(help: ArgumentHelp("Sort by this attribute (ATTR or ATTR:desc); repeat for ties.", valueName: "attr[:desc]"))
        var sort: [String] = []

        // (Unconditional: `--limit -1` reaches `validate()` as a number, not as an
        // unknown option `-1` with the value missing.)
        @Option(parsing: .unconditional, help: "Print at most this many rows.")
        var limit: Int?

        @Flag(help: "Print one JSON object per row (export form) instead of a table.")
        var json = false

        @Flag(help: "Print how the rows were found (scan, unique index, index range) to standard error.")
        var explain = false

        func validate() throws {
            if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more") }
        }

        func run() throws {
            try reportingFailures {
                let version = try DocumentReader.readShowingProgress(path: document, blobs: .load).version
                let e = try EntityLookup.index(of: entity, in: version.schema)
                let run = try QueryRun(version: version, entity: e, filter: filter, sort: sort, limit: limit).run()
                let matches = run.rows
                let output = OutputSink.standardOutput()
                let description = version.schema.entities[e]
                if json {
                    try DocumentExport.checkExportable(version.schema)
                    for (id, row) in matches {
                        try output.line(JSONWriter.compact(DocumentExport.rowJSON(row, id: id, of: description)))
                    }
                } else {
                    let header = [DocumentExport.idKey] + (0..<description.slotCount).map { description.name(ofSlot: $0) }
                    let cells = matches.map { id, row in ["\(id.rawValue)"] + row.map(ValueDisplay.cell) }
                    for line in TextTable.lines([header] + cells) { try output.line(line) }
                    try output.line("(\(plural(matches.count, "row")))")
                }
                try output.flush()
                if explain { Console.error("plan: \(run.plan)") }
            }
        }
    }
}
