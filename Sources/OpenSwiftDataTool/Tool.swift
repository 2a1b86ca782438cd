import ArgumentParser
import OpenSwiftDataStore

/// The `osd` command: inspects, verifies, queries, compacts, exports and imports
/// OpenSwiftData documents without the application's model types, since every
/// document describes its own schema.
public struct Tool: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "osd",
        abstract: "Inspect and maintain OpenSwiftData documents.",
        discussion: """
            Exit status: 0 on success; 1 when the command failed (the message starts \
            with "osd:" and nothing was modified); 2 when verify found damage; 64 when \
            the command line is wrong. Docs/CLI.md describes every command.
            """,
        version: Tool.version,
        subcommands: [Info.self, Verify.self, Dump.self, Export.self, Import.self, Query.self, Compact.self, SaveAs.self, Salvage.self])

    public init() {}

    /// What `osd --version` prints: the release (0.3 is the project's third wave of
    /// work; no release is tagged yet) and the document format it writes.
    public static let version = "0.3.0 (writes document format \(DocumentFormat.major).\(DocumentFormat.minor))"
}
