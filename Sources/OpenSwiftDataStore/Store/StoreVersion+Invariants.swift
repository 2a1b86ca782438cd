extension StoreVersion {
    /// Traps unless the version is consistent: every table's and every index's own
    /// invariants, each ordered index holding exactly one entry per row with the key
    /// that row's columns give (index ⇔ column agreement), and no two rows sharing a
    /// key of a unique constraint; and history in order, within the version's
    /// generation and schema. Tests call it after commits and reads.
    /// - Complexity: O(rows × (slots + indexes × log rows))
    public func _checkInvariants() {
        history._checkInvariants(generation: generation, schema: schema)
        for (e, table) in tables.enumerated() {
            table._checkInvariants()
            for index in orderedIndexes[e] {
                index._checkInvariants()
                precondition(index.count == table.count, "\(schema.entities[e].name) index \(index.slots) holds \(index.count) entries for \(table.count) rows")
                var expected: [RowID: IndexKey] = [:]
                expected.reserveCapacity(table.count)
                table.forEach { id, row in expected[id] = index.key(of: row) }
                // Packed keys are the attribute's own, or the index went general.
                precondition(index.layout == .general || index.layout == OrderedIndex.layout(slots: index.slots, of: schema.entities[e]),
                             "\(schema.entities[e].name) index \(index.slots): layout \(index.layout)")
                var seen = Set<RowID>()
                var previous: IndexKey?
                index.scan { entry in
                    precondition(seen.insert(entry.row).inserted, "\(schema.entities[e].name) index \(index.slots): row \(entry.row) twice")
                    // The keys read back as values are in `Value`'s order: a packing that
                    // broke it would pass the tree's own check, which compares packed keys.
                    let key = entry.key
                    if let previous {
                        precondition(IndexKey.compare(previous, key) <= 0, "\(schema.entities[e].name) index \(index.slots): \(previous) before \(key)")
                    }
                    previous = key
                    precondition(expected[entry.row] == key || key.values.contains { $0 != $0 },
                                 "\(schema.entities[e].name) index \(index.slots): row \(entry.row) indexed under \(key)")
                    return true
                }
            }
            for index in spatialIndexes[e] where index.isBuilt {
                // A built R-tree holds exactly the rows whose values there are numbers,
                // each at its own point.
                let tree = index.tree(over: table)
                tree._checkInvariants()
                var expected: [RowID: [Double]] = [:]
                table.forEach { id, row in expected[id] = index.point(of: row) }
                var found = 0
                let everywhere = [Double](repeating: .infinity, count: index.slots.count)
                tree.search(lower: everywhere.map { -$0 }, upper: everywhere) { row in
                    precondition(expected[row] != nil, "\(schema.entities[e].name) R-tree \(index.slots): row \(row) indexed without a point")
                    found += 1
                    return true
                }
                precondition(found == tree.count && found == expected.count,
                             "\(schema.entities[e].name) R-tree \(index.slots): \(found) points for \(expected.count) rows with one")
                for (id, point) in expected {
                    var hit = false
                    tree.search(lower: point, upper: point) { row in
                        hit = hit || row == id
                        return !hit
                    }
                    precondition(hit, "\(schema.entities[e].name) R-tree \(index.slots): row \(id) not at its point")
                }
            }
            for (c, slots) in schema.entities[e].uniqueness.enumerated() {
                var holders: [[Value]: RowID] = [:]
                table.forEach { id, row in
                    let key = slots.map { row[$0] }
                    guard !key.contains(where: \.isNull) else { return }
                    precondition(holders.updateValue(id, forKey: key) == nil,
                                 "\(schema.entities[e].name) unique constraint \(c): two rows hold \(key)")
                }
            }
        }
    }
}
