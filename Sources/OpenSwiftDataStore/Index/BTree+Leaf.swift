/// A leaf's entries, in one of two forms.
///
/// - **One key per entry** (`runEnds` empty): `keys[i]` and `rows[i]` are entry `i`.
/// - **Runs of equal keys** (`runEnds` not empty): run `r` holds the entries from
///   `runStart(r)` to `runEnds[r]`, all with key `keys[r]`; adjacent runs' keys differ.
///   An index over a column of few distinct values (a city, a status) holds most of
///   its keys once per leaf: about 4 bytes an entry, where a string key each took 20
///   (Postgres's B-tree deduplication does the same).
///
/// Only keys whose ties are interchangeable take runs (`BTreeKey.tiesAreInterchangeable`:
/// packed keys and strings, not general keys). A leaf built from sorted entries
/// (`init(leafOf:)`, bulk builds and merges) takes runs when they hold the entries in
/// fewer bytes; inserts and removals keep the form, and a split keeps it unless a
/// half holds its entries in fewer bytes a key each.
extension BTree.Node {
    typealias Entry = BTree.Entry

    /// A leaf of `entries`, in order, in the smaller form.
    /// - Complexity: O(n)
    convenience init<Entries: Collection<Entry>>(leafOf entries: Entries) {
        let rows = entries.map { BTree.packed($0.row) }
        // Keys of a unique or nearly unique index differ from the start: when the first
        // eight do, the leaf keeps a key per entry and no other key is compared (a
        // document's open builds a million-entry name index this way).
        guard Key.tiesAreInterchangeable, Self.firstKeysTie(entries) else {
            self.init(keys: entries.map { $0.key }, rows: rows)
            return
        }
        var runKeys: [Key] = []
        var runEnds: [UInt16] = []
        // Each entry compared with its run's first, read in place.
        var runFirst = entries.startIndex
        var position = 0
        for index in entries.indices {
            if index != runFirst, Key.compare(entries[runFirst].key, entries[index].key) != 0 {
                runKeys.append(entries[runFirst].key)
                runEnds.append(UInt16(position))
                runFirst = index
            }
            position += 1
        }
        runKeys.append(entries[runFirst].key)
        runEnds.append(UInt16(position))
        guard Self.runsAreSmaller(runs: runKeys.count, entries: rows.count) else {
            self.init(keys: entries.map { $0.key }, rows: rows)
            return
        }
        self.init(keys: runKeys, rows: rows, runEnds: runEnds)
    }

    /// Whether two adjacent keys among the first eight of `entries` tie.
    private static func firstKeysTie<Entries: Collection<Entry>>(_ entries: Entries) -> Bool {
        var previous: Key?
        for entry in entries.prefix(8) {
            if let previous, Key.compare(previous, entry.key) == 0 { return true }
            previous = entry.key
        }
        return false
    }

    /// Whether `runs` runs hold `entries` entries in fewer bytes than a key each (never
    /// for keys whose ties are not interchangeable).
    @inline(__always)
    static func runsAreSmaller(runs: Int, entries: Int) -> Bool {
        let key = MemoryLayout<Key>.stride
        return Key.tiesAreInterchangeable && runs * (key + MemoryLayout<UInt16>.stride) < entries * key
    }

    /// Leaf: the number of runs (one per entry in the one-key-per-entry form).
    var runCount: Int { keys.count }

    /// Leaf: the position of run `r`'s first entry (`entryCount` for `runCount`).
    @inline(__always)
    func runStart(_ r: Int) -> Int {
        runEnds.isEmpty ? r : (r == 0 ? 0 : Int(runEnds[r - 1]))
    }

    /// Leaf: one past the position of run `r`'s last entry.
    @inline(__always)
    func runEnd(_ r: Int) -> Int {
        runEnds.isEmpty ? r + 1 : Int(runEnds[r])
    }

    /// Leaf: the run holding entry `i`.
    /// - Complexity: O(log runs)
    @inline(__always)
    func run(containing i: Int) -> Int {
        guard !runEnds.isEmpty else { return i }
        return runEnds.withUnsafeBufferPointer { ends in BTree.firstIndex(in: ends.count) { Int(ends[$0]) > i } }
    }

    /// Leaf: entry `i`.
    /// - Complexity: O(log runs)
    @inline(__always)
    func entry(at i: Int) -> Entry { Entry(key: keys[run(containing: i)], row: BTree.row(rows[i])) }

    /// Leaf: the first run whose key is at or above `key` (`runCount` if none).
    @inline(__always)
    func firstRun(atOrAbove key: Key) -> Int {
        keys.withUnsafeBufferPointer { keys in BTree.firstIndex(in: keys.count) { Key.compare(keys[$0], key) >= 0 } }
    }

    /// Leaf: the position of the first entry at or above `entry` (`entryCount` if none).
    /// - Complexity: O(log n)
    @inline(__always)
    func lowerBound(_ entry: Entry) -> Int {
        if runEnds.isEmpty {
            return keys.withUnsafeBufferPointer { keys in
                rows.withUnsafeBufferPointer { rows in
                    BTree.firstIndex(in: keys.count) { i in
                        let c = Key.compare(keys[i], entry.key)
                        return c != 0 ? c > 0 : BTree.row(rows[i]) >= entry.row
                    }
                }
            }
        }
        let r = firstRun(atOrAbove: entry.key)
        guard r < runCount, Key.compare(keys[r], entry.key) == 0 else { return runStart(r) }
        return lowerBound(row: entry.row, inRun: r)
    }

    /// Leaf: the position of the first entry of run `r` whose row is at or above `row`.
    @inline(__always)
    private func lowerBound(row: RowID, inRun r: Int) -> Int {
        let start = runStart(r), end = runEnd(r)
        return rows.withUnsafeBufferPointer { rows in
            start + BTree.firstIndex(in: end - start) { BTree.row(rows[start + $0]) >= row }
        }
    }

    /// Leaf: adds `entry`, which it does not hold; returns its position.
    /// - Complexity: O(n)
    func insertInLeaf(_ entry: Entry) -> Int {
        let row = BTree.packed(entry.row)
        if runEnds.isEmpty {
            let low = lowerBound(entry)
            keys.insert(entry.key, at: low)
            rows.insert(row, at: low)
            return low
        }
        let r = firstRun(atOrAbove: entry.key)
        let position: Int
        if r < runCount, Key.compare(keys[r], entry.key) == 0 {
            position = lowerBound(row: entry.row, inRun: r)
            rows.insert(row, at: position)
        } else {
            // A run of its own, between the runs of lower and higher keys.
            position = runStart(r)
            rows.insert(row, at: position)
            keys.insert(entry.key, at: r)
            runEnds.insert(UInt16(position), at: r)
        }
        for j in r..<runEnds.count { runEnds[j] += 1 }
        return position
    }

    /// Leaf: removes `entry`; false if it does not hold it.
    /// - Complexity: O(n)
    func removeFromLeaf(_ entry: Entry) -> Bool {
        let low = lowerBound(entry)
        guard low < entryCount, BTree.row(rows[low]) == entry.row else { return false }
        let r = run(containing: low)
        guard Key.compare(keys[r], entry.key) == 0 else { return false }
        rows.remove(at: low)
        if runEnds.isEmpty {
            keys.remove(at: low)
            return true
        }
        for j in r..<runEnds.count { runEnds[j] -= 1 }
        if Int(runEnds[r]) == runStart(r) {
            keys.remove(at: r)
            runEnds.remove(at: r)
        }
        return true
    }

    /// Leaf: keeps the entries before position `cut` and returns a leaf of the others;
    /// a run that `cut` falls in goes on in both. Each half takes the smaller form.
    /// - Complexity: O(n)
    func splitLeaf(at cut: Int) -> BTree.Node {
        if runEnds.isEmpty {
            let right = BTree.Node(keys: Array(keys[cut...]), rows: Array(rows[cut...]))
            keys = Array(keys[..<cut])
            rows = Array(rows[..<cut])
            return right
        }
        let r = run(containing: cut)
        let splitsRun = runStart(r) < cut
        let right = BTree.Node(
            keys: Array(keys[r...]), rows: Array(rows[cut...]), runEnds: runEnds[r...].map { $0 - UInt16(cut) })
        keys = Array(keys[..<(splitsRun ? r + 1 : r)])
        runEnds = Array(runEnds[..<r]) + (splitsRun ? [UInt16(cut)] : [])
        rows = Array(rows[..<cut])
        right.takeSmallerForm()
        takeSmallerForm()
        return right
    }

    /// Leaf: one key per entry again, when that takes fewer bytes than its runs.
    private func takeSmallerForm() {
        guard !runEnds.isEmpty, !Self.runsAreSmaller(runs: runCount, entries: entryCount) else { return }
        var expanded: [Key] = []
        expanded.reserveCapacity(entryCount)
        for r in 0..<runCount {
            for _ in runStart(r)..<runEnd(r) { expanded.append(keys[r]) }
        }
        keys = expanded
        runEnds = []
    }

    /// Leaf: calls `body` with the entries from position `start` to `end` in order, or
    /// backwards with `reverse`, until it returns false; returns false then.
    @inline(__always)
    func forEachEntry(from start: Int, to end: Int, reverse: Bool, _ body: (Entry) throws -> Bool) rethrows -> Bool {
        guard start < end else { return true }
        let keys = keys, rows = rows
        if runEnds.isEmpty {
            // One key per entry: no run to follow (scans of unique and date indexes).
            if reverse {
                for i in stride(from: end - 1, through: start, by: -1) {
                    if try !body(Entry(key: keys[i], row: BTree.row(rows[i]))) { return false }
                }
            } else {
                for i in start..<end {
                    if try !body(Entry(key: keys[i], row: BTree.row(rows[i]))) { return false }
                }
            }
            return true
        }
        if reverse {
            var r = run(containing: end - 1)
            for i in stride(from: end - 1, through: start, by: -1) {
                while i < runStart(r) { r -= 1 }
                if try !body(Entry(key: keys[r], row: BTree.row(rows[i]))) { return false }
            }
        } else {
            var r = run(containing: start)
            for i in start..<end {
                while i >= runEnd(r) { r += 1 }
                if try !body(Entry(key: keys[r], row: BTree.row(rows[i]))) { return false }
            }
        }
        return true
    }

    /// Leaf: checks the form's invariants (`BTree._checkInvariants`).
    func checkLeafForm() {
        if runEnds.isEmpty {
            precondition(keys.count == rows.count, "a leaf's keys and rows disagree")
            return
        }
        precondition(keys.count == runEnds.count, "a leaf's runs and keys disagree")
        precondition(Int(runEnds[runEnds.count - 1]) == rows.count, "a leaf's last run does not end at its last entry")
        for r in 0..<runCount {
            precondition(runStart(r) < runEnd(r), "an empty run")
            if r > 0 { precondition(Key.compare(keys[r - 1], keys[r]) != 0, "adjacent runs of one key") }
        }
    }
}
