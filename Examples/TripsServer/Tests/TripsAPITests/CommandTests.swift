import Foundation
import Testing
@testable import TripsAPI

/// The `TripsServer` command as a user runs it: its command line, its exit status
/// and what it logs when the store cannot be opened.
@Suite struct CommandTests {
    struct Run {
        var status: Int32
        var output: String
    }

    /// The `TripsServer` binary, beside the test bundle in the build folder.
    static let binary: URL? = {
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().standardizedFileURL
        for _ in 0..<4 {
            let candidate = folder.appendingPathComponent("TripsServer")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            folder.deleteLastPathComponent()
        }
        return nil
    }()

    /// Runs the command in an empty folder; standard output and error together.
    static func run(_ arguments: [String], in folder: URL) throws -> Run {
        let binary = try #require(binary, "no TripsServer binary beside the test bundle")
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.currentDirectoryURL = folder
        var environment = ProcessInfo.processInfo.environment
        for name in ["HOST", "PORT", "TRIPS_STORE"] { environment[name] = nil }
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        // A command that should have ended but serves instead is stopped, and fails.
        let watchdog = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: watchdog)
        defer { watchdog.cancel() }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    static func withFolder(_ body: (URL) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("trips-command-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try body(folder)
    }

    /// `--help` describes the options and starts nothing: no `trips.store` appears.
    @Test func helpStartsNothing() throws {
        try Self.withFolder { folder in
            let run = try Self.run(["--help"], in: folder)
            #expect(run.status == 0)
            for option in ["--host", "--port", "--store", "TRIPS_STORE"] { #expect(run.output.contains(option), "\(option)") }
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        }
    }

    /// A misspelled option or a bad value is a usage error (64), not ignored.
    @Test(arguments: [["--prot", "9001"], ["--port", "99999"], ["--port", "http"], ["extra"]])
    func wrongCommandLinesAreUsageErrors(_ arguments: [String]) throws {
        try Self.withFolder { folder in
            let run = try Self.run(arguments, in: folder)
            #expect(run.status == 64, "\(arguments): \(run.output)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        }
    }

    /// A store that cannot be opened (its folder is a file): one critical line naming
    /// it, exit status 1, no trap or backtrace.
    @Test func aStoreThatCannotOpenExitsWithStatus1() throws {
        try Self.withFolder { folder in
            let blocker = folder.appendingPathComponent("not-a-folder")
            #expect(FileManager.default.createFile(atPath: blocker.path, contents: Data("x".utf8)))
            let store = blocker.appendingPathComponent("trips.store").path
            let run = try Self.run(["--store", store], in: folder)
            #expect(run.status == 1, "\(run.output)")
            #expect(run.output.contains("cannot open the store"))
            #expect(run.output.contains(store))
            #expect(!run.output.contains("Fatal error"))
        }
    }

    /// A PostgreSQL URL's password never reaches the logs, even when the server is unreachable.
    @Test func aPasswordIsNeverLogged() throws {
        #expect(TripsApp.redacted("postgres://ann:s3cret@db.example:5432/trips") == "postgres://ann:***@db.example:5432/trips")
        #expect(TripsApp.redacted("postgres://ann@db.example/trips") == "postgres://ann@db.example/trips")
        try Self.withFolder { folder in
            // Port 1 on loopback: nothing listens there, the connection is refused at once.
            let run = try Self.run(["--store", "postgres://ann:s3cret@127.0.0.1:1/trips"], in: folder)
            #expect(run.status == 1, "\(run.output)")
            #expect(run.output.contains("cannot open the store"))
            #expect(run.output.contains("postgres://ann:***@127.0.0.1:1/trips"))
            #expect(!run.output.contains("s3cret"))
        }
    }
}
