/// Everything one save hands to the store, committed atomically.
///
/// Inserted rows carry temporary identifiers (negative); any reference value in the
/// change set may name a temporary row, and the commit rewrites it to the permanent one.
public struct ChangeSet: Sendable {
    public struct Insert: Sendable {
        public var entity: Int
        public var temporaryID: RowID
        public var row: Row
        public init(entity: Int, temporaryID: RowID, row: Row) {
            self.entity = entity
            self.temporaryID = temporaryID
            self.row = row
        }
    }

    public struct Update: Sendable {
        public var entity: Int
        public var id: RowID
        /// Changed slots and their new values.
        public var values: [Int: Value]
        /// Changed to-many slots, as what the saver added and removed: applied to the
        /// stored list, so another writer's changes to the list since stay (Core
        /// Data's merge of to-many relationships).
        public var listChanges: [Int: ListChange]
        public init(entity: Int, id: RowID, values: [Int: Value], listChanges: [Int: ListChange] = [:]) {
            self.entity = entity
            self.id = id
            self.values = values
            self.listChanges = listChanges
        }
    }

    /// What a saver did to a to-many relationship's list since it read it.
    public struct ListChange: Sendable, Equatable {
        /// The list as the saver read it, and as it has it now.
        public var read: [RowID]
        public var list: [RowID]

        /// The change from `old` to `new` (the saver's reading and its value).
        public init(from old: Value, to new: Value) {
            read = old.referencedRows
            list = new.referencedRows
        }

        /// `stored` with this change merged in (`mergedList(read:mine:stored:)`).
        /// - Complexity: O(read + list + stored)
        public func applied(to stored: Value) -> Value {
            .references(mergedList(read: read, mine: list, stored: stored.referencedRows))
        }
    }

    public struct Delete: Sendable {
        public var entity: Int
        public var id: RowID
        public init(entity: Int, id: RowID) {
            self.entity = entity
            self.id = id
        }
    }

    /// Inserts of one entity held in a table's columns rather than in rows: a save's
    /// pending inserts that were kept as rows (`PendingInserts` in the API module), a
    /// million of which take a third of the memory as `Row`s.
    ///
    /// The table's rows are inserted in identifier order, the `k`-th live one under
    /// the `k`-th temporary row of `temporaryRows` (rows of `entity`). A commit that can store them in bulk
    /// (`StoreVersion.bulkInsert`) takes the table's segments whole, their values as
    /// they are: they must hold no reference to a temporary row (a context's kept
    /// inserts hold no related models). Otherwise, or for a second one of the same
    /// entity, they are inserted as `inserts` are, before those, upserts included.
    public struct ColumnInsert: Sendable {
        public let entity: Int
        public let table: Table
        public let temporaryRows: EntityRows
        public init(entity: Int, table: Table, temporaryRows: EntityRows) {
            precondition(table.count == temporaryRows.count, "a temporary identifier per row")
            precondition(temporaryRows.runs.allSatisfy { Int($0.entity) == entity }, "temporary rows of the insert's entity")
            self.entity = entity
            self.table = table
            self.temporaryRows = temporaryRows
        }

        public init(entity: Int, table: Table, temporaryIDs: [RowID]) {
            self.init(entity: entity, table: table, temporaryRows: EntityRows(entity: entity, ids: temporaryIDs))
        }
    }

    /// A row as the saver last read it, which the commit expects to find unchanged
    /// (optimistic concurrency, `ModelContext.ConflictPolicy.failOnConflict`).
    public struct Expectation: Sendable {
        public var entity: Int
        public var id: RowID
        public var row: Row
        /// Whether the row being gone is a conflict (an update's) or what was asked
        /// anyway (a delete's).
        public var goneIsConflict: Bool
        public init(entity: Int, id: RowID, row: Row, goneIsConflict: Bool) {
            self.entity = entity
            self.id = id
            self.row = row
            self.goneIsConflict = goneIsConflict
        }
    }

    public var inserts: [Insert] = []
    /// Inserts held in columns (one per entity is stored in bulk).
    public var columnInserts: [ColumnInsert] = []
    public var updates: [Update] = []
    public var deletes: [Delete] = []
    /// Rows the commit checks before it changes anything: one another writer changed
    /// or deleted since it was read throws `StoreError.conflict`. Empty by default:
    /// then updates write their slots over whatever is stored (the last writer wins,
    /// property by property).
    public var expectations: [Expectation] = []
    /// Who made the change (`ModelContext.author`), kept for history.
    public var author: String?
    /// Whether the result should keep the rows upserts replaced
    /// (`CommitResult.replacedRows`): a context with an undo manager restores them
    /// when the insert is undone. Off, upserts copy no extra row.
    public var keepsReplacedRows = false

    public init() {}

    public var isEmpty: Bool { inserts.isEmpty && columnInserts.isEmpty && updates.isEmpty && deletes.isEmpty }
}

/// A row of some entity: the key the commit result uses for identifiers.
public struct EntityRow: Hashable, Sendable {
    public var entity: Int
    public var id: RowID
    public init(entity: Int, id: RowID) {
        self.entity = entity
        self.id = id
    }
}

/// What a commit did.
public struct CommitResult: Sendable {
    /// The generation of the version the commit published.
    public var generation: UInt64
    /// Permanent identifiers for the temporary ones of the change set.
    public var assigned: AssignedRows
    /// Temporary rows whose unique key already existed: they updated that row (upsert).
    public var upserted: Set<EntityRow>
    /// The stored row each upsert replaced, by temporary row, when the change set
    /// asked for them (`ChangeSet.keepsReplacedRows`).
    public var replacedRows: [EntityRow: Row] = [:]
    public var inserted: EntityRows
    public var updated: [EntityRow]
    public var deleted: [EntityRow]
    /// Every row the commit wrote, including the inverse references an upsert
    /// dropped from rows it did not insert or update: what the journal records.
    public var written: EntityRows
    /// The version the commit published (later commits may have published others
    /// since): what the committed models' values are read from.
    public var version: StoreVersion?
}

/// A to-many list merged as Core Data merges one: the saver's list (`mine`) when the
/// stored list is still what it read (a reorder stays); otherwise the stored list with
/// what the saver removed since `read` taken out and what it added appended, in its
/// order (rows listed already stay where they are). Every store merges with it: the
/// engine over rows, PostgresStore and `DefaultStore` over identifiers.
/// - Complexity: O(read + mine + stored)
public func mergedList<Element: Hashable>(read: [Element], mine: [Element], stored: [Element]) -> [Element] {
    if stored == read { return mine }
    let before = Set(read), after = Set(mine)
    var list = stored.filter { !before.contains($0) || after.contains($0) }
    var listed = Set(list)
    for element in mine where !before.contains(element) && listed.insert(element).inserted { list.append(element) }
    return list
}
