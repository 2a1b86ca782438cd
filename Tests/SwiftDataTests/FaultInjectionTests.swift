import Foundation
import OpenSwiftDataStore
import SwiftData
import Testing

@Model final class FaultNote {
    @Attribute(.unique) var key: String
    var text: String
    @Attribute(.externalStorage) var attachment: Data?

    init(key: String, text: String, attachment: Data? = nil) {
        self.key = key
        self.text = text
        self.attachment = attachment
    }
}

/// Every file call a document makes can fail (#45, point 2): for saves, compaction,
/// opening and `ModelDocument`'s save and save-as, the 1st, 2nd, … nth file call
/// fails in turn with ENOSPC, EIO, a short write, an fsync failure and a rename
/// failure (`_FileFaults`). After each: a typed error; the container keeps working
/// or refuses further saves; a reopen shows exactly the last acknowledged state; no
/// temporary file or unreferenced blob is left.
@Suite(.serialized) struct FaultInjectionTests {
    typealias Failure = _FileFaults.Failure

    /// The faults tried, each on the calls it can happen to.
    static let faults: [(name: String, calls: Set<_FileFaults.Call>, failure: Failure)] = [
        ("ENOSPC", Set(_FileFaults.Call.allCases), .error(ENOSPC)),
        ("EIO", Set(_FileFaults.Call.allCases), .error(EIO)),
        ("short write", [.write], .shortWrite),
        ("fsync failure", [.sync, .syncDirectory], .error(EIO)),
        ("rename failure", [.rename, .link], .error(EXDEV)),
    ]

    typealias State = [String: String]

    static func state(of container: ModelContainer) throws -> State {
        var state: State = [:]
        for note in try ModelContext(container).fetch(FetchDescriptor<FaultNote>()) {
            state[note.key] = "\(note.text)|\(note.attachment.map { "\($0.count):\($0.first ?? 0)" } ?? "-")"
        }
        return state
    }

    /// Past the 16 KiB a value needs to go to a blob file.
    static func attachment(_ seed: UInt8) -> Data { Data(repeating: seed, count: 17_000 + Int(seed)) }

    /// A folder with a document of a few notes (one blob each), saved in `saves` saves.
    static func baseline(in folder: URL, saves: Int = 1) throws -> URL {
        let url = folder.appendingPathComponent("notes.store")
        let container = try ModelContainer(for: FaultNote.self, configurations: ModelConfiguration(url: url))
        let context = ModelContext(container)
        for save in 0..<saves {
            for k in 0..<3 {
                let key = "n\(save)-\(k)"
                context.insert(FaultNote(key: key, text: "text \(key)", attachment: attachment(UInt8(save * 3 + k))))
            }
            try context.save()
        }
        return url
    }

    /// The unsaved change a save under fault tries to record: an insert with a new
    /// blob, an edit of text and blob, a deletion.
    static func change(_ context: ModelContext) throws {
        context.insert(FaultNote(key: "new", text: "inserted", attachment: attachment(200)))
        let notes = try context.fetch(FetchDescriptor<FaultNote>(sortBy: [SortDescriptor(\.key)]))
        notes[0].text = "edited"
        notes[0].attachment = attachment(201)
        context.delete(notes[1])
    }

    /// What is left in `folder` that no document names: temporary files, and blob
    /// files the document at `url` does not refer to (or refers to and lacks).
    static func leftovers(in folder: URL, document url: URL) throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        var problems = names.filter { $0.contains(".tmp") }
        let referenced = try DocumentReader.read(path: url.path, blobs: .skip).blobNames
        let blobFolder = url.path + ".blobs"
        let stored = Set((try? FileManager.default.contentsOfDirectory(atPath: blobFolder)) ?? [])
        problems += stored.subtracting(referenced).map { "unreferenced blob \($0)" }
        problems += referenced.subtracting(stored).map { "missing blob \($0)" }
        return problems
    }

    /// Runs `attempt` with the nth matching call failing, for n = 1, 2, … until an
    /// attempt makes no such call; returns how many faults fired.
    static func eachCall(
        of fault: (name: String, calls: Set<_FileFaults.Call>, failure: Failure),
        _ attempt: (_ folder: URL, _ inject: () -> Void, _ stop: () -> Void) throws -> Void
    ) throws -> Int {
        var fired = 0
        for n in 1...200 {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("osd-faults-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            var happened = false
            // `stop` ends the fault plan (the attempt's checks then run without it).
            func stop() { happened = _FileFaults.remove(under: folder.path) || happened }
            try attempt(folder, { _FileFaults.install(under: folder.path, failing: n, of: fault.calls, with: fault.failure) }, stop)
            stop()
            guard happened else { return fired }
            fired += 1
        }
        Issue.record("\(fault.name): more than 200 calls")
        return fired
    }

    /// Whether `error` is one of the typed errors a failed save or open may throw.
    static func isTyped(_ error: any Error) -> Bool {
        error is DocumentError || error is SwiftDataError
    }

    @Test func savesUnderEveryFaultKeepTheLastAcknowledgedState() throws {
        var total = 0
        for fault in Self.faults {
            total += try Self.eachCall(of: fault) { folder, inject, stop in
                let url = try Self.baseline(in: folder)
                var acknowledged: State
                var refused = false
                do {
                    let container = try ModelContainer(for: FaultNote.self, configurations: ModelConfiguration(url: url))
                    acknowledged = try Self.state(of: container)
                    let context = ModelContext(container)
                    try Self.change(context)
                    inject()
                    var failure: (any Error)?
                    do {
                        try context.save()
                    } catch {
                        failure = error
                    }
                    stop()
                    if failure == nil { acknowledged = try Self.state(of: container) }
                    if let error = failure {
                        #expect(Self.isTyped(error), "\(fault.name): \(error)")
                        // The container keeps working, or refuses every save from now on.
                        do {
                            try context.save()
                            acknowledged = try Self.state(of: container)
                        } catch {
                            #expect(Self.isTyped(error), "\(fault.name), saving again: \(error)")
                            refused = true
                        }
                    }
                }
                let reopened = try ModelContainer(for: FaultNote.self, configurations: ModelConfiguration(url: url))
                #expect(try Self.state(of: reopened) == acknowledged, "\(fault.name)")
                // After an fsync failure the frame's cut may not be durable, so its blobs
                // stay until the next compaction collects them.
                if refused { try reopened.compactDocument() }
                #expect(try Self.leftovers(in: folder, document: url) == [], "\(fault.name)")
            }
        }
        print("FaultInjectionTests: \(total) faults injected into saves")
        #expect(total > 20)
    }

    /// PostgreSQL's fsync lesson: after an fsync of the document fails, nothing
    /// is acknowledged through that file again; a reopen reads what the disk holds.
    @Test func anFsyncFailureStopsSavesUntilTheDocumentIsOpenedAgain() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("osd-faults-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try Self.baseline(in: folder)
        let before: State
        do {
            let container = try ModelContainer(for: FaultNote.self, configurations: ModelConfiguration(url: url))
            before = try Self.state(of: container)
            let context = ModelContext(container)
            context.insert(FaultNote(key: "late", text: "not durable"))
            // The save's only fsync is the journal frame's (no blob is written).
            _FileFaults.install(under: folder.path, failing: 1, of: [.sync], with: .error(EIO))
            #expect(throws: DocumentError.io(operation: "fsync", path: url.path, errno: EIO)) { try context.save() }
            #expect(_FileFaults.remove(under: folder.path))
            // Saves stay refused with the same error, though the disk works again.
            #expect(throws: DocumentError.io(operation: "fsync", path: url.path, errno: EIO)) { try context.save() }
            #expect(try Self.state(of: container) == before)
        }
        let reopened = try ModelContainer(for: FaultNote.self, configurations: ModelConfiguration(url: url))
        #expect(try Self.state(of: reopened) == before)
        let context = ModelContext(reopened)
        context.insert(FaultNote(key: "late", text: "durable"))
        try context.save()
    }

    /// `deleteAllData()` over two files when the second cannot be rewritten: the
    /// first is put back, nothing is removed, and saves go on.
    @Test func deleteAllDataOverTwoFilesIsAllOrNothing() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("osd-faults-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func open() throws -> ModelContainer {
            try ModelContainer(
                for: Schema([FaultNote.self, CPerson.self]),
                configurations: ModelConfiguration("notes", schema: Schema([FaultNote.self]), url: folder.appendingPathComponent("notes.store")),
                ModelConfiguration("people", schema: Schema([CPerson.self]), url: folder.appendingPathComponent("people.store")))
        }
        do {
            let container = try open()
            let context = ModelContext(container)
            context.insert(FaultNote(key: "a", text: "kept", attachment: Self.attachment(7)))
            context.insert(CPerson(name: "Ann"))
            try context.save()
            // The first file's compaction renames; the second's rename fails.
            _FileFaults.install(under: folder.path, failing: 2, of: [.rename], with: .error(ENOSPC))
            container.deleteAllData()
            #expect(_FileFaults.remove(under: folder.path))
            #expect(try context.fetchCount(FetchDescriptor<FaultNote>()) == 1)
            #expect(try context.fetchCount(FetchDescriptor<CPerson>()) == 1)
            context.insert(FaultNote(key: "b", text: "after"))
            try context.save()
        }
        let context = ModelContext(try open())
        #expect(try context.fetch(FetchDescriptor<FaultNote>(sortBy: [SortDescriptor(\.key)])).map(\.key) == ["a", "b"])
        #expect(try context.fetchCount(FetchDescriptor<CPerson>()) == 1)
    }

    @Test func compactionUnderEveryFaultKeepsTheDocument() throws {
        var total = 0
        for fault in Self.faults {
            total += try Self.eachCall(of: fault) { folder, inject, stop in
                let url = try Self.baseline(in: folder, saves: 3)
                var acknowledged: State
                do {
                    let container = try ModelContainer(for: FaultNote.self, configurations: ModelConfiguration(url: url))
                    acknowledged = try Self.state(of: container)
                    inject()
                    do {
                        try container.compactDocument()
                    } catch {
                        #expect(Self.isTyped(error), "\(fault.name): \(error)")
                    }
                    stop()
                    // Saves go on after a failed compaction (or are refused, typed).
                    let context = ModelContext(container)
                    try Self.change(context)
                    do {
                        try context.save()
                        acknowledged = try Self.state(of: container)
                    } catch {
                        #expect(Self.isTyped(error), "\(fault.name), saving after: \(error)")
                    }
                }
                let reopened = try ModelContainer(for: FaultNote.self, configurations: ModelConfiguration(url: url))
                #expect(try Self.state(of: reopened) == acknowledged, "\(fault.name)")
                #expect(try Self.leftovers(in: folder, document: url) == [], "\(fault.name)")
            }
        }
        print("FaultInjectionTests: \(total) faults injected into compactions")
        #expect(total > 10)
    }

    @Test func opensUnderEveryFaultFailTypedAndChangeNothing() throws {
        var total = 0
        for fault in Self.faults {
            total += try Self.eachCall(of: fault) { folder, inject, stop in
                let url = try Self.baseline(in: folder, saves: 2)
                let expected = try Self.state(of: ModelContainer(for: FaultNote.self, configurations: ModelConfiguration(url: url)))
                let bytes = try Data(contentsOf: url)
                inject()
                do {
                    let container = try ModelContainer(for: FaultNote.self, configurations: ModelConfiguration(url: url))
                    stop()
                    #expect(try Self.state(of: container) == expected, "\(fault.name)")
                } catch {
                    stop()
                    #expect(error as? SwiftDataError == SwiftDataError.loadIssueModelContainer, "\(fault.name): \(error)")
                    #expect(try Data(contentsOf: url) == bytes, "\(fault.name): a failed open changed the file")
                }
                let reopened = try ModelContainer(for: FaultNote.self, configurations: ModelConfiguration(url: url))
                #expect(try Self.state(of: reopened) == expected, "\(fault.name)")
                #expect(try Self.leftovers(in: folder, document: url) == [], "\(fault.name)")
            }
        }
        print("FaultInjectionTests: \(total) faults injected into opens")
        #expect(total > 3)
    }

    @Test @MainActor func documentSaveAndSaveAsUnderEveryFaultKeepTheLastSavedFile() throws {
        var total = 0
        for fault in Self.faults {
            for saveAs in [false, true] {
                total += try Self.eachCall(of: fault) { folder, inject, stop in
                    let url = try Self.baseline(in: folder, saves: 2)
                    let copy = folder.appendingPathComponent("copy.store")
                    let before = try Self.state(of: ModelContainer(for: FaultNote.self, configurations: ModelConfiguration(url: url)))
                    var saved: (url: URL, state: State)?
                    var changed: State = [:]
                    do {
                        let document = try ModelDocument(for: Schema([FaultNote.self]), contentsOf: url)
                        try Self.change(document.mainContext)
                        try document.mainContext.save()
                        let after = try Self.state(of: document.container)
                        changed = after
                        inject()
                        do {
                            if saveAs { try document.save(as: copy) } else { try document.save() }
                            saved = (saveAs ? copy : url, after)
                        } catch {
                            #expect(Self.isTyped(error), "\(fault.name): \(error)")
                        }
                        stop()
                        // A compaction whose folder sync failed keeps the blobs the old
                        // file named (a crash could bring it back) until the next one.
                        if saved != nil { try document.save() }
                        document.close()
                    }
                    // The file saved (when the save was acknowledged) holds the change;
                    // the original holds what it held unless it was the one saved.
                    if let saved {
                        let container = try ModelContainer(for: FaultNote.self, configurations: ModelConfiguration(url: saved.url))
                        #expect(try Self.state(of: container) == saved.state, "\(fault.name)")
                    }
                    if saved?.url != url {
                        let original = try ModelContainer(for: FaultNote.self, configurations: ModelConfiguration(url: url))
                        #expect(try Self.state(of: original) == before, "\(fault.name)")
                    }
                    let left = try Self.leftovers(in: folder, document: url)
                    #expect(left == [], "\(fault.name), \(saveAs ? "save-as" : "save"), acknowledged: \(saved != nil): \(left)")
                    if FileManager.default.fileExists(atPath: copy.path) {
                        // A save-as that failed after the copy took its name leaves a whole copy.
                        let container = try ModelContainer(for: FaultNote.self, configurations: ModelConfiguration(url: copy))
                        #expect(try Self.state(of: container) == changed, "\(fault.name)")
                        #expect(try Self.leftovers(in: folder, document: copy) == [], "\(fault.name)")
                    } else {
                        let blobs = (try? FileManager.default.contentsOfDirectory(atPath: copy.path + ".blobs")) ?? []
                        #expect(blobs == [], "\(fault.name): a failed save-as left \(blobs)")
                    }
                }
            }
        }
        print("FaultInjectionTests: \(total) faults injected into ModelDocument saves")
        #expect(total > 10)
    }
}
