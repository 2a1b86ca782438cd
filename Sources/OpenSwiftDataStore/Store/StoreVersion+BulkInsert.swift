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
        let rows: BulkRows
        let firstID: Int64
        var unique: [Int: OrderedIndex.Pending]
    }

    /// The rows of a bulk insert, in order: rows, or a table's columns (a save's inserts
    /// kept in columns, `ChangeSet.ColumnInsert`). Each is stored under the insert's first
    /// identifier plus its offset: its position among `rows`, or its identifier in the
    /// table less one (a table skips the identifiers of rows it deleted).
    struct BulkRows {
        enum Storage {
            case rows([Row])
            case table(Table)
        }

        let storage: Storage

        /// The number of rows.
        var count: Int {
            switch storage {
            case let .rows(rows): rows.count
            case let .table(table): table.count
            }
        }

        /// The identifiers the rows span, skipped ones included.
        var span: Int64 {
            switch storage {
            case let .rows(rows): Int64(rows.count)
            case let .table(table): table.nextRawID - 1
            }
        }

        /// Calls `body` with each row's offset and row, in order.
        /// - Complexity: O(rows × slots)
        func forEachRow(_ body: (Int64, Row) -> Void) {
            switch storage {
            case let .rows(rows):
                for (k, row) in rows.enumerated() { body(Int64(k), row) }
            case let .table(table):
                table.forEach { id, row in body(id.rawValue - 1, row) }
            }
        }

        /// Calls `body` with each row's offset and value in `slot`, in order.
        /// - Complexity: O(rows)
        func forEachValue(slot: Int, _ body: (Int64, Value) -> Void) {
            switch storage {
            case let .rows(rows):
                for (k, row) in rows.enumerated() { body(Int64(k), row[slot]) }
            case let .table(table):
                table.forEach(slot: slot) { id, value in body(id.rawValue - 1, value) }
            }
        }
    }

    /// A bulk insert of `rows` into `entity`, when one is worth it and keeps the commit's
    /// meaning: at least `bulkInsertMinimum` rows and at least as many as the entity
    /// holds, every value fitting its unique indexes' keys, and no unique key held by
    /// another row, stored or inserted (such a row upserts, which is done row by row).
    /// Nil otherwise.
    /// - Complexity: O(k log k + k log n) for k rows and n stored ones
    func bulkInsert(of rows: BulkRows, into entity: Int) -> BulkInsert? {
        guard rows.count >= Self.bulkInsertMinimum, rows.count >= tables[entity].count else { return nil }
        var firstID = tables[entity].nextRawID
        if case .table = rows.storage {
            // Taken whole, the table's segments start at a segment boundary, where
            // looking an identifier up finds its segment by arithmetic (`Table.locate`);
            // the identifiers skipped are never used.
            let size = Int64(Table.segmentSize)
            firstID = (firstID - 1 + size - 1) / size * size + 1
        }
        var unique: [Int: OrderedIndex.Pending] = [:]
        for i in Set(uniqueTrees[entity]) {
            let index = orderedIndexes[entity][i]
            guard let pending = index.pending(rows, firstID: firstID), !index.clashes(pending) else { return nil }
            unique[i] = pending
        }
        return BulkInsert(rows: rows, firstID: firstID, unique: unique)
    }

    /// Stores the rows of a planned bulk insert, under `plan.firstID` on: in the table,
    /// column by column (`Table.insert(contentsOf:)`) or, for rows in a table, by taking
    /// its segments (`Table.append(rowsOf:firstID:)`), and in the R-trees that are
    /// built; the ordered indexes take them at the end (`finishBulkInsert`).
    /// - Complexity: O(rows × slots), O(segments) for rows in a table; plus the R-tree inserts
    mutating func storeRows(of plan: BulkInsert, into entity: Int) {
        switch plan.rows.storage {
        case let .rows(rows):
            let first = tables[entity].insert(contentsOf: rows)
            precondition(first.rawValue == plan.firstID, "a bulk insert's rows were stored elsewhere")
        case let .table(table):
            tables[entity].append(rowsOf: table, firstID: plan.firstID)
        }
        for i in spatialIndexes[entity].indices {
            // Its own state first, built or not: a reader of the previous version that
            // builds that version's tree must not build it into this one.
            spatialIndexes[entity][i].detach()
            guard spatialIndexes[entity][i].isBuilt else { continue }
            plan.rows.forEachRow { offset, row in spatialIndexes[entity][i].add(row, at: RowID(plan.firstID + offset)) }
        }
    }

    /// Gives the ordered indexes of `entity` the entries of `plan`'s rows, which
    /// `storeRows` stored.
    /// - Complexity: O((n + k) × indexes + k log k) for n rows held and k inserted
    ///
    /// Each index's entries go once its tree holds them, and the unique indexes' entries
    /// (sorted by `bulkInsert`, 28 bytes a row for strings) go into their trees first:
    /// they do not wait beside the other indexes' sorting, at the peak of a large save.
    /// (The caller hands `plan` over, `consume`.)
    mutating func finishBulkInsert(into entity: Int, plan: consuming BulkInsert) {
        precondition(tables[entity].nextRawID == plan.firstID + plan.rows.span, "a bulk insert's rows were stored elsewhere")
        let checkedFirst = plan.unique.keys.sorted() + orderedIndexes[entity].indices.filter { plan.unique[$0] == nil }
        for i in checkedFirst {
            let checked = plan.unique.removeValue(forKey: i)
            if let pending = checked ?? orderedIndexes[entity][i].pending(plan.rows, firstID: plan.firstID) {
                orderedIndexes[entity][i].add(pending)
            } else {
                // A value that does not fit the packed key: row by row, the index turns general.
                plan.rows.forEachRow { offset, row in orderedIndexes[entity][i].add(row, at: RowID(plan.firstID + offset)) }
            }
        }
        if plan.rows.count >= FreedMemory.bulkRowsMinimum { FreedMemory.release() }
    }
}
