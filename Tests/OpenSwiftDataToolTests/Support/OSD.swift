import Foundation

/// Runs the `osd` executable the test target builds, as a user would.
enum OSD {
    struct Result {
        var status: Int32
        var output: String
        var error: String
    }

    struct NotFound: Error, CustomStringConvertible {
        var description: String
    }

    /// The `osd` binary: next to the test bundle in the build folder (`swift test`
    /// and `swift test --scratch-path X` both put it there), else `OSD_BINARY`.
    static let executable: URL? = {
        let fileManager = FileManager.default
        if let override = ProcessInfo.processInfo.environment["OSD_BINARY"], fileManager.isExecutableFile(atPath: override) {
            return URL(fileURLWithPath: override)
        }
        var folders = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()]
        if let bundle = Bundle.main.executableURL { folders.append(bundle.deletingLastPathComponent()) }
        for bundle in Bundle.allBundles { folders.append(bundle.bundleURL.deletingLastPathComponent()) }
        // On macOS the test binary sits inside `X.xctest/Contents/MacOS`: look a few levels up.
        for folder in folders {
            var candidate = folder.standardizedFileURL
            for _ in 0..<4 {
                let binary = candidate.appendingPathComponent("osd")
                if fileManager.isExecutableFile(atPath: binary.path) { return binary }
                candidate.deleteLastPathComponent()
            }
        }
        return nil
    }()

    /// Runs a command that needs the document's write lock (or checks it), retrying
    /// while the lock only seems held (see `TripDocument.openForWriting`).
    static func runLocking(_ arguments: [String]) throws -> Result {
        var attempts = 0
        while true {
            let result = try run(arguments)
            guard result.status == 1, result.error.contains("is open for writing"), attempts < 100 else { return result }
            attempts += 1
            usleep(20_000)
        }
    }

    /// Runs `osd arguments…` to completion, capturing both streams.
    static func run(_ arguments: [String]) throws -> Result {
        guard let executable else {
            throw NotFound(description: "no osd binary beside the test bundle (\(CommandLine.arguments[0])); set OSD_BINARY")
        }
        return try capture(executable, arguments)
    }

    /// Runs a `bash -c` command line (one that starts `osd` under limits, say).
    static func runShell(_ command: String) throws -> Result {
        try capture(URL(fileURLWithPath: "/bin/bash"), ["-c", command])
    }

    private static func capture(_ executable: URL, _ arguments: [String]) throws -> Result {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("osd-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let outputURL = folder.appendingPathComponent("stdout"), errorURL = folder.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        let output = try FileHandle(forWritingTo: outputURL), error = try FileHandle(forWritingTo: errorURL)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try output.close()
        try error.close()
        return Result(
            status: process.terminationStatus,
            output: String(decoding: try Data(contentsOf: outputURL), as: UTF8.self),
            error: String(decoding: try Data(contentsOf: errorURL), as: UTF8.self))
    }
}
