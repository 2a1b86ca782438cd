/// A change set counted by entity in one pass, before the commit changes anything:
/// the entity numbers are checked, and the identifier limit, the spatial indexes
/// and the bulk inserts are planned from the counts, rather than each walking the
/// inserts again.
struct ChangeCensus {
    /// Per entity, the inserts that come as rows (`ChangeSet.inserts`).
    private(set) var rowInserts: [Int]
    /// Per entity, the rows of its column inserts (`ChangeSet.columnInserts`).
    private(set) var columnInserts: [Int]

    /// Counts `changes`; throws `unknownEntity` for an entity `schema` does not have.
    /// - Complexity: O(inserts + column inserts + updates + deletes)
    init(_ changes: ChangeSet, schema: StoreSchema) throws(StoreError) {
        let entities = schema.entities.count
        rowInserts = Array(repeating: 0, count: entities)
        columnInserts = Array(repeating: 0, count: entities)
        func check(_ e: Int) throws(StoreError) {
            guard e >= 0, e < entities else { throw .unknownEntity("#\(e)") }
        }
        for insert in changes.inserts {
            try check(insert.entity)
            rowInserts[insert.entity] += 1
        }
        for insert in changes.columnInserts {
            try check(insert.entity)
            columnInserts[insert.entity] += insert.table.count
        }
        for update in changes.updates { try check(update.entity) }
        for delete in changes.deletes { try check(delete.entity) }
    }

    /// The rows of `entity` the commit inserts, as rows and as columns.
    func inserts(of entity: Int) -> Int { rowInserts[entity] + columnInserts[entity] }

    /// Column inserts of `entity`, `count` rows, that go as row inserts after all.
    mutating func insertAsRows(_ count: Int, of entity: Int) {
        columnInserts[entity] -= count
        rowInserts[entity] += count
    }
}
