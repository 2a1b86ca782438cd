import ArgumentParser
import OpenSwiftDataStore

/// A failed command, with the message `osd` prints as `osd: <message>`.
struct ToolFailure: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}

/// The exit statuses `osd` uses besides 0 (success) and ArgumentParser's 64
/// (the command line itself is wrong); Docs/CLI.md lists them.
enum ExitStatus {
    /// The command could not do its work: a missing or unreadable document, bad
    /// input, a lock held by another writer. Nothing was modified.
    static let failure = ExitCode(1)
    /// `verify` found damage: a checksum mismatch, a missing or altered blob.
    static let damaged = ExitCode(2)
}

/// Runs a command's work, turning any error into `osd: <message>` on standard
/// error and exit status 1, so bad input never crashes the tool or ends in
/// ArgumentParser's usage text.
func reportingFailures(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let exit as ExitCode {
        throw exit
    } catch {
        Console.error("osd: \(failureMessage(error))")
        throw ExitStatus.failure
    }
}

/// The text of an error, without Swift's enum dumps where the error can say it better.
func failureMessage(_ error: any Error) -> String {
    switch error {
    case let error as DocumentError: error.description
    case let error as StoreError: error.description
    case let error as ToolFailure: error.description
    case let error as CustomStringConvertible: error.description
    default: "\(error)"
    }
}
