import Foundation
import OpenSwiftDataStore
import Testing

/// The engine alone: versions, the commit path, unique indexes and references.
@Suite struct StoreCommitTests {
    /// person(name unique, age, team → team), team(title, members → person)
    static let schema = StoreSchema(entities: [
        EntityDescription(
            name: "Person",
            attributes: [
                AttributeDescription(name: "name", type: .string, isOptional: false, isUnique: true),
                AttributeDescription(name: "age", type: .int(bits: 64), isOptional: false),
            ],
            relationships: [
                RelationshipDescription(name: "team", destination: "Team", isToMany: false, inverse: "members", deleteRule: .nullify),
            ],
            uniqueness: [[0]]),
        EntityDescription(
            name: "Team",
            attributes: [AttributeDescription(name: "title", type: .string, isOptional: false)],
            relationships: [
                RelationshipDescription(name: "members", destination: "Person", isToMany: true, inverse: "team", deleteRule: .nullify),
            ]),
    ])

    static func person(_ name: String, _ age: Int64, team: RowID? = nil) -> Row {
        [.string(name), .int(age), team.map(Value.reference) ?? .null]
    }

    @Test func insertAssignsPermanentIdentifiersAndResolvesReferences() throws {
        let store = Store(schema: Self.schema)
        var changes = ChangeSet()
        changes.inserts.append(.init(entity: 1, temporaryID: RowID(-1), row: [.string("Red"), .references([RowID(-2), RowID(-3)])]))
        changes.inserts.append(.init(entity: 0, temporaryID: RowID(-2), row: Self.person("ann", 30, team: RowID(-1))))
        changes.inserts.append(.init(entity: 0, temporaryID: RowID(-3), row: Self.person("bob", 40, team: RowID(-1))))
        let result = try store.commit(changes)
        #expect(result.generation == 1)
        let team = try #require(result.assigned[EntityRow(entity: 1, id: RowID(-1))])
        let ann = try #require(result.assigned[EntityRow(entity: 0, id: RowID(-2))])
        let bob = try #require(result.assigned[EntityRow(entity: 0, id: RowID(-3))])
        #expect(!team.isTemporary && !ann.isTemporary)
        let version = store.current
        #expect(version.row(team, of: 1)?[1] == .references([ann, bob]))
        #expect(version.row(ann, of: 0)?[2] == .reference(team))
        #expect(version.lookup(unique: [.string("bob")], constraint: 0, of: 0) == bob)
    }

    @Test func publishedVersionsStayUnchanged() throws {
        let store = Store(schema: Self.schema)
        var first = ChangeSet()
        for i in 0..<3000 { first.inserts.append(.init(entity: 0, temporaryID: RowID(Int64(-1 - i)), row: Self.person("p\(i)", Int64(i)))) }
        let result = try store.commit(first)
        let before = store.current
        let id = try #require(result.assigned[EntityRow(entity: 0, id: RowID(-1))])
        var second = ChangeSet()
        second.updates.append(.init(entity: 0, id: id, values: [1: .int(99)]))
        second.deletes.append(.init(entity: 0, id: try #require(result.assigned[EntityRow(entity: 0, id: RowID(-2))])))
        _ = try store.commit(second)
        let after = store.current
        #expect(before.row(id, of: 0)?[1] == .int(0))
        #expect(after.row(id, of: 0)?[1] == .int(99))
        #expect(before.tables[0].count == 3000)
        #expect(after.tables[0].count == 2999)
        #expect(before.lookup(unique: [.string("p1")], constraint: 0, of: 0) != nil)
        #expect(after.lookup(unique: [.string("p1")], constraint: 0, of: 0) == nil)
    }

    @Test func insertWithExistingUniqueKeyUpdatesThatRow() throws {
        let store = Store(schema: Self.schema)
        var first = ChangeSet()
        first.inserts.append(.init(entity: 0, temporaryID: RowID(-1), row: Self.person("ann", 30)))
        let existing = try #require(try store.commit(first).assigned.values.first)
        var second = ChangeSet()
        second.inserts.append(.init(entity: 0, temporaryID: RowID(-5), row: Self.person("ann", 31)))
        let result = try store.commit(second)
        #expect(result.assigned[EntityRow(entity: 0, id: RowID(-5))] == existing)
        #expect(result.upserted == [EntityRow(entity: 0, id: RowID(-5))])
        #expect(store.current.tables[0].count == 1)
        #expect(store.current.row(existing, of: 0)?[1] == .int(31))
    }

    @Test func upsertKeepsRelationshipsTheInsertLeftEmpty() throws {
        let store = Store(schema: Self.schema)
        var first = ChangeSet()
        first.inserts.append(.init(entity: 1, temporaryID: RowID(-1), row: [.string("Red"), .references([RowID(-2)])]))
        first.inserts.append(.init(entity: 0, temporaryID: RowID(-2), row: Self.person("ann", 30, team: RowID(-1))))
        let ids = try store.commit(first).assigned
        let team = try #require(ids[EntityRow(entity: 1, id: RowID(-1))])
        var second = ChangeSet()
        second.inserts.append(.init(entity: 0, temporaryID: RowID(-9), row: Self.person("ann", 33)))
        let ann = try #require(try store.commit(second).assigned[EntityRow(entity: 0, id: RowID(-9))])
        #expect(store.current.row(ann, of: 0)?[2] == .reference(team))
    }

    @Test func updateToAnotherRowsUniqueKeyThrowsAndPublishesNothing() throws {
        let store = Store(schema: Self.schema)
        var first = ChangeSet()
        first.inserts.append(.init(entity: 0, temporaryID: RowID(-1), row: Self.person("ann", 30)))
        first.inserts.append(.init(entity: 0, temporaryID: RowID(-2), row: Self.person("bob", 40)))
        let ids = try store.commit(first).assigned
        let bob = try #require(ids[EntityRow(entity: 0, id: RowID(-2))])
        var clash = ChangeSet()
        clash.updates.append(.init(entity: 0, id: bob, values: [0: .string("ann"), 1: .int(1)]))
        #expect(throws: StoreError.self) { try store.commit(clash) }
        #expect(store.current.generation == 1)
        #expect(store.current.row(bob, of: 0)?[1] == .int(40))
    }

    @Test func nilKeysDoNotClash() throws {
        let store = Store(schema: Self.schema)
        var changes = ChangeSet()
        changes.inserts.append(.init(entity: 0, temporaryID: RowID(-1), row: [.null, .int(1), .null]))
        changes.inserts.append(.init(entity: 0, temporaryID: RowID(-2), row: [.null, .int(2), .null]))
        _ = try store.commit(changes)
        #expect(store.current.tables[0].count == 2)
    }

    @Test func removeAllEmptiesEveryTable() throws {
        let store = Store(schema: Self.schema)
        var changes = ChangeSet()
        changes.inserts.append(.init(entity: 0, temporaryID: RowID(-1), row: Self.person("ann", 30)))
        _ = try store.commit(changes)
        try store.removeAll()
        #expect(store.current.tables[0].count == 0)
        #expect(store.current.lookup(unique: [.string("ann")], constraint: 0, of: 0) == nil)
        #expect(store.current.generation == 2)
    }

    /// Temporary rows in any order (counting down as contexts make them, counting
    /// up, shuffled) each find the row they became, and references between them
    /// resolve.
    @Test(arguments: ["down", "up", "shuffled"])
    func everyTemporaryRowFindsItsPermanentRow(order: String) throws {
        var rng = SplitMix(seed: 3)
        var temporaries = (1...500).map { RowID(Int64(-$0)) }
        switch order {
        case "up": temporaries.reverse()
        case "shuffled": temporaries.shuffle(using: &rng)
        default: break
        }
        let store = Store(schema: Self.schema)
        var changes = ChangeSet()
        let team = RowID(-1_000)
        changes.inserts.append(.init(entity: 1, temporaryID: team, row: [.string("Blue"), .references(Array(temporaries.prefix(3)))]))
        for (i, temporary) in temporaries.enumerated() {
            changes.inserts.append(.init(entity: 0, temporaryID: temporary, row: Self.person("p\(i)", Int64(i), team: team)))
        }
        let result = try store.commit(changes)
        #expect(result.assigned.count == 501)
        for (i, temporary) in temporaries.enumerated() {
            let id = try #require(result.assigned[EntityRow(entity: 0, id: temporary)])
            #expect(store.current.row(id, of: 0)?[0] == .string("p\(i)"))
        }
        // The same raw temporary value under another entity is another row.
        #expect(result.assigned[EntityRow(entity: 1, id: temporaries[0])] == nil)
        let teamID = try #require(result.assigned[EntityRow(entity: 1, id: team)])
        let members = try temporaries.prefix(3).map { try #require(result.assigned[EntityRow(entity: 0, id: $0)]) }
        #expect(store.current.row(teamID, of: 1)?[1] == .references(members))
    }
}
