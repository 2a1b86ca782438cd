import Foundation
import SwiftData
import Testing

/// Custom stores' identifiers (`identifier(for:entityName:primaryKey:)`) and the
/// coded form of `DefaultSnapshot`.
@Suite struct SnapshotIdentifierTests {
    @Test func primaryKeysOfOneTextNameOneModel() throws {
        let uuid = UUID()
        let a = try PersistentIdentifier.identifier(for: "store", entityName: "Trip", primaryKey: uuid)
        let b = try PersistentIdentifier.identifier(for: "store", entityName: "Trip", primaryKey: uuid.uuidString)
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(!a.isTemporary)
        #expect(a.entityName == "Trip")
        #expect(a.storeIdentifier == "store")
        #expect(a.description == "Trip/p\(uuid.uuidString)")
        #expect(a != (try PersistentIdentifier.identifier(for: "other", entityName: "Trip", primaryKey: uuid)))
        #expect(a != (try PersistentIdentifier.identifier(for: "store", entityName: "Stop", primaryKey: uuid)))
        #expect(a != (try PersistentIdentifier.identifier(for: "store", entityName: "Trip", primaryKey: UUID())))
        // Integers stay integers, and differ from the same digits as text.
        let seven = try PersistentIdentifier.identifier(for: "store", entityName: "Trip", primaryKey: 7)
        #expect(seven == (try PersistentIdentifier.identifier(for: "store", entityName: "Trip", primaryKey: Int64(7))))
        #expect(seven != (try PersistentIdentifier.identifier(for: "store", entityName: "Trip", primaryKey: "7")))
        #expect(seven.description == "Trip/p7")
        #expect(throws: DataStoreError.unsupportedFeature) {
            try PersistentIdentifier.identifier(for: "", entityName: "Trip", primaryKey: 1)
        }
    }

    @Test func identifiersOrderAndCodeByTheirKeys() throws {
        let keys = ["b", "a", "c", "aa"]
        let ids = try keys.map { try PersistentIdentifier.identifier(for: "s", entityName: "E", primaryKey: $0) }
        #expect(ids.sorted().map(\.description) == ["E/pa", "E/paa", "E/pb", "E/pc"])
        for id in ids + [try PersistentIdentifier.identifier(for: "s", entityName: "E", primaryKey: 42)] {
            let decoded = try JSONDecoder().decode(PersistentIdentifier.self, from: JSONEncoder().encode(id))
            #expect(decoded == id)
            #expect(Set([decoded, id]).count == 1)
        }
    }

    @Test func snapshotsCodeEveryKindOfValue() throws {
        let id = try PersistentIdentifier.identifier(for: "s", entityName: "Excursion", primaryKey: UUID())
        let stop = try PersistentIdentifier.identifier(for: "s", entityName: "ExcursionStop", primaryKey: "stop-1")
        let date = Date(timeIntervalSinceReferenceDate: 123_456.789)
        let snapshot = DefaultSnapshot(persistentIdentifier: id, values: [
            "name": "Lisbon", "price": 12.5, "count": 3, "flag": true, "start": date, "blob": Data([0, 1, 255]),
            "uuid": UUID(uuidString: "8F2E4F4C-7C1B-4D7A-9B57-3A2E0A1B2C3D")!, "url": URL(string: "https://example.com/a?b=c")!,
            "tags": ["a", "b"], "missing": nil, "decimal": Decimal(string: "3.14159")!,
            "stops": [stop], "excursion": stop,
        ])
        let data = try JSONEncoder().encode(snapshot)
        let decoded = try JSONDecoder().decode(DefaultSnapshot.self, from: data)
        #expect(decoded == snapshot)
        #expect(decoded.persistentIdentifier == id)
        #expect(decoded.value(forKey: "name", as: String.self) == "Lisbon")
        #expect(decoded.value(forKey: "price", as: Double.self) == 12.5)
        #expect(decoded.value(forKey: "count", as: Int.self) == 3)
        #expect(decoded.value(forKey: "flag", as: Bool.self) == true)
        #expect(decoded.value(forKey: "start", as: Date.self) == date)
        #expect(decoded.value(forKey: "blob", as: Data.self) == Data([0, 1, 255]))
        #expect(decoded.value(forKey: "tags", as: [String].self) == ["a", "b"])
        #expect(decoded.value(forKey: "decimal", as: Decimal.self) == Decimal(string: "3.14159"))
        #expect(decoded.value(forKey: "missing", as: String.self) == nil)
        #expect(decoded.value(forKey: "stops", as: [PersistentIdentifier].self) == [stop])
        #expect(decoded.value(forKey: "excursion", as: PersistentIdentifier.self) == stop)
        #expect(decoded.propertyNames.contains("uuid"))

        // Copying remaps the identifiers relationships hold.
        let moved = try PersistentIdentifier.identifier(for: "s", entityName: "ExcursionStop", primaryKey: "stop-2")
        let copy = decoded.copy(persistentIdentifier: id, remappedIdentifiers: [stop: moved])
        #expect(copy.value(forKey: "stops", as: [PersistentIdentifier].self) == [moved])
        #expect(copy.value(forKey: "excursion", as: PersistentIdentifier.self) == moved)
    }

    @Test func damagedSnapshotsThrowDecodingErrors() throws {
        let bad = [
            #"{"persistentIdentifier": {"entityName": "E", "storeIdentifier": "s", "primaryKey": 1}, "x": {"nope": 1}}"#,
            #"{"persistentIdentifier": {"entityName": "E", "storeIdentifier": "s", "primaryKey": 1}, "x": {"uuid": "zzz"}}"#,
            #"{"x": {"int": 1}}"#,
        ]
        for text in bad {
            #expect(throws: DecodingError.self) { try JSONDecoder().decode(DefaultSnapshot.self, from: Data(text.utf8)) }
        }
    }
}
