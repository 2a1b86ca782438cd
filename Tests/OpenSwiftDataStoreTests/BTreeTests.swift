import Foundation
import OpenSwiftDataStore
import Testing

/// The B-tree against a sorted array, on randomized operations with fixed seeds.
@Suite struct BTreeTests {
    typealias Model = [(key: [Value], row: RowID)]

    static func sorted(_ model: Model) -> Model {
        model.sorted { a, b in
            for (x, y) in zip(a.key, b.key) where x != y { return x < y }
            return a.row < b.row
        }
    }

    static func entries(_ tree: BTree<IndexKey>, from lower: IndexBound? = nil, to upper: IndexBound? = nil, reverse: Bool = false) -> Model {
        var out: Model = []
        tree.scan(from: lower, to: upper, reverse: reverse) { out.append(($0.key.values, $0.row)); return true }
        return out
    }

    static func matches(_ key: [Value], _ bound: IndexBound, above: Bool) -> Bool {
        for (i, part) in bound.prefix.enumerated() {
            if key[i] == part { continue }
            return above ? part < key[i] : key[i] < part
        }
        return bound.inclusive
    }

    @Test(arguments: [1, 2, 3, 4])
    func randomizedInsertsRemovesAndScans(seed: UInt64) {
        var rng = SplitMix(seed: seed)
        var tree = BTree<IndexKey>()
        var model: Model = []
        var nextRow: Int64 = 1
        for step in 0..<6_000 {
            if model.isEmpty || Int.random(in: 0..<3, using: &rng) > 0 {
                let key: [Value] = [.int(Int64.random(in: 0..<200, using: &rng)), .string(["a", "b", "c"].randomElement(using: &rng)!)]
                tree.insert(key, row: RowID(nextRow))
                model.append((key, RowID(nextRow)))
                nextRow += 1
            } else {
                let victim = model.remove(at: Int.random(in: 0..<model.count, using: &rng))
                tree.remove(victim.key, row: victim.row)
            }
            if step % 500 == 0 {
                tree._checkInvariants()
                let expected = Self.sorted(model)
                let all = Self.entries(tree)
                #expect(all.map(\.row) == expected.map(\.row))
                #expect(tree.count == model.count)
            }
        }
        let expected = Self.sorted(model)
        #expect(Self.entries(tree, reverse: true).map(\.row) == expected.reversed().map(\.row))
        for _ in 0..<300 {
            let a = Int64.random(in: -5..<205, using: &rng), b = Int64.random(in: -5..<205, using: &rng)
            let lowerPrefix: [Value] = Bool.random(using: &rng) ? [.int(min(a, b))] : [.int(min(a, b)), .string("b")]
            let lower = IndexBound(lowerPrefix, inclusive: Bool.random(using: &rng))
            let upper = IndexBound([.int(max(a, b))], inclusive: Bool.random(using: &rng))
            let useLower = Bool.random(using: &rng), useUpper = Bool.random(using: &rng)
            let want = expected.filter {
                (!useLower || Self.matches($0.key, lower, above: true)) && (!useUpper || Self.matches($0.key, upper, above: false))
            }
            let forward = Self.entries(tree, from: useLower ? lower : nil, to: useUpper ? upper : nil)
            let backward = Self.entries(tree, from: useLower ? lower : nil, to: useUpper ? upper : nil, reverse: true)
            #expect(forward.map(\.row) == want.map(\.row), "lower \(lower) upper \(upper)")
            #expect(backward.map(\.row) == want.reversed().map(\.row))
            let cap = Int.random(in: 1...(want.count + 3), using: &rng)
            let counted = tree.count(from: useLower ? lower : nil, to: useUpper ? upper : nil, cap: cap)
            #expect(want.count < cap ? counted == want.count : counted >= cap && counted <= want.count, "cap \(cap) of \(want.count)")
        }
    }

    /// The tied-key walk behind unique checks, against a filter of the model: runs
    /// of one key far longer than a leaf (so they straddle leaves and internal nodes),
    /// keys absent from the tree, and stopping early.
    @Test func tiedEntriesAreVisitedInRowOrderAcrossLeaves() {
        var rng = SplitMix(seed: 21)
        var tree = BTree<IndexKey>()
        var model: Model = []
        for row in 1...4_000 {
            // Key 7 is a quarter of the rows; the others are spread over 0..<60 in steps of 2.
            let key: [Value] = [.int(row % 4 == 0 ? 7 : 2 * Int64.random(in: 0..<30, using: &rng))]
            tree.insert(key, row: RowID(Int64(row)))
            model.append((key, RowID(Int64(row))))
        }
        for probe in [Int64(-1), 0, 7, 8, 31, 58, 59, 100] {
            var visited: [RowID] = []
            tree.forEachEntry(tiedWith: IndexKey(.int(probe))) { entry in
                #expect(entry.key == IndexKey(.int(probe)))
                visited.append(entry.row)
                return true
            }
            let expected = Self.sorted(model.filter { $0.key == [.int(probe)] }).map(\.row)
            #expect(visited == expected, "key \(probe)")
        }
        var firstThree: [RowID] = []
        tree.forEachEntry(tiedWith: IndexKey(.int(7))) { firstThree.append($0.row); return firstThree.count < 3 }
        #expect(firstThree == [RowID(4), RowID(8), RowID(12)])
    }

    /// Leaves built in bulk over few distinct keys hold them once a run. Inserts (into
    /// runs, between runs, re-inserts of lower rows), removals (down to empty runs and
    /// leaves), splits, scans both ways and tied walks keep the model's order.
    @Test(arguments: [5, 6, 7] as [UInt64])
    func fewDistinctKeysBuiltInBulkThenChanged(seed: UInt64) {
        typealias Entry = (key: Int64, row: RowID)
        func sorted(_ model: [Entry]) -> [Entry] { model.sorted { $0.key != $1.key ? $0.key < $1.key : $0.row < $1.row } }
        func rows(_ tree: BTree<RunKey>, from lower: BTree<RunKey>.Bound? = nil, to upper: BTree<RunKey>.Bound? = nil,
                  reverse: Bool = false) -> [RowID] {
            var out: [RowID] = []
            tree.scan(from: lower, to: upper, reverse: reverse) { out.append($0.row); return true }
            return out
        }
        var rng = SplitMix(seed: seed)
        var model: [Entry] = []
        // Runs far longer than a leaf (12 keys over 3,000 rows), then runs of one or two.
        for row in 1...3_000 { model.append((10 * Int64.random(in: 0..<12, using: &rng), RowID(Int64(row)))) }
        for row in 3_001...3_400 { model.append((Int64.random(in: 1_000..<1_300, using: &rng), RowID(Int64(row)))) }
        var tree = BTree(sorted: sorted(model).map { BTree<RunKey>.Entry(key: RunKey(value: $0.key), row: $0.row) })
        tree._checkInvariants()
        #expect(tree._leafKeyCount < 600, "runs of equal keys are held once a leaf")
        #expect(rows(tree) == sorted(model).map(\.row))
        var removed: [Entry] = []
        var nextRow: Int64 = 3_401
        for step in 0..<4_000 {
            switch Int.random(in: 0..<5, using: &rng) {
            case 0, 1:
                let key = [
                    10 * Int64.random(in: 0..<12, using: &rng), Int64.random(in: -5..<125, using: &rng),
                    Int64.random(in: 1_000..<1_300, using: &rng),
                ].randomElement(using: &rng)!
                tree.insert(RunKey(value: key), row: RowID(nextRow))
                model.append((key, RowID(nextRow)))
                nextRow += 1
            case 2 where !removed.isEmpty:
                let back = removed.remove(at: Int.random(in: 0..<removed.count, using: &rng))
                tree.insert(RunKey(value: back.key), row: back.row)
                model.append(back)
            default:
                guard !model.isEmpty else { continue }
                let victim = model.remove(at: Int.random(in: 0..<model.count, using: &rng))
                tree.remove(RunKey(value: victim.key), row: victim.row)
                removed.append(victim)
            }
            guard step % 200 == 0 || step == 3_999 else { continue }
            tree._checkInvariants()
            let expected = sorted(model)
            #expect(tree.count == model.count)
            #expect(rows(tree) == expected.map(\.row))
            #expect(rows(tree, reverse: true) == expected.reversed().map(\.row))
            for probe in [Int64(0), 30, 110, 5, 1_150, 2_000] {
                var visited: [RowID] = []
                tree.forEachEntry(tiedWith: RunKey(value: probe)) { entry in
                    visited.append(entry.row)
                    return true
                }
                #expect(visited == expected.filter { $0.key == probe }.map(\.row), "key \(probe)")
            }
            let a = Int64.random(in: -5..<130, using: &rng), b = Int64.random(in: -5..<1_400, using: &rng)
            let lower = BTree<RunKey>.Bound(key: RunKey(value: min(a, b)), inclusive: Bool.random(using: &rng))
            let upper = BTree<RunKey>.Bound(key: RunKey(value: max(a, b)), inclusive: Bool.random(using: &rng))
            let want = expected.filter { entry in
                (entry.key > min(a, b) || (entry.key == min(a, b) && lower.inclusive))
                    && (entry.key < max(a, b) || (entry.key == max(a, b) && upper.inclusive))
            }.map(\.row)
            #expect(rows(tree, from: lower, to: upper) == want)
            #expect(rows(tree, from: lower, to: upper, reverse: true) == want.reversed())
            // Counted a leaf's stretch at a time, runs included.
            #expect(tree.count(from: lower, to: upper) == want.count)
            #expect(tree.count(from: lower) + tree.count(to: BTree<RunKey>.Bound(key: RunKey(value: min(a, b)), inclusive: !lower.inclusive)) == tree.count)
            let cap = Int.random(in: 1...(want.count + 3), using: &rng)
            let capped = tree.count(from: lower, to: upper, cap: cap)
            #expect(want.count < cap ? capped == want.count : capped >= cap && capped <= want.count, "cap \(cap) of \(want.count)")
        }
        // Emptied entirely, key by key.
        for entry in model.shuffled(using: &rng) { tree.remove(RunKey(value: entry.key), row: entry.row) }
        tree._checkInvariants()
        #expect(tree.count == 0 && rows(tree).isEmpty)
    }

    /// General keys can tie and differ (URLs with other bases, NaNs), so their leaves
    /// never hold runs: every entry keeps its own key.
    @Test func generalKeysKeepAKeyPerEntry() throws {
        let base = try #require(URL(string: "https://example.com/"))
        let relative = try #require(URL(string: "a", relativeTo: base))
        let absolute = try #require(URL(string: "https://example.com/a"))
        #expect(IndexKey.compare(IndexKey(.url(relative)), IndexKey(.url(absolute))) == 0 && relative != absolute)
        let entries = (1...300).map { row in
            BTree<IndexKey>.Entry(key: IndexKey(.url(row % 2 == 0 ? relative : absolute)), row: RowID(Int64(row)))
        }
        var tree = BTree(sorted: entries)
        tree._checkInvariants()
        #expect(tree._leafKeyCount == 300)
        tree.insert(IndexKey(.url(relative)), row: RowID(301))
        var found: [IndexKey] = []
        tree.forEachEntry(tiedWith: IndexKey(.url(absolute))) { found.append($0.key); return true }
        #expect(found.count == 301)
        #expect(found.filter { $0 == IndexKey(.url(relative)) }.count == 151)
    }

    /// Leaves hold rows in 32 bits: every identifier a document can hold (1 … 2³²)
    /// fits, inserted or built in bulk.
    @Test func rowsUpToTheDocumentLimitFit() {
        let rows = [Int64(1), 2, 1 << 31, (1 << 32) - 1, 1 << 32].map(RowID.init)
        var inserted = BTree<IndexKey>()
        for row in rows.reversed() { inserted.insert([.int(7)], row: row) }
        let built = BTree(sorted: rows.map { BTree<IndexKey>.Entry(key: IndexKey(.int(7)), row: $0) })
        for tree in [inserted, built] {
            tree._checkInvariants()
            #expect(Self.entries(tree).map(\.row) == rows)
        }
        inserted.remove([.int(7)], row: RowID(1 << 32))
        #expect(Self.entries(inserted).map(\.row) == Array(rows.dropLast()))
    }

    @Test func bulkBuildMatchesIncrementalInserts() {
        var rng = SplitMix(seed: 9)
        var model: Model = []
        for row in 1...5_000 { model.append(([.double(Double.random(in: -1...1, using: &rng))], RowID(Int64(row)))) }
        let sorted = Self.sorted(model)
        var tree = BTree(sorted: sorted.map { BTree<IndexKey>.Entry(key: IndexKey($0.key), row: $0.row) })
        tree._checkInvariants()
        #expect(Self.entries(tree).map(\.row) == sorted.map(\.row))
        tree.insert([Value.double(2)], row: RowID(9_999))
        tree.remove(sorted[0].key, row: sorted[0].row)
        #expect(Self.entries(tree).count == 5_000)
        #expect(Self.entries(tree).last?.row == RowID(9_999))
        #expect(Self.entries(tree).first?.row == sorted[1].row)
    }

    /// Keys inserted in order leave full leaves behind (as a bulk build would), in
    /// trees three levels deep; keys in other orders still split in half.
    @Test func keysInOrderFillTheirLeaves() {
        var ascending = BTree<IndexKey>()
        for i in 0..<20_000 { ascending.insert([.int(Int64(i))], row: RowID(Int64(i + 1))) }
        ascending._checkInvariants()
        #expect(ascending._leafCount == (20_000 + 127) / 128, "leaves of 128 entries (`BTree.capacity`)")
        #expect(Self.entries(ascending).map(\.row) == (1...20_000).map { RowID(Int64($0)) })
        // A later insert in the middle splits a full leaf; order and counts hold.
        ascending.insert([.int(5_000)], row: RowID(40_000))
        ascending._checkInvariants()
        #expect(ascending.count == 20_001)
        var descending = BTree<IndexKey>()
        for i in (0..<20_000).reversed() { descending.insert([.int(Int64(i))], row: RowID(Int64(i + 1))) }
        descending._checkInvariants()
        #expect(Self.entries(descending).map(\.row) == (1...20_000).map { RowID(Int64($0)) })
        #expect(descending._leafCount > ascending._leafCount)
        // Keys counting down above a full last leaf land past the end of the leaf
        // before it, which is not the last: those split in half, not one leaf per key.
        var above = BTree<IndexKey>()
        for i in 0..<128 { above.insert([.int(Int64(i))], row: RowID(Int64(i + 1))) }
        for i in (1_000...2_000).reversed() { above.insert([.int(Int64(i))], row: RowID(Int64(i + 1))) }
        above._checkInvariants()
        #expect(above.count == 128 + 1_001)
        #expect(above._leafCount < 2 * (128 + 1_001) / 64)
    }

    @Test func copiesAreIndependent() {
        var original = BTree<IndexKey>()
        for i in 0..<1_000 { original.insert([.int(Int64(i))], row: RowID(Int64(i + 1))) }
        var copy = original
        for i in 0..<500 { copy.remove([.int(Int64(i))], row: RowID(Int64(i + 1))) }
        copy.insert([.int(-1)], row: RowID(5_000))
        #expect(original.count == 1_000)
        #expect(copy.count == 501)
        #expect(Self.entries(original).first?.row == RowID(1))
        #expect(Self.entries(copy).first?.row == RowID(5_000))
        var stopped: [RowID] = []
        original.scan(from: IndexBound([.int(10)], inclusive: true), to: nil) { stopped.append($0.row); return stopped.count < 3 }
        #expect(stopped == [RowID(11), RowID(12), RowID(13)])
    }

    @Test func nanSortsAboveNumbersWithoutBreakingSearch() {
        var tree = BTree<IndexKey>()
        tree.insert([.double(.nan)], row: RowID(1))
        tree.insert([.double(1)], row: RowID(2))
        tree.insert([.double(-1)], row: RowID(3))
        #expect(Self.entries(tree).map(\.row) == [RowID(3), RowID(2), RowID(1)])
        tree.remove([.double(1)], row: RowID(2))
        #expect(tree.count == 2)
    }

    /// Keys of one to three parts (one-slot keys hold their value inline) compare as
    /// their values do, part by part, and a key compares with a prefix on the
    /// prefix's parts only.
    @Test func indexKeysCompareAsTheirValues() {
        var rng = SplitMix(seed: 42)
        let parts: [Value] = [.int(1), .int(2), .double(1.5), .double(.nan), .string("a"), .string("ä"), .null, .bool(true),
                              .date(Date(timeIntervalSinceReferenceDate: 3))]
        func key() -> [Value] { (0..<Int.random(in: 1...3, using: &rng)).map { _ in parts.randomElement(using: &rng)! } }
        func reference(_ a: [Value], _ b: [Value]) -> Int {
            for (x, y) in zip(a, b) {
                if x < y { return -1 }
                if y < x { return 1 }
            }
            return 0
        }
        for _ in 0..<2_000 {
            let (a, b) = (key(), key())
            let (ka, kb) = (IndexKey(a), IndexKey(b))
            #expect(ka.count == a.count)
            #expect(IndexKey.compare(ka, kb).signum() == reference(a, b).signum(), "\(a) vs \(b)")
            #expect(IndexKey.compare(ka, prefix: b).signum() == reference(a, b).signum(), "\(a) vs prefix \(b)")
            // Equality is Value's (NaN is not equal to itself).
            #expect(ka.values.elementsEqual(a) == a.elementsEqual(a))
            #expect((ka == kb) == (a == b))
        }
        #expect(IndexKey([.int(1), .string("x")]).partsEqual(IndexKey([.int(2), .string("x")]), in: 1..<2))
        #expect(!IndexKey([.int(1), .string("x")]).partsEqual(IndexKey([.int(2), .string("x")]), in: 0..<2))
    }
}

/// A key of one integer whose ties are the same key: lets a test build leaves of runs
/// (as packed and string keys do) through the public API.
struct RunKey: BTreeKey {
    var value: Int64

    static func compare(_ a: RunKey, _ b: RunKey) -> Int { a.value == b.value ? 0 : (a.value < b.value ? -1 : 1) }

    static func compare(_ key: RunKey, prefix: [Value], decoding: Void) -> Int {
        guard let first = prefix.first else { return 0 }
        return Value.indexCompare(.int(key.value), first)
    }

    static var tiesAreInterchangeable: Bool { true }
}
