import Foundation
import OpenSwiftDataPostgres
import SwiftData
import Testing

// Names past PostgreSQL's 63-byte identifiers, and values its text cannot hold
// (#45, point 4): refused, typed, instead of cut silently or refused mid-save.

@Model
final class AVeryLongEntityNameWhoseIndexNamesPassSixtyThreeBytesXY {
    @Attribute(.unique) var code: String
    @Attribute(.unique) var serial: String
    init(code: String, serial: String) {
        self.code = code
        self.serial = serial
    }
}

@Model
final class PLongAttribute {
    var anAttributeNameThatGoesOnAndOnPastTheSixtyThreeBytesPostgresKeeps: Int = 0
    init() {}
}

@Model
final class PNote {
    var text: String
    init(text: String) { self.text = text }
}

@Model
final class PNoteKey {
    @Attribute(.unique) var key: String
    var text: String
    init(key: String, text: String) {
        self.key = key
        self.text = text
    }
}

@Suite(.enabled(if: PostgresServer.url != nil, "no PostgreSQL server: PostgresStore's own tests are skipped"))
struct PostgresLimitTests {
    @Test func aValueTooLongForItsIndexIsRefusedBeforeAnythingIsWritten() throws {
        let url = try PostgresServer.makeDatabase()
        let container = try ModelContainer(for: PNoteKey.self, configurations: PostgresStoreConfiguration(url: url))
        let context = ModelContext(container)
        context.insert(PNoteKey(key: "short", text: "kept"))
        try context.save()
        context.insert(PNoteKey(key: "fine", text: "not saved either"))
        context.insert(PNoteKey(key: String(repeating: "k", count: 1_000_000), text: "too long a key"))
        #expect {
            try context.save()
        } throws: { error in
            guard case let .unsupportedValue(message)? = error as? PostgresStoreError else { return false }
            return message.contains("PNoteKey.key") && message.contains("indexed")
        }
        context.rollback()
        // A long value of an attribute no index holds is fine.
        context.insert(PNoteKey(key: "long text", text: String(repeating: "t", count: 1_000_000)))
        try context.save()
        let keys = try ModelContext(container).fetch(FetchDescriptor<PNoteKey>(sortBy: [SortDescriptor(\.key)])).map(\.key)
        #expect(keys == ["long text", "short"])
    }

    @Test func twoUniqueIndexesOfALongEntityNameAreBothMade() throws {
        typealias Long = AVeryLongEntityNameWhoseIndexNamesPassSixtyThreeBytesXY
        // Its index names pass 63 bytes, and agree on their first 63.
        #expect("\(Long.self)_unique_0".utf8.count > 63)
        let url = try PostgresServer.makeDatabase()
        let container = try ModelContainer(for: Long.self, configurations: PostgresStoreConfiguration(url: url))
        let context = ModelContext(container)
        context.insert(Long(code: "a", serial: "s1"))
        try context.save()
        // The second constraint holds too: before, its index took the first one's
        // (cut) name and was never made, and an edit saved a duplicate serial. (An
        // insert with a stored serial upserts, as on every store; an edit to one clashes.)
        let other = ModelContext(container)
        let b = Long(code: "b", serial: "s2")
        other.insert(b)
        try other.save()
        b.serial = "s1"
        #expect(throws: (any Error).self) { try other.save() }
        #expect(try ModelContext(container).fetch(FetchDescriptor<Long>(sortBy: [SortDescriptor(\.code)])).map(\.serial) == ["s1", "s2"])
    }

    @Test func aNameLongerThanPostgresKeepsIsRefusedWhenTheContainerOpens() throws {
        let url = try PostgresServer.makeDatabase()
        #expect(throws: PostgresStoreError.identifierTooLong(
            "PLongAttribute.anAttributeNameThatGoesOnAndOnPastTheSixtyThreeBytesPostgresKeeps")) {
            _ = try ModelContainer(for: PLongAttribute.self, configurations: PostgresStoreConfiguration(url: url))
        }
    }

    @Test func aStringWithANulCharacterIsATypedErrorAndSavesNothing() throws {
        let url = try PostgresServer.makeDatabase()
        let container = try ModelContainer(for: PNote.self, configurations: PostgresStoreConfiguration(url: url))
        let context = ModelContext(container)
        context.insert(PNote(text: "fine"))
        context.insert(PNote(text: "nul\u{0}inside"))
        #expect(throws: PostgresStoreError.unsupportedValue("a string holding a NUL character")) { try context.save() }
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<PNote>()) == 0)
    }
}
