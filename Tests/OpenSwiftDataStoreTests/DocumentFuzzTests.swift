import Foundation
import OpenSwiftDataStore
import Testing

/// Runs the document fuzzer (Tests/DocumentFuzzer) against a sample with every
/// kind of frame and value, blobs included: it must end cleanly, which means every
/// mutated input gave a typed error or a document that reads back whole, no signal,
/// and memory within its limits. `OSD_FUZZ_SECONDS` and `OSD_FUZZ_SEED` set the run
/// (20 s and a random seed by default; Docs/Testing.md has the long run).
@Suite struct DocumentFuzzTests {
    static let seconds = ProcessInfo.processInfo.environment["OSD_FUZZ_SECONDS"].flatMap(Double.init) ?? 20
    static let seed = ProcessInfo.processInfo.environment["OSD_FUZZ_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)

    static func fuzzerURL() throws -> URL {
        let folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [folder, folder.deletingLastPathComponent()] {
            let url = candidate.appendingPathComponent("DocumentFuzzer")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        throw FuzzerMissing(folder: folder.path)
    }

    struct FuzzerMissing: Error { var folder: String }

    /// Whether the fuzzer has exited, for the watchdog (so it never kills a reused pid).
    final class Finished: @unchecked Sendable {
        private let lock = NSLock()
        private var done = false
        var value: Bool {
            get { lock.withLock { done } }
            set { lock.withLock { done = newValue } }
        }
    }

    @Test func mutatedDocumentsGiveTypedErrorsOrWholeData() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("sample.store")
        do {
            let (document, version) = try Document.open(path: path, schema: DocumentFixture.schema)
            let store = Store(document: document, version: version)
            for k in 1...6 { try DocumentFixture.save(k, in: store) }
            try store.compact()
            for k in 7...9 { try DocumentFixture.save(k, in: store) }
        }
        let process = Process()
        process.executableURL = try Self.fuzzerURL()
        process.arguments = [path, "\(Self.seconds)", "\(Self.seed)"]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // A watchdog: an input that makes the reader spin fails the test, not CI's clock.
        let pid = process.processIdentifier
        let finished = Finished()
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.seconds + 120) {
            if !finished.value { kill(pid, SIGKILL) }
        }
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let complaint = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        finished.value = true
        let last = (try? String(contentsOfFile: folder.path("fuzz-current.txt"), encoding: .utf8)) ?? "none"
        #expect(process.terminationReason == .exit, "killed by signal \(process.terminationStatus) at \(last)")
        #expect(process.terminationStatus == 0, "\(complaint) (last input: \(last))")
        #expect(printed.hasPrefix("fuzzed "), "\(printed)")
        print(printed, terminator: "")
    }
}
