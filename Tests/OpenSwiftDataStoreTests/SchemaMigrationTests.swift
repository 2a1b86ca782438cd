import Foundation
import OpenSwiftDataStore
import Testing

/// `SchemaMigration`, the engine's lightweight migration, on hand-made versions.
@Suite struct SchemaMigrationTests {
    static func person(_ attributes: [AttributeDescription], relationship: String = "friend", uniqueness: [[Int]] = []) -> StoreSchema {
        StoreSchema(entities: [
            EntityDescription(
                name: "Person", attributes: attributes,
                relationships: [RelationshipDescription(name: relationship, destination: "Person", isToMany: false, inverse: nil, deleteRule: .nullify)],
                uniqueness: uniqueness),
        ])
    }

    static let original = person([
        AttributeDescription(name: "name", type: .string, isOptional: false),
        AttributeDescription(name: "age", type: .int(bits: 64), isOptional: true),
    ])

    /// Ada (42, friend Bob), Bob (no age), Ada again (7).
    static func version() -> StoreVersion {
        var table = Table(entity: original.entities[0])
        table.put(RowID(1), [.string("Ada"), .int(42), .reference(RowID(2))])
        table.put(RowID(2), [.string("Bob"), .null, .null])
        table.put(RowID(4), [.string("Ada"), .int(7), .null])
        return StoreVersion(schema: original, tables: [table], generation: 3)
    }

    static func hints(renamed: [String?] = [nil, nil], relationship: String? = nil, defaults: [Value?] = [nil, nil]) -> MigrationHints {
        MigrationHints(entities: [.init(attributeOriginalNames: renamed, relationshipOriginalNames: [relationship], defaults: defaults)])
    }

    private func rows(_ version: StoreVersion) -> [Int64: Row] {
        var rows: [Int64: Row] = [:]
        version.tables[0].forEach { rows[$0.rawValue] = $1 }
        return rows
    }

    @Test func renamesKeepValuesAndIdentifiers() throws {
        let target = Self.person([
            AttributeDescription(name: "fullName", type: .string, isOptional: false),
            AttributeDescription(name: "age", type: .int(bits: 64), isOptional: true),
            AttributeDescription(name: "city", type: .string, isOptional: false),
        ], relationship: "pal")
        let migrated = try SchemaMigration.migrate(
            Self.version(), to: target, hints: Self.hints(renamed: ["name", nil, nil], relationship: "friend", defaults: [nil, nil, .string("Oslo")]))
        migrated._checkInvariants()
        #expect(migrated.generation == 3)
        #expect(rows(migrated) == [
            1: [.string("Ada"), .int(42), .string("Oslo"), .reference(RowID(2))],
            2: [.string("Bob"), .null, .string("Oslo"), .null],
            4: [.string("Ada"), .int(7), .string("Oslo"), .null],
        ])
        #expect(migrated.tables[0].nextRawID == Self.version().tables[0].nextRawID)
    }

    @Test func anAttributeThatBecameRequiredNeedsAValueInEveryRow() throws {
        let required = Self.person([
            AttributeDescription(name: "name", type: .string, isOptional: false),
            AttributeDescription(name: "age", type: .int(bits: 64), isOptional: false),
        ])
        #expect {
            _ = try SchemaMigration.migrate(Self.version(), to: required, hints: Self.hints())
        } throws: { "\($0)".contains("Person.age") && "\($0)".contains("row 2") }
        let defaulted = try SchemaMigration.migrate(Self.version(), to: required, hints: Self.hints(defaults: [nil, .int(0)]))
        #expect(rows(defaulted)[2] == [.string("Bob"), .int(0), .null])
    }

    @Test func typeChangesAndViolatedUniqueConstraintsFail() throws {
        let retyped = Self.person([
            AttributeDescription(name: "name", type: .string, isOptional: false),
            AttributeDescription(name: "age", type: .string, isOptional: true),
        ])
        #expect {
            _ = try SchemaMigration.migrate(Self.version(), to: retyped, hints: Self.hints())
        } throws: { "\($0)".contains("custom migration stage") }

        let unique = Self.person([
            AttributeDescription(name: "name", type: .string, isOptional: false, isUnique: true),
            AttributeDescription(name: "age", type: .int(bits: 64), isOptional: true),
        ], uniqueness: [[0]])
        #expect {
            _ = try SchemaMigration.migrate(Self.version(), to: unique, hints: Self.hints())
        } throws: { "\($0)".contains("unique") && "\($0)".contains("Ada") }
    }
}
