import Foundation
import SwiftData
import Testing

// Three shipped versions of a notes app, as SwiftData users declare them.

enum NotesV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [Note.self] }

    @Model final class Note {
        var title: String
        var body: String
        init(title: String, body: String) {
            self.title = title
            self.body = body
        }
    }
}

enum NotesV2: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    static var models: [any PersistentModel.Type] { [Note.self] }

    /// Titles become unique (version 1 has duplicates), and notes count their words.
    @Model final class Note {
        @Attribute(.unique) var title: String
        var body: String
        var wordCount: Int = 0
        init(title: String, body: String) {
            self.title = title
            self.body = body
        }
    }
}

enum NotesV3: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(3, 0, 0) }
    static var models: [any PersistentModel.Type] { [Note.self] }

    /// `body` renamed, an optional attribute added: a lightweight stage.
    @Model final class Note {
        @Attribute(.unique) var title: String
        @Attribute(originalName: "body") var text: String
        var wordCount: Int = 0
        var tag: String?
        init(title: String, text: String) {
            self.title = title
            self.text = text
        }
    }
}

/// What the stage closures did, in order (the suite runs its tests one at a time).
final class StageLog: @unchecked Sendable {
    static let shared = StageLog()
    private let lock = NSLock()
    private var entries: [String] = []

    func record(_ entry: String) { lock.withLock { entries.append(entry) } }

    /// The entries so far, emptying the log.
    func take() -> [String] {
        lock.withLock {
            defer { entries = [] }
            return entries
        }
    }
}

enum NotesPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [NotesV1.self, NotesV2.self, NotesV3.self] }
    static var stages: [MigrationStage] { [v1ToV2, v2ToV3] }

    /// Removes duplicate titles before they become unique (keeping the longest
    /// body), then counts every note's words in the new schema.
    static var v1ToV2: MigrationStage {
        .custom(
            fromVersion: NotesV1.self, toVersion: NotesV2.self,
            willMigrate: { context in
                let notes = try context.fetch(FetchDescriptor<NotesV1.Note>())
                var kept: [String: NotesV1.Note] = [:]
                for note in notes {
                    guard let other = kept[note.title] else {
                        kept[note.title] = note
                        continue
                    }
                    let (keep, drop) = note.body.count > other.body.count ? (note, other) : (other, note)
                    kept[note.title] = keep
                    context.delete(drop)
                }
                try context.save()
                StageLog.shared.record("willMigrate 1→2: \(notes.count) notes")
            },
            didMigrate: { context in
                let notes = try context.fetch(FetchDescriptor<NotesV2.Note>())
                for note in notes { note.wordCount = note.body.split(separator: " ").count }
                // Left unsaved on purpose: the run saves it.
                StageLog.shared.record("didMigrate 1→2: \(notes.count) notes")
            })
    }

    static var v2ToV3: MigrationStage { .lightweight(fromVersion: NotesV2.self, toVersion: NotesV3.self) }
}

enum StageError: Error { case refused }

/// The same versions, with a first stage that changes data and then fails.
enum FailingNotesPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [NotesV1.self, NotesV2.self, NotesV3.self] }
    static var stages: [MigrationStage] {
        [
            .custom(
                fromVersion: NotesV1.self, toVersion: NotesV2.self,
                willMigrate: { context in
                    try context.delete(model: NotesV1.Note.self)
                    try context.save()
                    throw StageError.refused
                }, didMigrate: nil),
            .lightweight(fromVersion: NotesV2.self, toVersion: NotesV3.self),
        ]
    }
}

/// A note of a shape no version of the plan has.
enum NotesElsewhere {
    @Model final class Note {
        var heading: Int
        init(heading: Int) { self.heading = heading }
    }
}

// Two versions of the same shape: only the recorded version tells them apart.

enum CountersV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [Counter.self] }

    @Model final class Counter {
        @Attribute(.unique) var name: String
        /// In units.
        var value: Int
        init(name: String, value: Int) {
            self.name = name
            self.value = value
        }
    }
}

enum CountersV2: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 1, 0) }
    static var models: [any PersistentModel.Type] { [Counter.self] }

    @Model final class Counter {
        @Attribute(.unique) var name: String
        /// In half units: version 1.1 doubles every value.
        var value: Int
        init(name: String, value: Int) {
            self.name = name
            self.value = value
        }
    }
}

enum CountersPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [CountersV1.self, CountersV2.self] }
    static var stages: [MigrationStage] {
        [
            .custom(
                fromVersion: CountersV1.self, toVersion: CountersV2.self, willMigrate: nil,
                didMigrate: { context in
                    for counter in try context.fetch(FetchDescriptor<CountersV2.Counter>()) { counter.value *= 2 }
                    try context.save()
                })
        ]
    }
}

/// A later app's third version, of the same shape again, whose stage the earlier
/// app's plan does not know.
enum CountersV3: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 2, 0) }
    static var models: [any PersistentModel.Type] { [Counter.self] }

    @Model final class Counter {
        @Attribute(.unique) var name: String
        var value: Int
        init(name: String, value: Int) {
            self.name = name
            self.value = value
        }
    }
}

enum LaterCountersPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [CountersV1.self, CountersV2.self, CountersV3.self] }
    static var stages: [MigrationStage] { CountersPlan.stages + [.lightweight(fromVersion: CountersV2.self, toVersion: CountersV3.self)] }
}

/// A version no document header can hold.
enum CountersDated: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(20_240_115, 0, 0) }
    static var models: [any PersistentModel.Type] { [CountersV1.Counter.self] }
}

enum DatedPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [CountersDated.self] }
    static var stages: [MigrationStage] { [] }
}

// Two versions of one shape told apart by a `hashModifier`, as Apple's docs use it.

enum LabelsV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [Label.self] }

    @Model final class Label {
        var text: String
        init(text: String) { self.text = text }
    }
}

enum LabelsV2: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    static var models: [any PersistentModel.Type] { [Label.self] }

    @Model final class Label {
        /// Marked since version 2.
        @Attribute(hashModifier: "marked") var text: String
        init(text: String) { self.text = text }
    }
}

enum LabelsPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [LabelsV1.self, LabelsV2.self] }
    static var stages: [MigrationStage] {
        [
            .custom(
                fromVersion: LabelsV1.self, toVersion: LabelsV2.self, willMigrate: nil,
                didMigrate: { context in
                    for label in try context.fetch(FetchDescriptor<LabelsV2.Label>()) { label.text += " (marked)" }
                })
        ]
    }
}

/// Issue #12, point 2: `SchemaMigrationPlan`s run their stages when a container
/// opens a document of an earlier version.
@Suite(.serialized) struct MigrationPlanTests {
    let folder: TemporaryFolder
    let url: URL

    init() throws {
        folder = try TemporaryFolder()
        url = folder.file("notes.store")
        _ = StageLog.shared.take()
    }

    /// Saves version-1 notes (with a duplicate title) through a container of
    /// version 1, without a plan, as an app shipped before it had one.
    private func saveVersionOne() throws {
        let context = ModelContext(try ModelContainer(for: NotesV1.Note.self, configurations: ModelConfiguration(url: url)))
        context.insert(NotesV1.Note(title: "groceries", body: "milk eggs"))
        context.insert(NotesV1.Note(title: "groceries", body: "milk eggs bread butter"))
        context.insert(NotesV1.Note(title: "ideas", body: "a database on Linux"))
        try context.save()
    }

    private func notesAtVersionThree(readOnly: Bool = false) throws -> [NotesV3.Note] {
        let container = try ModelContainer(
            for: NotesV3.Note.self, migrationPlan: NotesPlan.self, configurations: ModelConfiguration(url: url, allowsSave: !readOnly))
        return try ModelContext(container).fetch(FetchDescriptor<NotesV3.Note>(sortBy: [SortDescriptor(\.title)]))
    }

    @Test func aVersionOneDocumentRunsEveryStageInOrder() throws {
        defer { folder.remove() }
        try saveVersionOne()
        let notes = try notesAtVersionThree()
        #expect(StageLog.shared.take() == ["willMigrate 1→2: 3 notes", "didMigrate 1→2: 2 notes"])
        #expect(notes.map(\.title) == ["groceries", "ideas"])
        #expect(notes.map(\.text) == ["milk eggs bread butter", "a database on Linux"])
        #expect(notes.map(\.wordCount) == [4, 4])
        #expect(notes.allSatisfy { $0.tag == nil })

        // The document is version 3 now: it opens without running a stage, and the
        // unique index on `title` holds (an insert of a known title updates it).
        let context = ModelContext(try ModelContainer(
            for: NotesV3.Note.self, migrationPlan: NotesPlan.self, configurations: ModelConfiguration(url: url)))
        #expect(StageLog.shared.take().isEmpty)
        context.insert(NotesV3.Note(title: "ideas", text: "an R-tree"))
        try context.save()
        let texts = try context.fetch(FetchDescriptor<NotesV3.Note>(sortBy: [SortDescriptor(\.title)])).map(\.text)
        #expect(texts == ["milk eggs bread butter", "an R-tree"])
    }

    @Test func aDocumentAtTheSecondVersionRunsOnlyTheLaterStages() throws {
        defer { folder.remove() }
        do {
            // A container with the plan records the version it is at.
            let context = ModelContext(try ModelContainer(
                for: NotesV2.Note.self, migrationPlan: NotesPlan.self, configurations: ModelConfiguration(url: url)))
            let note = NotesV2.Note(title: "plans", body: "ship version three")
            note.wordCount = 3
            context.insert(note)
            try context.save()
        }
        let notes = try notesAtVersionThree()
        #expect(StageLog.shared.take().isEmpty)
        #expect(notes.map(\.text) == ["ship version three"])
        #expect(notes.map(\.wordCount) == [3])
    }

    @Test func aReadOnlyOpenRunsThePlanInMemoryAndWritesNothing() throws {
        defer { folder.remove() }
        try saveVersionOne()
        let before = try Data(contentsOf: url)
        let notes = try notesAtVersionThree(readOnly: true)
        #expect(notes.map(\.wordCount) == [4, 4])
        #expect(StageLog.shared.take().count == 2)
        #expect(try Data(contentsOf: url) == before)
        // Still version 1 on disk: a writable open migrates it.
        #expect(try notesAtVersionThree().count == 2)
        #expect(StageLog.shared.take().count == 2)
    }

    @Test func aStageThatThrowsFailsTheOpenAndLeavesTheDocument() throws {
        defer { folder.remove() }
        try saveVersionOne()
        let before = try Data(contentsOf: url)
        #expect(throws: StageError.refused) {
            _ = try ModelContainer(for: NotesV3.Note.self, migrationPlan: FailingNotesPlan.self, configurations: ModelConfiguration(url: url))
        }
        #expect(try Data(contentsOf: url) == before)
        // The notes the stage deleted before it threw are all still there.
        let context = ModelContext(try ModelContainer(for: NotesV1.Note.self, configurations: ModelConfiguration(url: url)))
        #expect(try context.fetchCount(FetchDescriptor<NotesV1.Note>()) == 3)
    }

    @Test func aDocumentNewerThanTheApplicationIsABackwardMigration() throws {
        defer { folder.remove() }
        _ = try notesAtVersionThree()
        let before = try Data(contentsOf: url)
        #expect(throws: SwiftDataError.backwardMigration) {
            _ = try ModelContainer(for: NotesV2.Note.self, migrationPlan: NotesPlan.self, configurations: ModelConfiguration(url: url))
        }
        #expect(try Data(contentsOf: url) == before)
    }

    @Test func aDocumentOfNoVersionInThePlanIsAnUnknownSchema() throws {
        defer { folder.remove() }
        do {
            let context = ModelContext(try ModelContainer(for: NotesElsewhere.Note.self, configurations: ModelConfiguration(url: url)))
            context.insert(NotesElsewhere.Note(heading: 1))
            try context.save()
        }
        #expect(throws: SwiftDataError.unknownSchema) {
            _ = try notesAtVersionThree()
        }
        #expect(try ModelContext(try ModelContainer(for: NotesElsewhere.Note.self, configurations: ModelConfiguration(url: url)))
            .fetchCount(FetchDescriptor<NotesElsewhere.Note>()) == 1)
    }

    @Test func theRecordedVersionTellsApartVersionsOfTheSameShape() throws {
        defer { folder.remove() }
        do {
            let context = ModelContext(try ModelContainer(
                for: CountersV1.Counter.self, migrationPlan: CountersPlan.self, configurations: ModelConfiguration(url: url)))
            context.insert(CountersV1.Counter(name: "visits", value: 21))
            try context.save()
        }
        func values() throws -> [Int] {
            let container = try ModelContainer(
                for: Schema(versionedSchema: CountersV2.self), migrationPlan: CountersPlan.self, configurations: ModelConfiguration(url: url))
            return try ModelContext(container).fetch(FetchDescriptor<CountersV2.Counter>()).map(\.value)
        }
        // Version 1.0 is migrated once to 1.1; the second open finds 1.1 recorded.
        #expect(try values() == [42])
        #expect(try values() == [42])
    }

    @Test func aRecordedVersionThePlanDoesNotListIsNeverTakenForAnother() throws {
        defer { folder.remove() }
        // A later app records 1.2.0 (the same shape as 1.0 and 1.1).
        do {
            let context = ModelContext(try ModelContainer(
                for: CountersV3.Counter.self, migrationPlan: LaterCountersPlan.self, configurations: ModelConfiguration(url: url)))
            context.insert(CountersV3.Counter(name: "visits", value: 42))
            try context.save()
        }
        let before = try Data(contentsOf: url)
        // The earlier app (plan up to 1.1) must not take it for 1.0 and run 1.0 -> 1.1.
        #expect(throws: SwiftDataError.backwardMigration) {
            _ = try ModelContainer(for: CountersV2.Counter.self, migrationPlan: CountersPlan.self, configurations: ModelConfiguration(url: url))
        }
        #expect(try Data(contentsOf: url) == before)
    }

    @Test func aVersionNoDocumentCanRecordIsRefused() throws {
        defer { folder.remove() }
        #expect {
            _ = try ModelContainer(for: CountersV1.Counter.self, migrationPlan: DatedPlan.self, configurations: ModelConfiguration(url: url))
        } throws: { error in
            error as? SwiftDataError == .loadIssueModelContainer && "\(error)".contains("20240115.0.0")
        }
    }

    @Test func withoutARecordedVersionTheSameShapeIsTheApplicationsVersion() throws {
        defer { folder.remove() }
        // Written with no plan: nothing recorded, and the two versions' models hash
        // alike (no hashModifier), so as on Apple platforms nothing is migrated.
        do {
            let context = ModelContext(try ModelContainer(for: CountersV1.Counter.self, configurations: ModelConfiguration(url: url)))
            context.insert(CountersV1.Counter(name: "visits", value: 21))
            try context.save()
        }
        let container = try ModelContainer(
            for: CountersV2.Counter.self, migrationPlan: CountersPlan.self, configurations: ModelConfiguration(url: url))
        #expect(try ModelContext(container).fetch(FetchDescriptor<CountersV2.Counter>()).map(\.value) == [21])
    }

    @Test func aHashModifierChangeForcesTheMigration() throws {
        defer { folder.remove() }
        do {
            let context = ModelContext(try ModelContainer(for: LabelsV1.Label.self, configurations: ModelConfiguration(url: url)))
            context.insert(LabelsV1.Label(text: "draft"))
            try context.save()
        }
        func texts() throws -> [String] {
            let container = try ModelContainer(
                for: LabelsV2.Label.self, migrationPlan: LabelsPlan.self, configurations: ModelConfiguration(url: url))
            return try ModelContext(container).fetch(FetchDescriptor<LabelsV2.Label>()).map(\.text)
        }
        #expect(try texts() == ["draft (marked)"])
        // Recorded as version 2 now: the stage does not run again.
        #expect(try texts() == ["draft (marked)"])
    }
}
