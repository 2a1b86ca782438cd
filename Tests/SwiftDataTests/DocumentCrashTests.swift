import Foundation
import OpenSwiftDataStore
import SwiftData
import Testing

// The probe's models (Tests/DocumentCrashProbe), declared again here: a document
// names entities, not Swift modules, so these open the probe's documents.
@Model final class CrashCounter {
    @Attribute(.unique) var name: String
    var value: Int
    init(name: String, value: Int) {
        self.name = name
        self.value = value
    }
}

@Model final class CrashEntry {
    @Attribute(.unique) var number: Int
    var text: String
    init(number: Int, text: String) {
        self.number = number
        self.text = text
    }
}

/// Kills a process that saves into a document (SIGKILL, at random moments) over
/// and over; after each kill the document must open and hold exactly the last
/// acknowledged save, or the one after it (written, killed before its ack).
@Suite(.serialized) struct DocumentCrashTests {
    /// `OSD_CRASH_ITERATIONS` overrides the count.
    static let iterations = ProcessInfo.processInfo.environment["OSD_CRASH_ITERATIONS"].flatMap(Int.init) ?? 200

    static func probeURL() throws -> URL {
        let folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [folder, folder.deletingLastPathComponent()] {
            let url = candidate.appendingPathComponent("DocumentCrashProbe")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        throw ProbeMissing(folder: folder.path)
    }

    struct ProbeMissing: Error { var folder: String }

    /// Runs the probe until it has opened the document, then `delay` seconds more,
    /// kills it, and returns the saves it acknowledged.
    static func runAndKill(_ probe: URL, document: URL, after delay: Double, arguments: [String] = []) throws -> (acks: [Int], killed: Bool) {
        let (lines, killed) = try runAndKillLines(probe, document: document, after: delay, arguments: arguments)
        let acks = lines.compactMap { line in
            line.hasPrefix("ack ") ? Int(line.dropFirst(4)) : nil
        }
        return (acks, killed)
    }

    /// `runAndKill`, returning every line the probe printed.
    static func runAndKillLines(_ probe: URL, document: URL, after delay: Double, arguments: [String] = []) throws -> (lines: [Substring], killed: Bool) {
        let process = Process()
        process.executableURL = probe
        process.arguments = [document.path] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Wait for the probe to have opened the document (its "start" line), so the
        // kill lands among saves however slowly the machine starts processes.
        var received = Data()
        while !String(decoding: received, as: UTF8.self).contains("\n") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            received += chunk
        }
        Thread.sleep(forTimeInterval: delay)
        let killed = process.isRunning
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        received += output.fileHandleForReading.readDataToEndOfFile()
        let text = String(decoding: received, as: UTF8.self)
        return (text.split(separator: "\n"), killed)
    }

    /// A document migrating when a writable open meets it (the probe's `--migrate`)
    /// is killed at random moments: each time the file holds the old document or
    /// the migrated one, whole, never a mix and never less.
    /// `--migrate` migrates lightweight; `--migrate-plan` through a plan whose custom
    /// stage marks the counter, and records version 2.0.0.
    @Test(arguments: ["--migrate", "--migrate-plan"])
    func aKilledMigrationLeavesTheOldDocumentOrTheMigratedOne(mode: String) throws {
        let probe = try Self.probeURL()
        let folder = try TemporaryFolder("osd-migrate")
        defer { folder.remove() }
        let template = folder.file("template.store"), document = folder.file("migrating.store")
        do {
            let context = ModelContext(try ModelContainer(for: CrashCounter.self, CrashEntry.self, configurations: ModelConfiguration(url: template)))
            context.insert(CrashCounter(name: "main", value: 41))
            for n in 1...400 { context.insert(CrashEntry(number: n, text: String(repeating: "migrate \(n) ", count: 300))) }
            try context.save()
        }
        let bytes = try Data(contentsOf: template)
        var outcomes: [String: Int] = [:]
        var random = SystemRandomNumberGenerator()
        for iteration in 0..<(Self.iterations / 5) {
            try? FileManager.default.removeItem(at: document)
            try bytes.write(to: document)
            // (A debug build's probe takes about 0.2 s to start and migrate.)
            let delay = Double.random(in: 0...0.4, using: &random)
            _ = try Self.runAndKill(probe, document: document, after: delay, arguments: [mode])
            let contents = try DocumentReader.read(path: document.path, blobs: .skip)
            let counter = try #require(contents.schema.entityIndex(named: "CrashCounter"))
            let names = contents.schema.entities[counter].attributes.map(\.name)
            let rows = contents.version.tables[counter].rowIDs.compactMap { contents.version.tables[counter][$0] }
            let entries = try #require(contents.schema.entityIndex(named: "CrashEntry"))
            #expect(contents.version.tables[entries].count == 400, "iteration \(iteration)")
            switch names {
            case ["name", "value"]:
                outcomes["old", default: 0] += 1
                #expect(rows == [[.string("main"), .int(41)]], "iteration \(iteration)")
                #expect(contents.schemaVersion == nil, "iteration \(iteration)")
            case ["name", "count", "note"]:
                outcomes["migrated", default: 0] += 1
                let planned = mode == "--migrate-plan"
                #expect(rows == [[.string("main"), .int(41), .string(planned ? "planned" : "migrated")]], "iteration \(iteration)")
                #expect(contents.schemaVersion == (planned ? SchemaVersionStamp(2, 0, 0) : nil), "iteration \(iteration)")
            default:
                Issue.record("iteration \(iteration): a schema that is neither: \(names)")
            }
        }
        print("migration kills (\(mode)): \(outcomes)")
    }

    /// Runs the probe with its files limited to `limit` bytes until a save fails.
    static func runUntilFull(_ probe: URL, document: URL, limit: Int) throws -> (acks: [Int], failure: String?, status: Int32) {
        let process = Process()
        process.executableURL = probe
        process.arguments = [document.path, "--limit-bytes", "\(limit)"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let lines = text.split(separator: "\n")
        let acks = lines.compactMap { $0.hasPrefix("ack ") ? Int($0.dropFirst(4)) : nil }
        let failure = lines.first { $0.hasPrefix("failed ") }.map(String.init)
        return (acks, failure, process.terminationStatus)
    }

    /// The document's state: the counter and the entry numbers.
    static func state(of document: URL) throws -> (value: Int, entries: [Int]) {
        let container = try ModelContainer(
            for: CrashCounter.self, CrashEntry.self, configurations: ModelConfiguration(url: document))
        let context = ModelContext(container)
        let value = try context.fetch(FetchDescriptor<CrashCounter>()).first?.value ?? 0
        let entries = try context.fetch(FetchDescriptor<CrashEntry>(sortBy: [SortDescriptor(\.number)])).map(\.number)
        return (value, entries)
    }

    /// A full disk (writes past a file-size limit fail with EFBIG): the save that
    /// hits it throws, and the document holds exactly the saves before it.
    @Test func aFullDiskFailsTheSaveAndKeepsEveryEarlierOne() throws {
        let probe = try Self.probeURL()
        let folder = try TemporaryFolder("osd-full")
        defer { folder.remove() }
        let document = folder.file("full.store")

        var previous = 0
        for round in 0..<3 {
            let (acks, failure, status) = try Self.runUntilFull(probe, document: document, limit: 3_000_000)
            #expect(status == 3, "round \(round)")
            #expect(failure?.contains("errno 27") == true, "round \(round): \(failure ?? "no failure")")
            #expect(failure?.contains("full.store:") == true, "round \(round): \(failure ?? "")")
            let (value, entries) = try Self.state(of: document)
            // Exactly the last acknowledged save; with none this round, the last one before.
            #expect(value == (acks.last ?? previous), "round \(round)")
            #expect(entries == Array(max(1, value - 9)...max(1, value)).filter { $0 <= value })
            previous = value
        }
        // With room again, saving goes on from there.
        let before = try Self.state(of: document).value
        _ = try Self.runAndKill(probe, document: document, after: 0.3)
        #expect(try Self.state(of: document).value > before)
    }

    @Test func everyReopenShowsTheLastAcknowledgedSave() throws {
        let probe = try Self.probeURL()
        let folder = try TemporaryFolder("osd-crash")
        defer { folder.remove() }
        let document = folder.file("crash.store")

        var random = SystemRandomNumberGenerator()
        var confirmed = 0
        var killsMidRun = 0
        var tornTails = 0
        for iteration in 0..<Self.iterations {
            let delay = Double.random(in: 0...0.08, using: &random)
            let (acks, killed) = try Self.runAndKill(probe, document: document, after: delay)
            if killed && !acks.isEmpty { killsMidRun += 1 }
            if let contents = try? DocumentReader.read(path: document.path, blobs: .skip), contents.tornTail != nil {
                tornTails += 1
            }
            let lastAck = acks.last ?? confirmed
            let (value, entries) = try Self.state(of: document)
            // Exactly the last acknowledged save, or the next one if it was durable
            // before the kill stopped its ack.
            #expect(value == lastAck || value == lastAck + 1, "iteration \(iteration): value \(value), last ack \(lastAck)")
            #expect(value >= confirmed, "iteration \(iteration): went back from \(confirmed) to \(value)")
            #expect(entries == Array(max(1, value - 9)...max(1, value)).filter { $0 <= value },
                    "iteration \(iteration): entries \(entries.prefix(3))… for value \(value)")
            confirmed = value
        }
        // Most kills landed while the probe was saving, not before it started.
        #expect(killsMidRun > Self.iterations / 2)
        #expect(confirmed > Self.iterations)
        print("crash test: \(Self.iterations) kills, \(killsMidRun) during saves, \(tornTails) torn last frames, \(confirmed) saves")
    }

    /// Group commit under kills: eight `@ModelActor`s of one process save at once
    /// (the probe's `--concurrent`), sharing fsyncs, and the process is killed at
    /// random moments. Every save acknowledged is in the document after the kill;
    /// a saver's next save may be too (durable before its ack), never more, and
    /// every saver's entries match its counter: no save is half there.
    @Test func killedConcurrentSaversKeepEverySaveTheyAcknowledged() throws {
        let probe = try Self.probeURL()
        let folder = try TemporaryFolder("osd-group")
        defer { folder.remove() }
        let document = folder.file("group.store")
        let savers = 8
        var confirmed = [Int](repeating: 0, count: savers)
        var random = SystemRandomNumberGenerator()
        var acknowledged = 0
        for iteration in 0..<(Self.iterations / 5) {
            let delay = Double.random(in: 0.02...0.25, using: &random)
            let (lines, _) = try Self.runAndKillLines(probe, document: document, after: delay, arguments: ["--concurrent", "\(savers)"])
            #expect(!lines.contains { $0.hasPrefix("failed") }, "iteration \(iteration): \(lines.filter { $0.hasPrefix("failed") })")
            var lastAck = confirmed
            for line in lines where line.hasPrefix("ack ") {
                let parts = line.split(separator: " ")
                guard parts.count == 3, let s = Int(parts[1]), let k = Int(parts[2]), s < savers else { continue }
                lastAck[s] = max(lastAck[s], k)
                acknowledged += 1
            }
            let container = try ModelContainer(
                for: CrashCounter.self, CrashEntry.self, configurations: ModelConfiguration(url: document))
            let context = ModelContext(container)
            let counters = Dictionary(
                try context.fetch(FetchDescriptor<CrashCounter>()).map { ($0.name, $0.value) }, uniquingKeysWith: max)
            let entries = try context.fetch(FetchDescriptor<CrashEntry>(sortBy: [SortDescriptor(\.number)])).map(\.number)
            for s in 0..<savers {
                let value = counters["c\(s)"] ?? 0
                #expect(value == lastAck[s] || value == lastAck[s] + 1,
                        "iteration \(iteration): saver \(s) holds \(value), last ack \(lastAck[s])")
                let mine = entries.filter { $0 / 1_000_000 == s }.map { $0 % 1_000_000 }
                #expect(mine == Array(max(1, value - 9)...max(1, value)).filter { $0 <= value },
                        "iteration \(iteration): saver \(s) entries \(mine) for value \(value)")
                confirmed[s] = value
            }
        }
        // The kills landed among saves: most savers got far.
        #expect(acknowledged > Self.iterations)
        print("group commit crash test: \(Self.iterations / 5) kills, \(acknowledged) saves acknowledged, counters \(confirmed)")
    }
}
