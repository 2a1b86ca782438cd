import ArgumentParser

/// The `osd` command: opens, inspects, verifies, queries, compacts, exports and
/// imports OpenSwiftData documents without the application's model types.
public struct Tool: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "osd",
        abstract: "Inspect and maintain OpenSwiftData documents.")

    public init() {}
}
