/// Large inserts, indexed in bulk.
///
/// A commit that inserts a million rows (one `save()` after a million inserts) spent
/// a quarter of its time in B-trees: a uniqueness probe and an insert per index per
/// row, each descending the tree and copying or splitting along its path. A commit
/// that inserts many rows of an entity, at least as many as the entity holds, with
/// no row taking over another's unique key, instead appends the rows to the table
/// and gives each ordered index their entries sorted, merged with its own into
/// freshly packed nodes (`OrderedIndex.add(_:)`).
extension StoreVersion {
    /// The fewest rows of one entity a commit inserts in bulk.
    static let bulkInsertMinimum = 1_024

    /// A planned bulk insert of one entity: its rows, stored under identifiers from
    /// `firstID` on, and the sorted new entries of its unique indexes (by position in
    /// `orderedIndexes`), checked already.
    struct BulkInsert {
        let rows: [Row]
        let firstID: Int64
        var unique: [Int: OrderedIndex.Pending]
    }

    /// A bulk insert of `rows` into `entity`, when one is worth it and keeps the commit's
    /// meaning: at least `bulkInsertMinimum` rows and at least as many as the entity
    /// holds, every value fitting its unique indexes' keys, and no unique key held by
    /// another row, stored or inserted (such a row upserts, which is done row by row).
    /// Nil otherwise.
    /// - Complexity: O(k log k + k log n) for k rows and n stored ones
    func bulkInsert(of rows: [Row], into entity: Int) -> BulkInsert? {
        guard rows.count >= Self.bulkInsertMinimum, rows.count >= tables[entity].count else { return nil }
        let firstID = tables[entity].nextRawID
        var unique: [Int: OrderedIndex.Pending] = [:]
        for i in Set(uniqueTrees[entity]) {
            let index = orderedIndexes[entity][i]
            guard let pending = index.pending(rows, firstID: firstID), !index.clashes(pending) else { return nil }
            unique[i] = pending
        }
        return BulkInsert(rows: rows, firstID: firstID, unique: unique)
    }

    /// Stores the rows of a planned bulk insert, under `plan.firstID` on: in the table,
    /// column by column (`Table.insert(contentsOf:)`), and in the R-trees; the ordered
    /// indexes take them at the end (`finishBulkInsert`).
    /// - Complexity: O(rows × slots), plus the R-tree inserts
    mutating func storeRows(of plan: BulkInsert, into entity: Int) {
        let first = tables[entity].insert(contentsOf: plan.rows)
        precondition(first.rawValue == plan.firstID, "a bulk insert's rows were stored elsewhere")
        for i in spatialIndexes[entity].indices {
            for (k, row) in plan.rows.enumerated() { spatialIndexes[entity][i].add(row, at: RowID(plan.firstID + Int64(k))) }
        }
    }

    /// Gives the ordered indexes of `entity` the entries of `plan`'s rows, which
    /// `storeRows` stored.
    /// - Complexity: O((n + k) × indexes + k log k) for n rows held and k inserted
    mutating func finishBulkInsert(into entity: Int, plan: BulkInsert) {
        precondition(tables[entity].nextRawID == plan.firstID + Int64(plan.rows.count), "a bulk insert's rows were stored elsewhere")
        for i in orderedIndexes[entity].indices {
            if let pending = plan.unique[i] ?? orderedIndexes[entity][i].pending(plan.rows, firstID: plan.firstID) {
                orderedIndexes[entity][i].add(pending)
            } else {
                // A value that does not fit the packed key: row by row, the index turns general.
                for (k, row) in plan.rows.enumerated() { orderedIndexes[entity][i].add(row, at: RowID(plan.firstID + Int64(k))) }
            }
        }
    }
}
