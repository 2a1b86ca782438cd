import ArgumentParser
import OpenSwiftDataStore

extension Tool {
    /// `osd salvage`: the way out of a damaged journal. Writes a new document with
    /// every save whose frame still reads, and says which saves were lost.
    struct Salvage: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "salvage",
            abstract: "Write a new document with every save of a damaged document that still reads.",
            discussion: """
                The snapshot must be whole. In the journal, each damaged frame is skipped \
                and the saves after it are applied over what is left, so a save that built \
                on a lost one may be partly visible. The damaged document is not changed.
                """)

        @OptionGroup var target: CopyTarget

        func run() throws {
            try reportingFailures {
                try target.check()
                let (document, newDocument, force) = (target.document, target.newDocument, target.force)
                let contents = try Progress.showing("reading the document", unit: .bytes) { (progress) throws(DocumentError) in
                    try DocumentReader.read(path: document, salvaging: true, progress: progress)
                }
                // With saves lost, the copy is another store: identifiers an app kept
                // from the damaged one must not resolve into it (a row a lost save made
                // is not there).
                try Document.write(
                    contents.version, to: newDocument, identifier: contents.lost.isEmpty ? contents.storeIdentifier : nil,
                    schemaVersion: contents.schemaVersion, replacing: force)
                let output = OutputSink.standardOutput()
                for lost in contents.lost { try output.line("lost: \(lost)") }
                if let torn = contents.tornTail { try output.line("dropped the torn last append at byte \(torn.offset): \(torn.reason)") }
                let rows = contents.version.tables.reduce(0) { $0 + $1.count }
                try output.line(
                    "wrote \(newDocument): \(plural(rows, "row")) as of save \(contents.version.generation), "
                        + (contents.lost.isEmpty ? "nothing lost" : "\(plural(contents.lost.count, "damaged stretch", "damaged stretches")) skipped"))
                try output.flush()
            }
        }
    }
}
