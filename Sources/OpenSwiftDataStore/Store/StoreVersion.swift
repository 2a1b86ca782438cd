/// One published, immutable state of the whole store.
///
/// Readers take a version and work on it without locks; later commits publish new
/// versions that share every unchanged chunk and index node with this one.
public struct StoreVersion: Sendable {
    /// The parts, in one object: a fetch copies its version two or three times
    /// (the store's `current`, its query, the engine's query), and a struct of the
    /// parts themselves retained and released each of their references on every
    /// copy (with the checks below, about 1,200 instructions per W2 lookup, 6 %).
    /// Mutations copy the parts first when they are shared (copy on write), so a
    /// published version never changes.
    private var parts: Parts

    private final class Parts: @unchecked Sendable {
        // Unchecked: the runtime's exclusivity check (`swift_beginAccess`, about 75
        // instructions) ran on every read of a part. Only `StoreVersion`'s accessors
        // touch them. A write (`_modify` lasts for the caller's whole mutation) goes
        // to parts no other version holds (`uniqueParts` copies shared ones), and
        // Swift still checks the access to the `StoreVersion` itself, so nothing else
        // reads those parts while it lasts.
        let schema: StoreSchema
        @exclusivity(unchecked) var generation: UInt64
        @exclusivity(unchecked) var tables: [Table]
        @exclusivity(unchecked) var orderedIndexes: [[OrderedIndex]]
        let uniqueTrees: [[Int]]
        @exclusivity(unchecked) var spatialIndexes: [[SpatialIndex]]
        @exclusivity(unchecked) var history: HistoryLog

        init(
            schema: StoreSchema, generation: UInt64, tables: [Table], orderedIndexes: [[OrderedIndex]],
            uniqueTrees: [[Int]], spatialIndexes: [[SpatialIndex]], history: HistoryLog
        ) {
            self.schema = schema
            self.generation = generation
            self.tables = tables
            self.orderedIndexes = orderedIndexes
            self.uniqueTrees = uniqueTrees
            self.spatialIndexes = spatialIndexes
            self.history = history
        }

        func copy() -> Parts {
            Parts(
                schema: schema, generation: generation, tables: tables, orderedIndexes: orderedIndexes,
                uniqueTrees: uniqueTrees, spatialIndexes: spatialIndexes, history: history)
        }
    }

    /// The parts, copied first when another version shares them.
    private var uniqueParts: Parts {
        mutating get {
            if !isKnownUniquelyReferenced(&parts) { parts = parts.copy() }
            return parts
        }
    }

    public var schema: StoreSchema { parts.schema }
    /// Increases by one with every commit.
    public internal(set) var generation: UInt64 {
        get { parts.generation }
        set { uniqueParts.generation = newValue }
    }
    public internal(set) var tables: [Table] {
        get { parts.tables }
        _modify { yield &uniqueParts.tables }
    }
    /// Per entity, one B-tree per binary `#Index` and per unique constraint
    /// (in `orderedIndexSlots` order). Unique constraints are checked in their B-tree,
    /// not in a hash index of their own, which doubled their memory and insert work.
    public internal(set) var orderedIndexes: [[OrderedIndex]] {
        get { parts.orderedIndexes }
        _modify { yield &uniqueParts.orderedIndexes }
    }
    /// Per entity, per unique constraint: the position of its B-tree in `orderedIndexes`.
    var uniqueTrees: [[Int]] { parts.uniqueTrees }
    /// Per entity, one R-tree per `.rtree` `#Index` (in declaration order), built by
    /// the first query that reads it (`SpatialIndex`).
    public internal(set) var spatialIndexes: [[SpatialIndex]] {
        get { parts.spatialIndexes }
        _modify { yield &uniqueParts.spatialIndexes }
    }
    /// The transactions of the commits that made this version, as far as
    /// `Store.deleteHistory` left them.
    public internal(set) var history: HistoryLog {
        get { parts.history }
        _modify { yield &uniqueParts.history }
    }

    init(schema: StoreSchema) {
        parts = Parts(
            schema: schema, generation: 0,
            tables: schema.entities.map { Table(entity: $0) },
            orderedIndexes: schema.entities.map { entity in entity.orderedIndexSlots.map { OrderedIndex(slots: $0, of: entity) } },
            uniqueTrees: schema.entities.map { entity in
                let ordered = entity.orderedIndexSlots
                return entity.uniqueness.map { ordered.firstIndex(of: $0)! }
            },
            spatialIndexes: schema.entities.map { entity in entity.spatialIndexSlots.map { SpatialIndex(slots: $0) } },
            history: HistoryLog())
    }

    /// A version holding `tables`, with every index built from them in bulk: how
    /// documents load and imports rebuild. Rows must not share a unique key.
    /// - Complexity: O(n log n) in the number of rows.
    public init(schema: StoreSchema, tables: [Table], generation: UInt64) {
        self.init(
            schema: schema, tables: tables, generation: generation,
            orderedIndexes: schema.entities.enumerated().map { e, entity in
                entity.orderedIndexSlots.map { OrderedIndex(slots: $0, of: entity, table: tables[e]) }
            })
    }

    /// A version holding `tables` and their `orderedIndexes` (per entity, in
    /// `orderedIndexSlots` order), built by the caller.
    init(schema: StoreSchema, tables: [Table], generation: UInt64, orderedIndexes: [[OrderedIndex]]) {
        self.init(schema: schema)
        self.tables = tables
        self.generation = generation
        self.orderedIndexes = orderedIndexes
    }

    /// The row `id` of entity `entity`.
    /// - Complexity: O(1)
    public func row(_ id: RowID, of entity: Int) -> Row? { tables[entity][id] }

    /// The row that holds `key` under unique constraint `constraint` of `entity`.
    /// Keys are equal as `Value`s are (`==`), not merely tied in index order.
    /// - Complexity: O(log n)
    public func lookup(unique key: [Value], constraint: Int, of entity: Int) -> RowID? {
        guard !key.isEmpty else { return nil }
        return holder(of: IndexKey(key), constraint: constraint, of: entity, excluding: nil)
    }

    /// The row that holds `key` under unique constraint `constraint` of `entity`,
    /// a constraint on one attribute: `lookup(unique: [key], …)` without the array,
    /// and with the index read in place (a copy of it retained its trees).
    /// - Complexity: O(log n)
    public func lookup(unique key: Value, constraint: Int, of entity: Int) -> RowID? {
        assert(schema.entities[entity].uniqueness[constraint].count == 1, "a compound constraint's key has several values")
        guard !key.isNull else { return nil }
        var found: RowID?
        let tree = parts.uniqueTrees[entity][constraint]
        parts.orderedIndexes[entity].withUnsafeBufferPointer { indexes in
            OrderedIndex.forEachRow(equalTo: IndexKey(key), in: indexes.baseAddress! + tree) { row in
                found = row
                return false
            }
        }
        return found
    }

    /// What `row(exactKeyOf:_:of:)` found.
    public enum ExactKeyMatch: Equatable {
        /// The row that holds the key.
        case row(RowID)
        /// No row holds it.
        case absent
    }

    /// The row of `entity` that holds the one exact unique key `plan` looks up
    /// (`QueryPlan.exactUniqueKey`) with `parameters`; nil when `plan` does not look
    /// one exact key up. A key lookup in a loop (`ModelContext.keyMatch`, W2) asks:
    /// read here, the table is not copied out of the version (each copy retained
    /// and released its arrays: about 450 instructions a lookup).
    /// - Complexity: O(log n)
    public func row(exactKeyOf plan: QueryPlan, _ parameters: [Value], of entity: Int) -> ExactKeyMatch? {
        guard let (constraint, key) = plan.exactUniqueKey(parameters, kinds: parts.tables[entity].kinds) else { return nil }
        guard let id = lookup(unique: key, constraint: constraint, of: entity), parts.tables[entity].contains(id) else {
            return .absent
        }
        return .row(id)
    }

    /// The first row other than `excluded` whose key under unique constraint
    /// `constraint` equals `key` (one at most in a published version). A key with a
    /// nil part names none (like SQL, several rows may leave a unique attribute unset).
    /// - Complexity: O(log n)
    private func holder(of key: IndexKey, constraint: Int, of entity: Int, excluding excluded: RowID?) -> RowID? {
        guard !key.head.isNull, !key.tail.contains(where: \.isNull) else { return nil }
        var found: RowID?
        let tree = parts.uniqueTrees[entity][constraint]
        parts.orderedIndexes[entity].withUnsafeBufferPointer { indexes in
            OrderedIndex.forEachRow(equalTo: key, in: indexes.baseAddress! + tree) { row in
                guard row != excluded else { return true }
                found = row
                return false
            }
        }
        return found
    }

    /// The first unique constraint of `entity` whose key `row` already holds, other than `id`.
    /// - Complexity: O(constraints × log n)
    func conflict(for row: Row, entity: Int, excluding id: RowID?) -> (constraint: Int, key: [Value], row: RowID)? {
        for (c, slots) in schema.entities[entity].uniqueness.enumerated() {
            let key = IndexKey(of: row, slots: slots)
            guard let other = holder(of: key, constraint: c, of: entity, excluding: id) else { continue }
            return (c, key.values, other)
        }
        return nil
    }

    mutating func write(_ row: Row, at id: RowID, of entity: Int) {
        guard let old = tables[entity][id] else { return }
        for i in orderedIndexes[entity].indices where orderedIndexes[entity][i].key(of: old) != orderedIndexes[entity][i].key(of: row) {
            orderedIndexes[entity][i].remove(old, at: id)
            orderedIndexes[entity][i].add(row, at: id)
        }
        for i in spatialIndexes[entity].indices where !spatialIndexes[entity][i].samePoint(old, row) {
            spatialIndexes[entity][i].remove(old, at: id)
            spatialIndexes[entity][i].add(row, at: id)
        }
        tables[entity].update(id, to: row)
    }

    /// Drops the built R-trees a commit of `changes` would change more than
    /// rebuild: when it inserts, or moves, more rows of the entity than half the tree
    /// holds (at least 1,000), the next query packs the tree again in bulk, faster
    /// than the changes one by one and into fuller nodes. Updates of other
    /// attributes do not count.
    /// - Complexity: O(changes × R-tree indexes)
    mutating func prepareSpatialIndexes(for changes: ChangeSet, counted census: ChangeCensus) {
        // Only a built tree is changed commit by commit (most are never built).
        for e in spatialIndexes.indices where spatialIndexes[e].contains(where: \.isBuilt) {
            let inserted = census.inserts(of: e)
            for i in spatialIndexes[e].indices {
                let slots = spatialIndexes[e][i].slots
                var written = inserted
                for update in changes.updates where update.entity == e && slots.contains(where: { update.values[$0] != nil }) {
                    written += 1
                }
                guard written >= 1_000 else { continue }
                spatialIndexes[e][i].discardTree(ifSmallerThan: 2 * written)
            }
        }
    }

    mutating func insert(_ row: Row, of entity: Int) -> RowID {
        let id = tables[entity].insert(row)
        for i in orderedIndexes[entity].indices { orderedIndexes[entity][i].add(row, at: id) }
        for i in spatialIndexes[entity].indices { spatialIndexes[entity][i].add(row, at: id) }
        return id
    }

    /// The slots `entity`'s indexes key on, which removing a row reads.
    func indexedSlots(of entity: Int) -> [Int] {
        var slots: [Int] = []
        for index in orderedIndexes[entity] { slots.append(contentsOf: index.slots) }
        for index in spatialIndexes[entity] { slots.append(contentsOf: index.slots) }
        return slots
    }

    /// Removes row `id` of `entity` and its index entries; false when there is none.
    /// `keyed` is `indexedSlots(of: entity)`, found once per commit.
    ///
    /// Only those slots are read (the rest of the row stays `.null`): reading whole
    /// rows cost about 1,100 instructions per deleted row (W6 delete).
    mutating func remove(_ id: RowID, of entity: Int, keyed: [Int]) -> Bool {
        guard !keyed.isEmpty else { return tables[entity].delete(id) }
        guard let old = tables[entity].row(id, reading: keyed) else { return false }
        tables[entity].delete(id)
        for i in orderedIndexes[entity].indices { orderedIndexes[entity][i].remove(old, at: id) }
        for i in spatialIndexes[entity].indices { spatialIndexes[entity][i].remove(old, at: id) }
        return true
    }
}
