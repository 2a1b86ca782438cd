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

@Suite(.enabled(if: PostgresServer.url != nil, "no PostgreSQL server: PostgresStore's own tests are skipped"))
struct PostgresLimitTests {
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
        // (cut) name and was never made, and this saved a duplicate serial.
        let other = ModelContext(container)
        other.insert(Long(code: "b", serial: "s1"))
        #expect(throws: (any Error).self) { try other.save() }
        #expect(try ModelContext(container).fetch(FetchDescriptor<Long>()).map(\.serial) == ["s1"])
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
