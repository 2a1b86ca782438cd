import Foundation
import OpenSwiftDataStore
import SwiftData
import Testing

/// Several processes on one document: the crash probe's `--share` writers and its
/// `--follow` reader (Tests/DocumentCrashProbe), killed or left to finish.
@Suite(.serialized) struct SharedDocumentProcessTests {
    /// `OSD_SHARED_KILLS` sets the kill loop's rounds (two kills each); the long run
    /// is 100 rounds, 200 kills (Docs/Testing.md).
    static let rounds = ProcessInfo.processInfo.environment["OSD_SHARED_KILLS"].flatMap(Int.init) ?? 12

    /// A probe process, its output read as it comes.
    final class Probe: @unchecked Sendable {
        let process = Process()
        private let output = Pipe()
        private let errors = Pipe()
        private var received = Data()
        /// What the probe wrote to standard error (why it failed), once it has ended.
        private(set) var failure = ""

        init(_ arguments: [String]) throws {
            process.executableURL = try DocumentCrashTests.probeURL()
            process.arguments = arguments
            process.standardOutput = output
            process.standardError = errors
            try process.run()
        }

        /// Waits for the first line (the probe has opened the document).
        func waitForStart() {
            while !String(decoding: received, as: UTF8.self).contains("\n") {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                received += chunk
            }
        }

        func kill() {
            Foundation.kill(process.processIdentifier, SIGKILL)
        }

        /// Every line, once the process has ended.
        func finish() -> [Substring] {
            received += output.fileHandleForReading.readDataToEndOfFile()
            failure = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return String(decoding: received, as: UTF8.self).split(separator: "\n")
        }
    }

    static func acks(_ lines: [Substring]) -> [Int] {
        lines.compactMap { $0.hasPrefix("ack ") ? Int($0.dropFirst(4)) : nil }
    }

    /// What a fresh container reads: each writer's counter, and every entry.
    static func state(of url: URL) throws -> (counters: [String: Int], entries: [Int: String]) {
        let context = ModelContext(try ModelContainer(
            for: CrashCounter.self, CrashEntry.self, configurations: ModelConfiguration(url: url, allowsSave: false)))
        var counters: [String: Int] = [:]
        for counter in try context.fetch(FetchDescriptor<CrashCounter>()) { counters[counter.name] = counter.value }
        var entries: [Int: String] = [:]
        for entry in try context.fetch(FetchDescriptor<CrashEntry>()) {
            #expect(entries[entry.number] == nil, "entry \(entry.number) twice")
            entries[entry.number] = entry.text
        }
        return (counters, entries)
    }

    /// The probe's invariant: writer W at counter v holds its entries v - 9 ... v,
    /// and the shared entries are 1 ... the highest counter, each written by a
    /// writer that reached it.
    static func check(_ state: (counters: [String: Int], entries: [Int: String]), writers: [Int], _ comment: Comment) {
        var expected = Set<Int>()
        let highest = writers.map { state.counters["w\($0)"] ?? 0 }.max() ?? 0
        for k in stride(from: 1, through: highest, by: 1) { expected.insert(k) }
        for w in writers {
            let v = state.counters["w\(w)"] ?? 0
            for k in stride(from: max(1, v - 9), through: v, by: 1) { expected.insert(w * 1_000_000 + k) }
        }
        #expect(Set(state.entries.keys) == expected, comment)
        for k in stride(from: 1, through: highest, by: 1) {
            guard let text = state.entries[k] else { continue }
            let parts = text.split(separator: " ")
            let writer = parts.first.flatMap { Int($0.dropFirst()) } ?? 0
            #expect(parts.count == 2 && Int(parts[1]) == k && (state.counters["w\(writer)"] ?? 0) >= k, "\(comment): entry \(k) is \(text)")
        }
    }

    @Test(arguments: [2, 4]) func writersInSeveralProcessesEndWithOneGraph(processes: Int) throws {
        let folder = try TemporaryFolder("osd-shared-processes")
        defer { folder.remove() }
        let url = folder.file("shared.store")
        let saves = 120
        let probes = try (1...processes).map { try Probe([url.path, "--share", "\($0)", "\(saves)"]) }
        let outputs = probes.map { $0.finish() }
        for (w, (probe, lines)) in zip(probes, outputs).enumerated() {
            #expect(probe.process.terminationStatus == 0, "writer \(w + 1): \(probe.failure)")
            #expect(Self.acks(lines).last == saves, "writer \(w + 1)")
        }
        // Every process ended seeing the same entries, and a fresh container does too.
        let digests = Set(outputs.compactMap { $0.last(where: { $0.hasPrefix("state ") }) })
        #expect(digests.count == 1)
        let state = try Self.state(of: url)
        #expect(state.counters == Dictionary(uniqueKeysWithValues: (1...processes).map { ("w\($0)", saves) }))
        #expect(state.entries.count == saves + 10 * processes)
        Self.check(state, writers: Array(1...processes), "\(processes) writers")
        #expect(digests.first?.hasPrefix("state \(state.entries.count)/") == true)
    }

    /// Two writer processes, each killed at a random moment (during a save, a
    /// catch-up or a compaction of its own or of the other's), again and again: after
    /// every round the document opens and holds every save either acknowledged.
    @Test func killingTwoWritersKeepsEverySaveEitherAcknowledged() throws {
        let folder = try TemporaryFolder("osd-shared-kills")
        defer { folder.remove() }
        let url = folder.file("killed.store")
        var acknowledged = [1: 0, 2: 0]
        var random = SystemRandomNumberGenerator()
        for round in 0..<Self.rounds {
            let probes = try [1, 2].map { try Probe([url.path, "--share", "\($0)", "0"]) }
            for probe in probes { probe.waitForStart() }
            // (A debug build saves a few hundred times a second with two writers.)
            for probe in probes.shuffled(using: &random) {
                Thread.sleep(forTimeInterval: Double.random(in: 0.01...0.15, using: &random))
                probe.kill()
            }
            for (w, probe) in zip([1, 2], probes) {
                acknowledged[w] = max(acknowledged[w]!, Self.acks(probe.finish()).last ?? 0)
            }
            let state = try Self.state(of: url)
            for w in [1, 2] {
                let v = state.counters["w\(w)"] ?? 0
                // The last save may have been written and killed before its ack.
                #expect(v == acknowledged[w]! || v == acknowledged[w]! + 1, "round \(round): writer \(w) at \(v), acknowledged \(acknowledged[w]!)")
                acknowledged[w] = v
            }
            Self.check(state, writers: [1, 2], "round \(round)")
        }
        #expect(acknowledged.values.allSatisfy { $0 > 0 })
    }

    /// A read-only process fetches in a loop while a writer process saves (large
    /// frames among them) and compacts: every fetch shows one whole save, never an
    /// error; so does reading the file whole in this process, as `osd info` does.
    @Test func aReaderFollowsAWriterThatSavesAndCompacts() throws {
        let folder = try TemporaryFolder("osd-shared-follow")
        defer { folder.remove() }
        let url = folder.file("followed.store")
        let writer = try Probe([url.path, "--share", "1", "400"])
        writer.waitForStart()
        let reader = try Probe([url.path, "--follow", "2"])
        var reads = 0
        while writer.process.isRunning {
            // (It throws on anything but whole frames and a torn last one.)
            _ = try DocumentReader.read(path: url.path, blobs: .skip)
            reads += 1
        }
        let writerLines = writer.finish(), readerLines = reader.finish()
        #expect(writer.process.terminationStatus == 0, "\(writer.failure)")
        #expect(reader.process.terminationStatus == 0, "\(readerLines.suffix(2))")
        let followed = readerLines.last { $0.hasPrefix("followed ") }.flatMap { Int($0.dropFirst(9)) } ?? 0
        // It saw the saves go by, not one state.
        #expect(followed > 1, "\(readerLines)")
        #expect(Self.acks(writerLines).last == 400)
        #expect(reads > 0)
        Self.check(try Self.state(of: url), writers: [1], "after")
    }
}
