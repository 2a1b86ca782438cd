// The crash tests' child process: it saves into a document as fast as it can,
// printing "ack K" after save K returned, until the test kills it (SIGKILL).
//
// Save K sets the counter to K, inserts entry K and deletes entry K - 10, so the
// state after any save is known from its number alone; the document compacts in
// the background once its journal passes 1 MiB and half the snapshot, and every
// 25th save also compacts on demand, so kills land inside both kinds of compaction
// (and inside saves made while one runs), and every seventh save writes a large
// frame, so kills tear frames.
import Foundation
import SwiftData

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

/// Incompressible bytes, quickly (xorshift), so large frames stay large.
func noise(bytes: Int, seed: UInt64) -> Data {
    var state = seed | 1
    var words = [UInt64](repeating: 0, count: bytes / 8)
    for i in words.indices {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        words[i] = state
    }
    return words.withUnsafeBytes { Data($0) }
}

/// Writes a line straight to the pipe (no buffering), so an ack is out before the next save.
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

/// The next version of the counter (`value` renamed `count`, `note` added), for
/// `--migrate`: opening a document of the models above migrates it.
enum Migrated {
    @Model final class CrashCounter {
        @Attribute(.unique) var name: String
        @Attribute(originalName: "value") var count: Int
        var note: String = "migrated"
        init(name: String, count: Int) {
            self.name = name
            self.count = count
        }
    }
}

/// The two versions as a migration plan, for `--migrate-plan`: a custom stage
/// marks the counter after the lightweight step.
enum ProbeV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [CrashCounter.self, CrashEntry.self] }
}

enum ProbeV2: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    static var models: [any PersistentModel.Type] { [Migrated.CrashCounter.self, CrashEntry.self] }
}

enum ProbePlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [ProbeV1.self, ProbeV2.self] }
    static var stages: [MigrationStage] {
        [
            .custom(
                fromVersion: ProbeV1.self, toVersion: ProbeV2.self, willMigrate: nil,
                didMigrate: { context in
                    for counter in try context.fetch(FetchDescriptor<Migrated.CrashCounter>()) { counter.note = "planned" }
                })
        ]
    }
}

// With --migrate, the probe opens the document with `Migrated`'s schema (which
// migrates it), says "migrated" and exits: the test kills it during the migration.
// With --migrate-plan it does the same through `ProbePlan`.
if CommandLine.arguments.count == 3, ["--migrate", "--migrate-plan"].contains(CommandLine.arguments[2]) {
    say("start")
    do {
        let url = URL(fileURLWithPath: CommandLine.arguments[1])
        let plan: (any SchemaMigrationPlan.Type)? = CommandLine.arguments[2] == "--migrate-plan" ? ProbePlan.self : nil
        _ = try ModelContainer(
            for: Migrated.CrashCounter.self, CrashEntry.self, migrationPlan: plan, configurations: ModelConfiguration(url: url))
        say("migrated")
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("DocumentCrashProbe: \(error)\n".utf8))
        exit(1)
    }
}

// With --share ID COUNT, the probe is one of several writers sharing the document
// (SharedDocumentProcessTests): save K of writer ID sets counter "wID" to K,
// inserts entry ID * 1,000,000 + K, deletes its entry K - 10, and inserts entry K,
// a unique key every writer inserts (an upsert when another saved it first).
// Every 11th entry is large, so a kill can tear its frame; every 25th save
// compacts. It resumes from its counter, prints "ack K" after each save, stops
// after COUNT saves (0: never) and then waits for every writer's counter to reach
// COUNT, prints "state <digest of every entry>" and exits.
// With --follow SECONDS, it reads the document read-only for that long, fetching
// in a loop, and checks that every fetch shows one whole save of writer 1
// ("bad …" and exit 4 when not); it prints "followed N" with the saves it saw.
if arguments(count: 5, flag: "--share") || arguments(count: 4, flag: "--follow") {
    let url = URL(fileURLWithPath: CommandLine.arguments[1])
    do {
        if CommandLine.arguments[2] == "--follow" {
            try follow(url, seconds: Double(CommandLine.arguments[3]) ?? 1)
        } else {
            try share(url, writer: Int(CommandLine.arguments[3]) ?? 1, count: Int(CommandLine.arguments[4]) ?? 0)
        }
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("DocumentCrashProbe: \(error)\n".utf8))
        exit(1)
    }
}

// With --concurrent SAVERS, that many @ModelActors save at once into one container
// (group commit): save K of saver S sets counter "cS" to K, inserts entry
// S * 1,000,000 + K (every seventh one large, so kills tear frames) and deletes its
// entry K - 10; it prints "ack S K" after each save. Saver 0 compacts every 25th
// save. It runs until killed.
if arguments(count: 4, flag: "--concurrent") {
    let url = URL(fileURLWithPath: CommandLine.arguments[1])
    do {
        let container = try ModelContainer(for: CrashCounter.self, CrashEntry.self, configurations: ModelConfiguration(url: url))
        container.documentCompactionPolicy = .init(ratio: 0.5, minimumJournalBytes: 1 << 20)
        let savers = Int(CommandLine.arguments[3]) ?? 8
        say("start")
        for s in 0..<savers {
            let saver = ConcurrentSaver(modelContainer: container)
            Task.detached {
                do {
                    try await saver.run(as: s)
                } catch {
                    say("failed \(s) \(error)")
                    exit(3)
                }
            }
        }
        while true { sleep(60) }
    } catch {
        FileHandle.standardError.write(Data("DocumentCrashProbe: \(error)\n".utf8))
        exit(1)
    }
}

@ModelActor actor ConcurrentSaver {
    func run(as saver: Int) throws {
        let counter = try counter(named: "c\(saver)", in: modelContext)
        while true {
            let k = counter.value + 1
            counter.value = k
            let number = saver * 1_000_000 + k
            let text = k % 7 == 0 ? noise(bytes: 262_144, seed: UInt64(number)).base64EncodedString() : "c\(saver) \(k)"
            modelContext.insert(CrashEntry(number: number, text: text))
            let old = number - 10
            for entry in try modelContext.fetch(FetchDescriptor<CrashEntry>(predicate: #Predicate { $0.number == old })) {
                modelContext.delete(entry)
            }
            try modelContext.save()
            say("ack \(saver) \(k)")
            if saver == 0, k % 25 == 0 { try modelContainer.compactDocument() }
        }
    }
}

/// The counter named `name`, inserted at 0 when the document has none yet.
func counter(named name: String, in context: ModelContext) throws -> CrashCounter {
    if let existing = try context.fetch(FetchDescriptor<CrashCounter>(predicate: #Predicate { $0.name == name })).first {
        return existing
    }
    let counter = CrashCounter(name: name, value: 0)
    context.insert(counter)
    return counter
}

func arguments(count: Int, flag: String) -> Bool {
    CommandLine.arguments.count == count && CommandLine.arguments[2] == flag
}

/// Every entry, as one line each, in number order: what every writer must agree on.
func digest(_ context: ModelContext) throws -> String {
    let entries = try context.fetch(FetchDescriptor<CrashEntry>(sortBy: [SortDescriptor(\.number)]))
    var hasher = FNVHash.start
    for entry in entries { hasher.add("\(entry.number):\(entry.text.prefix(40))") }
    return "\(entries.count)/\(hasher.value)"
}

/// FNV-1a over the lines: the same in every process (Swift's `Hasher` is seeded per process).
struct FNVHash {
    var value: UInt64
    static var start: FNVHash { FNVHash(value: 0xcbf2_9ce4_8422_2325) }
    mutating func add(_ line: String) {
        for byte in line.utf8 {
            value ^= UInt64(byte)
            value &*= 0x100_0000_01b3
        }
        value ^= 0x0a
        value &*= 0x100_0000_01b3
    }
}

func share(_ url: URL, writer: Int, count: Int) throws {
    let container = try ModelContainer(for: CrashCounter.self, CrashEntry.self, configurations: ModelConfiguration(url: url))
    container.documentCompactionPolicy = .init(ratio: 0.5, minimumJournalBytes: 1 << 20)
    let context = ModelContext(container)
    let counter = try counter(named: "w\(writer)", in: context)
    say("start \(counter.value)")
    while count == 0 || counter.value < count {
        let k = counter.value + 1
        counter.value = k
        let text = k % 11 == 0
            ? noise(bytes: 393_216, seed: UInt64(writer * 1_000_000 + k)).base64EncodedString()
            : "w\(writer) \(k)"
        context.insert(CrashEntry(number: writer * 1_000_000 + k, text: text))
        context.insert(CrashEntry(number: k, text: "w\(writer) \(k)"))
        let old = writer * 1_000_000 + k - 10
        try context.delete(model: CrashEntry.self, where: #Predicate { $0.number == old })
        try context.save()
        say("ack \(k)")
        if k % 25 == 0 { try container.compactDocument() }
    }
    // Every writer done: each holds what the others saved.
    let deadline = Date().addingTimeInterval(120)
    while try context.fetch(FetchDescriptor<CrashCounter>()).contains(where: { $0.value < count }) {
        guard Date() < deadline else {
            // What this writer sees, and what a fresh container on the file sees.
            let seen = try context.fetch(FetchDescriptor<CrashCounter>()).map { "\($0.name)=\($0.value)" }.sorted()
            let fresh = try ModelContext(ModelContainer(
                for: CrashCounter.self, CrashEntry.self, configurations: ModelConfiguration(url: url, allowsSave: false)))
            let there = try fresh.fetch(FetchDescriptor<CrashCounter>()).map { "\($0.name)=\($0.value)" }.sorted()
            let state = container._followState
            // A save says why this container stopped following, if it did.
            context.insert(CrashEntry(number: writer * 1_000_000 + 999_999, text: "probe"))
            let saving: String
            do {
                try context.save()
                saving = "a save works"
            } catch {
                saving = "a save throws \(error)"
            }
            throw ProbeFailure(reason: "other writers did not finish: this writer sees \(seen), the file holds \(there); \(saving); state before the save: \(state)")
        }
        usleep(10_000)
    }
    say("state \(try digest(context))")
}

struct ProbeFailure: Error, CustomStringConvertible {
    var reason: String
    var description: String { reason }
}

func follow(_ url: URL, seconds: Double) throws {
    let container = try ModelContainer(
        for: CrashCounter.self, CrashEntry.self, configurations: ModelConfiguration(url: url, allowsSave: false))
    let end = Date().addingTimeInterval(seconds)
    var seen = Set<Int>()
    var last = 0
    while Date() < end {
        // A fresh context each time: what the document holds now, not registered models.
        // One fetch is one version: the entries tell which save it shows; the counter,
        // fetched after, can only be as far or further.
        let context = ModelContext(container)
        let entries = try context.fetch(FetchDescriptor<CrashEntry>(sortBy: [SortDescriptor(\.number)])).map(\.number)
        let value = (entries.last ?? 1_000_000) - 1_000_000
        let expected = Array(stride(from: 1, through: value, by: 1)) + stride(from: max(1, value - 9), through: value, by: 1).map { 1_000_000 + $0 }
        let counter = try context.fetch(FetchDescriptor<CrashCounter>(predicate: #Predicate { $0.name == "w1" })).first?.value ?? 0
        guard value >= last, entries == expected, counter >= value else {
            say("bad: save \(value) after \(last), counter \(counter), entries \(entries.count) (\(entries.prefix(3))…\(entries.suffix(12)))")
            exit(4)
        }
        last = value
        seen.insert(value)
    }
    say("followed \(seen.count)")
}

// With --limit-bytes N, files may not grow past N bytes (RLIMIT_FSIZE): writes
// beyond fail with EFBIG as on a full disk, and the probe stops at the first save
// that throws, printing "failed <error>".
let arguments = CommandLine.arguments
guard arguments.count == 2 || (arguments.count == 4 && arguments[2] == "--limit-bytes") else {
    FileHandle.standardError.write(Data("usage: DocumentCrashProbe <document> [--limit-bytes N]\n".utf8))
    exit(2)
}
if arguments.count == 4, let limit = rlim_t(arguments[3]) {
    signal(SIGXFSZ, SIG_IGN)
    var rlimit = rlimit(rlim_cur: limit, rlim_max: limit)
    setrlimit(Int32(RLIMIT_FSIZE.rawValue), &rlimit)
}
do {
    let url = URL(fileURLWithPath: CommandLine.arguments[1])
    let container = try ModelContainer(for: CrashCounter.self, CrashEntry.self, configurations: ModelConfiguration(url: url))
    container.documentCompactionPolicy = .init(ratio: 0.5, minimumJournalBytes: 1 << 20)
    let context = ModelContext(container)
    let counter: CrashCounter
    if let existing = try context.fetch(FetchDescriptor<CrashCounter>()).first {
        counter = existing
    } else {
        counter = CrashCounter(name: "main", value: 0)
        context.insert(counter)
    }
    say("start \(counter.value)")
    while true {
        let k = counter.value + 1
        counter.value = k
        // Every seventh entry is large (about 1 MB), so its frame takes long enough
        // to write that a kill can tear it.
        let text = k % 7 == 0
            ? noise(bytes: 786_432, seed: UInt64(k)).base64EncodedString()
            : String(repeating: "entry \(k) ", count: 20)
        context.insert(CrashEntry(number: k, text: text))
        let old = k - 10
        for entry in try context.fetch(FetchDescriptor<CrashEntry>(predicate: #Predicate { $0.number == old })) {
            context.delete(entry)
        }
        do {
            try context.save()
        } catch {
            say("failed \(error)")
            exit(3)
        }
        say("ack \(k)")
        if k % 25 == 0 { try? container.compactDocument() }
    }
} catch {
    FileHandle.standardError.write(Data("DocumentCrashProbe: \(error)\n".utf8))
    exit(1)
}
