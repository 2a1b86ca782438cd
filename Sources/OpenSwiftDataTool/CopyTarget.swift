import ArgumentParser

/// The arguments of the commands that write a document to a new path (`save-as`,
/// `salvage`): the source, the new path, and whether it may be replaced.
struct CopyTarget: ParsableArguments {
    @Argument(help: "The document file.")
    var document: String

    @Argument(help: "The new document file.")
    var newDocument: String

    @Flag(help: "Replace the new document if it exists.")
    var force = false

    /// Refuses a new path that is the document itself, or that exists without `--force`.
    func check() throws {
        if FileSystem.sameFile(document, newDocument) { throw ToolFailure("the new document is the document itself") }
        try FileSystem.checkReplaceable(newDocument, force: force)
    }
}
