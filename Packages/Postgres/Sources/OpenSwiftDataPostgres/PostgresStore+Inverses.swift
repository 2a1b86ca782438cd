import Foundation
import OpenSwiftDataStore
import PostgresNIO
@_spi(DataStores) import OpenSwiftData

/// Both sides of a relationship are columns here, and a save writes the rows the
/// context sent. An upsert is the one write the context cannot foresee: the row it
/// lands on had links of its own, and the rows on their other side still name it
/// (an airport still lists a flight the feed now gives another origin). After
/// every other write of the save, each relationship of an upserted row with an
/// inverse is made to agree on both sides, with the upserted row's links winning.
extension PostgresStore {
    /// Repairs the inverses of `upserted` rows (entity, row key); returns the rows it
    /// changed, whose snapshots the context receives and whose changes go into
    /// `changes` for history.
    func repairInverses(
        ofUpserted upserted: [(EntityDescription, Int64)], changes: inout [StoredChange]
    ) throws -> [(EntityDescription, Int64)] {
        var repaired: [RowName: EntityDescription] = [:]
        var changedSlots: [RowName: Set<Int>] = [:]
        func note(_ entity: EntityDescription, slot: Int, rows: [PostgresRow]) throws {
            for row in rows {
                let cells = row.makeRandomAccess()
                let name = RowName(table: entity.name, id: try cells[0].decode(Int64.self))
                repaired[name] = entity
                changedSlots[name, default: []].insert(slot)
            }
        }
        for (entity, id) in upserted {
            for (r, relationship) in entity.relationships.enumerated() {
                guard let inverseName = relationship.inverse,
                      let targetIndex = compiler.schema.entityIndex(named: relationship.destination) else { continue }
                let target = entities[targetIndex]
                guard let i = target.relationships.firstIndex(where: { $0.name == inverseName }) else { continue }
                let inverse = target.relationships[i]
                let inverseSlot = target.slot(ofRelationship: i)
                let table = quoted(target.name), column = quoted(inverse.name)
                let linked = try links(of: entity, relationship: relationship, row: id)
                if inverse.isToMany {
                    try note(target, slot: inverseSlot, rows: execute("""
                        UPDATE \(table) SET \(column) = array_append(coalesce(\(column), '{}'), $1), "_version" = "_version" + 1
                        WHERE "_id" = ANY($2) AND NOT ($1 = ANY(coalesce(\(column), '{}'))) RETURNING "_id", "_version"
                        """, bindings(id, linked)).rows)
                    try note(target, slot: inverseSlot, rows: execute("""
                        UPDATE \(table) SET \(column) = array_remove(\(column), $1), "_version" = "_version" + 1
                        WHERE $1 = ANY(\(column)) AND NOT ("_id" = ANY($2)) RETURNING "_id", "_version"
                        """, bindings(id, linked)).rows)
                } else {
                    // A target moving to this row leaves its previous partner's list.
                    let moving = try execute("""
                        SELECT "_id", \(column) FROM \(table) WHERE "_id" = ANY($2) AND \(column) IS NOT NULL AND \(column) <> $1
                        """, bindings(id, linked)).rows
                    let own = quoted(entity.name), ownColumn = quoted(relationship.name)
                    for row in moving {
                        let cells = row.makeRandomAccess()
                        let moved = try cells[0].decode(Int64.self), partner = try cells[1].decode(Int64.self)
                        let clear = relationship.isToMany
                            ? "UPDATE \(own) SET \(ownColumn) = array_remove(\(ownColumn), $1), \"_version\" = \"_version\" + 1 WHERE \"_id\" = $2 AND $1 = ANY(\(ownColumn))"
                            : "UPDATE \(own) SET \(ownColumn) = NULL, \"_version\" = \"_version\" + 1 WHERE \"_id\" = $2 AND \(ownColumn) = $1"
                        try note(entity, slot: entity.slot(ofRelationship: r), rows: execute(clear + " RETURNING \"_id\", \"_version\"", bindings(moved, partner)).rows)
                    }
                    try note(target, slot: inverseSlot, rows: execute("""
                        UPDATE \(table) SET \(column) = $1, "_version" = "_version" + 1
                        WHERE "_id" = ANY($2) AND \(column) IS DISTINCT FROM $1 RETURNING "_id", "_version"
                        """, bindings(id, linked)).rows)
                    try note(target, slot: inverseSlot, rows: execute("""
                        UPDATE \(table) SET \(column) = NULL, "_version" = "_version" + 1
                        WHERE \(column) = $1 AND NOT ("_id" = ANY($2)) RETURNING "_id", "_version"
                        """, bindings(id, linked)).rows)
                }
            }
        }
        for (name, entity) in repaired {
            changes.append(.updated(entity: try entityIndex(entity), id: RowID(name.id), slots: changedSlots[name, default: []].sorted()))
        }
        return repaired.map { ($0.value, $0.key.id) }
    }

    /// The row keys `relationship` of row `id` links to, as stored now.
    private func links(of entity: EntityDescription, relationship: RelationshipDescription, row id: Int64) throws -> [Int64] {
        var binds = PostgresBindings()
        binds.append(id)
        guard let row = try execute(
            "SELECT \(quoted(relationship.name)) FROM \(quoted(entity.name)) WHERE \"_id\" = $1", binds).rows.first
        else { return [] }
        let cell = row.makeRandomAccess()[0]
        return relationship.isToMany ? try cell.decode([Int64]?.self) ?? [] : try cell.decode(Int64?.self).map { [$0] } ?? []
    }

    private func bindings(_ key: Int64, _ keys: [Int64]) -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(key)
        binds.append(keys)
        return binds
    }

    private func bindings(_ first: Int64, _ second: Int64) -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(first)
        binds.append(second)
        return binds
    }
}
