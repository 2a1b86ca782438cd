/// One published, immutable state of the whole store.
///
/// Readers take a version and work on it without locks; later commits publish new
/// versions that share every unchanged chunk and index node with this one.
public struct StoreVersion: Sendable {
    public let schema: StoreSchema
    /// Increases by one with every commit.
    public internal(set) var generation: UInt64 = 0
    public internal(set) var tables: [Table]
    /// Per entity, one index per unique constraint (in `EntityDescription.uniqueness` order).
    public internal(set) var uniqueIndexes: [[UniqueIndex]]
    /// Per entity, one B-tree per binary `#Index` and per unique constraint
    /// (in `orderedIndexSlots` order).
    public internal(set) var orderedIndexes: [[OrderedIndex]]

    init(schema: StoreSchema) {
        self.schema = schema
        self.tables = schema.entities.map { Table(entity: $0) }
        self.uniqueIndexes = schema.entities.map { entity in entity.uniqueness.map { UniqueIndex(slots: $0) } }
        self.orderedIndexes = schema.entities.map { entity in entity.orderedIndexSlots.map { OrderedIndex(slots: $0) } }
    }

    /// A version holding `tables`, with every index built from them in bulk: how
    /// documents load and imports rebuild. Rows must not share a unique key.
    /// - Complexity: O(n log n) in the number of rows.
    public init(schema: StoreSchema, tables: [Table], generation: UInt64) {
        self.init(
            schema: schema, tables: tables, generation: generation,
            orderedEntries: schema.entities.enumerated().map { e, entity in
                entity.orderedIndexSlots.map { IndexOrder.sorted(tables[e], slots: $0) }
            })
    }

    /// A version holding `tables`, whose ordered indexes hold `orderedEntries`
    /// (per entity, per index in `orderedIndexSlots` order, already in index order).
    /// - Complexity: O(n) for the ordered indexes, plus the unique indexes' inserts.
    init(schema: StoreSchema, tables: [Table], generation: UInt64, orderedEntries: [[[BTree.Entry]]]) {
        self.init(schema: schema)
        self.tables = tables
        self.generation = generation
        for (e, table) in tables.enumerated() {
            if !uniqueIndexes[e].isEmpty {
                var unique = uniqueIndexes[e]
                table.forEach { id, row in
                    for c in unique.indices { unique[c].add(row, at: id) }
                }
                uniqueIndexes[e] = unique
            }
            for i in orderedIndexes[e].indices {
                orderedIndexes[e][i] = OrderedIndex(slots: orderedIndexes[e][i].slots, sorted: orderedEntries[e][i])
            }
        }
    }

    /// The row `id` of entity `entity`.
    /// - Complexity: O(1)
    public func row(_ id: RowID, of entity: Int) -> Row? { tables[entity][id] }

    /// The row that holds `key` under unique constraint `constraint` of `entity`.
    /// - Complexity: expected O(1)
    public func lookup(unique key: [Value], constraint: Int, of entity: Int) -> RowID? {
        uniqueIndexes[entity][constraint].lookup(key)
    }

    /// The first unique constraint of `entity` whose key `row` already holds, other than `id`.
    func conflict(for row: Row, entity: Int, excluding id: RowID?) -> (constraint: Int, key: [Value], row: RowID)? {
        for (c, index) in uniqueIndexes[entity].enumerated() {
            guard let key = index.key(of: row), let other = index.lookup(key), other != id else { continue }
            return (c, key, other)
        }
        return nil
    }

    mutating func write(_ row: Row, at id: RowID, of entity: Int) {
        if let old = tables[entity][id] {
            for c in uniqueIndexes[entity].indices { uniqueIndexes[entity][c].remove(old, at: id) }
            for i in orderedIndexes[entity].indices where orderedIndexes[entity][i].key(of: old) != orderedIndexes[entity][i].key(of: row) {
                orderedIndexes[entity][i].remove(old, at: id)
                orderedIndexes[entity][i].add(row, at: id)
            }
            tables[entity].update(id, to: row)
        }
        for c in uniqueIndexes[entity].indices { uniqueIndexes[entity][c].add(row, at: id) }
    }

    mutating func insert(_ row: Row, of entity: Int) -> RowID {
        let id = tables[entity].insert(row)
        for c in uniqueIndexes[entity].indices { uniqueIndexes[entity][c].add(row, at: id) }
        for i in orderedIndexes[entity].indices { orderedIndexes[entity][i].add(row, at: id) }
        return id
    }

    mutating func remove(_ id: RowID, of entity: Int) -> Bool {
        guard let old = tables[entity].remove(id) else { return false }
        for c in uniqueIndexes[entity].indices { uniqueIndexes[entity][c].remove(old, at: id) }
        for i in orderedIndexes[entity].indices { orderedIndexes[entity][i].remove(old, at: id) }
        return true
    }
}
