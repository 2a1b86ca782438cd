import OpenSwiftDataStore
import Testing

/// The R-tree against brute force: random and clustered points, bulk built and
/// grown one by one, with removals, shared copies and nearest-first walks; the
/// tree's invariants checked after every batch of changes.
@Suite struct RTreeTests {
    /// A point set of `dimensions` coordinates each, with the rows they belong to.
    struct Points {
        var dimensions: Int
        var coordinates: [[Double]] = []
        var rows: [RowID] = []

        var flat: [Double] { coordinates.flatMap { $0 } }

        func inside(_ lower: [Double], _ upper: [Double]) -> Set<RowID> {
            Set(zip(coordinates, rows).filter { point, _ in
                (0..<dimensions).allSatisfy { lower[$0] <= point[$0] && point[$0] <= upper[$0] }
            }.map(\.1))
        }
    }

    /// Uniform points, or points in a few tight clusters with exact duplicates.
    static func points(_ n: Int, dimensions: Int = 2, clustered: Bool, seed: UInt64) -> Points {
        var random = SplitMix(seed: seed)
        var points = Points(dimensions: dimensions)
        let centres = (0..<5).map { _ in (0..<dimensions).map { _ in Double.random(in: -100...100, using: &random) } }
        for i in 0..<n {
            let point: [Double]
            if clustered {
                let centre = centres[i % centres.count]
                point = i % 7 == 0 ? centre : centre.map { $0 + Double.random(in: -0.5...0.5, using: &random) }
            } else {
                point = (0..<dimensions).map { _ in Double.random(in: -100...100, using: &random) }
            }
            points.coordinates.append(point)
            points.rows.append(RowID(Int64(i + 1)))
        }
        return points
    }

    static func window(_ dimensions: Int, using random: inout SplitMix) -> ([Double], [Double]) {
        var lower: [Double] = [], upper: [Double] = []
        for _ in 0..<dimensions {
            let a = Double.random(in: -110...110, using: &random), width = Double.random(in: 0...40, using: &random)
            lower.append(a)
            upper.append(a + width)
        }
        return (lower, upper)
    }

    static func found(_ tree: RTree, _ lower: [Double], _ upper: [Double]) -> Set<RowID> {
        var rows = Set<RowID>()
        tree.search(lower: lower, upper: upper) { row in
            #expect(rows.insert(row).inserted, "row \(row) found twice")
            return true
        }
        return rows
    }

    @Test(arguments: [(2, false), (2, true), (3, false), (1, true)])
    func windowsFindWhatABruteForceFinds(dimensions: Int, clustered: Bool) {
        let points = Self.points(3_000, dimensions: dimensions, clustered: clustered, seed: 7)
        let bulk = RTree(dimensions: dimensions, points: points.flat, rows: points.rows)
        bulk._checkInvariants()
        #expect(bulk.count == 3_000)
        var grown = RTree(dimensions: dimensions)
        for (point, row) in zip(points.coordinates, points.rows) { grown.insert(point, row: row) }
        grown._checkInvariants()
        var random = SplitMix(seed: 11)
        for _ in 0..<200 {
            let (lower, upper) = Self.window(dimensions, using: &random)
            let expected = points.inside(lower, upper)
            #expect(Self.found(bulk, lower, upper) == expected)
            #expect(Self.found(grown, lower, upper) == expected)
        }
        // A window around one cluster's exact centre finds every duplicate there.
        let centre = points.coordinates[0]
        #expect(Self.found(bulk, centre, centre) == points.inside(centre, centre))
        if clustered { #expect(Self.found(bulk, centre, centre).count >= 3_000 / 7 / 5) }
    }

    @Test func removalsAndInsertsKeepAnswersAndInvariants() {
        var points = Self.points(2_000, clustered: true, seed: 3)
        var tree = RTree(dimensions: 2, points: points.flat, rows: points.rows)
        var random = SplitMix(seed: 5)
        var nextRow: Int64 = 2_001
        for round in 0..<20 {
            // Remove a random tenth, move some, add new ones.
            for _ in 0..<100 where !points.rows.isEmpty {
                let i = Int.random(in: 0..<points.rows.count, using: &random)
                let removed = tree.remove(points.coordinates[i], row: points.rows[i])
                #expect(removed)
                points.coordinates.remove(at: i)
                points.rows.remove(at: i)
            }
            for _ in 0..<30 where !points.rows.isEmpty {
                let i = Int.random(in: 0..<points.rows.count, using: &random)
                let moved = [Double.random(in: -100...100, using: &random), Double.random(in: -100...100, using: &random)]
                let removed = tree.remove(points.coordinates[i], row: points.rows[i])
                #expect(removed)
                tree.insert(moved, row: points.rows[i])
                points.coordinates[i] = moved
            }
            for _ in 0..<(round.isMultiple(of: 2) ? 40 : 120) {
                let point = [Double.random(in: -100...100, using: &random), Double.random(in: -100...100, using: &random)]
                tree.insert(point, row: RowID(nextRow))
                points.coordinates.append(point)
                points.rows.append(RowID(nextRow))
                nextRow += 1
            }
            tree._checkInvariants()
            #expect(tree.count == points.rows.count)
            for _ in 0..<20 {
                let (lower, upper) = Self.window(2, using: &random)
                #expect(Self.found(tree, lower, upper) == points.inside(lower, upper))
            }
        }
        // A point not in the tree, or a row at another point, is not removed.
        let farAway = tree.remove([1_000, 1_000], row: points.rows[0])
        #expect(!farAway)
        let otherRow = tree.remove(points.coordinates[0], row: RowID(-1))
        #expect(!otherRow)
        // Emptied, the tree is an empty leaf again.
        for (point, row) in zip(points.coordinates, points.rows) {
            let removed = tree.remove(point, row: row)
            #expect(removed)
        }
        tree._checkInvariants()
        #expect(tree.count == 0)
        #expect(Self.found(tree, [-.infinity, -.infinity], [.infinity, .infinity]).isEmpty)
    }

    @Test func aCopySharesNodesAndNeverSeesTheOthersChanges() {
        let points = Self.points(1_000, clustered: false, seed: 9)
        let original = RTree(dimensions: 2, points: points.flat, rows: points.rows)
        var changed = original
        for i in 0..<500 { changed.remove(points.coordinates[i], row: points.rows[i]) }
        changed.insert([0, 0], row: RowID(5_000))
        original._checkInvariants()
        changed._checkInvariants()
        let everywhere = ([-Double.infinity, -.infinity], [Double.infinity, .infinity])
        #expect(Self.found(original, everywhere.0, everywhere.1) == Set(points.rows))
        #expect(Self.found(changed, everywhere.0, everywhere.1) == Set(points.rows[500...]).union([RowID(5_000)]))
    }

    @Test func aBulkBuildPacksItsNodes() {
        let points = Self.points(100_000, clustered: false, seed: 1)
        let tree = RTree(dimensions: 2, points: points.flat, rows: points.rows)
        tree._checkInvariants()
        // 28 entries a node: 3,572 leaves, 128 nodes above them, 5, then the root.
        #expect(tree._height == 4)
    }

    @Test func nearestFirstIsInDistanceOrder() {
        let points = Self.points(2_000, clustered: true, seed: 4)
        let tree = RTree(dimensions: 2, points: points.flat, rows: points.rows)
        var random = SplitMix(seed: 8)
        for _ in 0..<50 {
            let target = [Double.random(in: -120...120, using: &random), Double.random(in: -120...120, using: &random)]
            func distance(_ p: UnsafeBufferPointer<Double>) -> Double {
                let dx = p[0] - target[0], dy = p[1] - target[1]
                return (dx * dx + dy * dy).squareRoot()
            }
            func lowerBound(_ box: UnsafeBufferPointer<Double>) -> Double {
                let b = Array(box)
                let dx = max(b[0] - target[0], 0, target[0] - b[2]), dy = max(b[1] - target[1], 0, target[1] - b[3])
                return (dx * dx + dy * dy).squareRoot()
            }
            var walked: [(RowID, Double)] = []
            tree.forEachNearest(distance: distance, lowerBound: lowerBound) { row, d in
                walked.append((row, d))
                return walked.count < 10
            }
            let expected = zip(points.rows, points.coordinates.map { $0.withUnsafeBufferPointer(distance) }).sorted { $0.1 < $1.1 }.prefix(10)
            #expect(walked.map(\.1) == expected.map(\.1))
            #expect(zip(walked, walked.dropFirst()).allSatisfy { $0.1 <= $1.1 })
        }
    }
}

/// The R-tree inside store versions: built by a query, kept by commits (moves,
/// deletes, rows without a point), rebuilt after a large commit, and never
/// changed under a version published earlier.
@Suite struct SpatialIndexStoreTests {
    /// Place(x: Double, y: Int, label: String?) with an R-tree over (x, y).
    static let schema = StoreSchema(entities: [
        EntityDescription(
            name: "Place",
            attributes: [
                AttributeDescription(name: "x", type: .double, isOptional: false),
                AttributeDescription(name: "y", type: .int(bits: 64), isOptional: false),
                AttributeDescription(name: "label", type: .string, isOptional: true),
            ],
            relationships: [],
            indices: [IndexDescription(kind: .rtree, slots: [0, 1])]),
    ])

    /// The rows of `version` inside the window, by the tree and by the table.
    static func window(_ version: StoreVersion, _ lower: [Double], _ upper: [Double]) -> (tree: Set<RowID>, table: Set<RowID>) {
        var tree = Set<RowID>()
        version.spatialIndexes[0][0].tree(over: version.tables[0]).search(lower: lower, upper: upper) { tree.insert($0).inserted }
        var table = Set<RowID>()
        version.tables[0].forEach { id, row in
            guard case let .double(x) = row[0], case let .int(y) = row[1] else { return }
            if lower[0] <= x, x <= upper[0], lower[1] <= Double(y), Double(y) <= upper[1] { table.insert(id) }
        }
        return (tree, table)
    }

    /// A bulk insert, of rows or of a table's columns, gives the new version a tree
    /// state of its own: a reader of the previous version that builds its tree later
    /// does not build it into the new one.
    @Test(arguments: [false, true])
    func aBulkInsertSharesNoUnbuiltTreeWithTheVersionBefore(asColumns: Bool) throws {
        let store = Store(schema: Self.schema)
        var first = ChangeSet()
        for i in 0..<10 { first.inserts.append(.init(entity: 0, temporaryID: RowID(Int64(-1 - i)), row: [.double(Double(i)), .int(0), .null])) }
        _ = try store.commit(first)
        let old = store.current
        var bulk = ChangeSet()
        let rows: [Row] = (0..<2_000).map { [.double(Double($0 % 50)), .int(Int64($0 % 40)), .null] }
        let temporary = rows.indices.map { RowID(Int64(-1 - $0)) }
        if asColumns {
            var table = Table(entity: Self.schema.entities[0])
            table.insert(contentsOf: rows)
            bulk.columnInserts = [ChangeSet.ColumnInsert(entity: 0, table: table, temporaryIDs: temporary)]
        } else {
            for (k, row) in rows.enumerated() { bulk.inserts.append(.init(entity: 0, temporaryID: temporary[k], row: row)) }
        }
        _ = try store.commit(bulk)
        let new = store.current
        // The old version's tree is built after the commit.
        #expect(Self.window(old, [-1, -1], [100, 100]).tree.count == 10)
        let found = Self.window(new, [-1, -1], [100, 100])
        #expect(found.tree.count == 2_010)
        #expect(found.tree == found.table)
        new._checkInvariants()
    }

    @Test func commitsKeepABuiltTreeAndEarlierVersionsKeepTheirs() throws {
        let store = Store(schema: Self.schema)
        var random = SplitMix(seed: 21)
        var ids: [RowID] = []
        func point() -> Row {
            // Now and then NaN: such a row is not in the tree.
            let x = Int.random(in: 0..<25, using: &random) == 0 ? Double.nan : Double.random(in: -50...50, using: &random)
            return [.double(x), .int(Int64.random(in: -50...50, using: &random)), .null]
        }
        var earlier: [(StoreVersion, [Double], [Double], Set<RowID>)] = []
        for round in 0..<30 {
            var changes = ChangeSet()
            // Round 10 inserts more than half the tree holds: the tree is rebuilt.
            let inserts = round == 10 ? 3_000 : 60
            for i in 0..<inserts { changes.inserts.append(.init(entity: 0, temporaryID: RowID(Int64(-1 - i)), row: point())) }
            for _ in 0..<20 where !ids.isEmpty {
                let id = ids[Int.random(in: 0..<ids.count, using: &random)]
                let moved = point()
                changes.updates.append(.init(entity: 0, id: id, values: round.isMultiple(of: 3) ? [2: .string("relabelled")] : [0: moved[0], 1: moved[1]]))
            }
            for _ in 0..<10 where ids.count > 20 {
                changes.deletes.append(.init(entity: 0, id: ids.remove(at: Int.random(in: 0..<ids.count, using: &random))))
            }
            let result = try store.commit(changes)
            ids += changes.inserts.compactMap { result.assigned[EntityRow(entity: 0, id: $0.temporaryID)] }
            ids = ids.filter { !changes.deletes.map(\.id).contains($0) }
            let version = store.current
            if round == 10 {
                // More inserts than half the tree (built in round 8) holds: dropped, and
                // the next query packs it again. Elsewhere a built tree is kept.
                #expect(!version.spatialIndexes[0][0].isBuilt)
            } else if round == 9 {
                #expect(version.spatialIndexes[0][0].isBuilt)
            }
            if round.isMultiple(of: 2) || round == 11 {
                // A query builds (or rebuilds) the tree; later commits maintain it.
                _ = version.spatialIndexes[0][0].tree(over: version.tables[0])
            }
            version._checkInvariants()
            let lower = [Double.random(in: -60...30, using: &random), Double.random(in: -60...30, using: &random)]
            let upper = [lower[0] + 30, lower[1] + 30]
            let found = Self.window(version, lower, upper)
            #expect(found.tree == found.table)
            earlier.append((version, lower, upper, found.tree))
        }
        // Every earlier version still answers as it did.
        for (version, lower, upper, answer) in earlier {
            #expect(Self.window(version, lower, upper).tree == answer)
            version._checkInvariants()
        }
    }
}
