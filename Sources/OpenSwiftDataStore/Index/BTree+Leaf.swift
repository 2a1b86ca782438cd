/// A leaf's entries, in one of two forms.
///
/// - **One key per entry** (`runEnds` empty): `keys[i]` and `rows[i]` are entry `i`.
/// - **Runs of equal keys** (`runEnds` not empty): run `r` holds the entries from
///   `runStart(r)` to `runEnds[r]`, all with key `keys[r]`; adjacent runs' keys differ.
///   An index over a column of few distinct values (a city, a status) holds most of
///   its keys once per leaf: about 4 bytes an entry, where a string key each took 20
///   (Postgres's B-tree deduplication does the same).
///
/// A leaf built from sorted entries (`init(leafOf:)`) or split takes runs when they
/// hold the entries in fewer bytes; inserts and removals keep the form.
extension BTree.Node {
    typealias Entry = BTree.Entry

    /// A leaf of `entries`, in order, in the smaller form.
    /// - Complexity: O(n)
    convenience init<Entries: Collection<Entry>>(leafOf entries: Entries) {
        let rows = entries.map { BTree.packed($0.row) }
        var runs = 0
        var previous: Key?
        for entry in entries where previous.map({ Key.compare($0, entry.key) != 0 }) ?? true {
            runs += 1
            previous = entry.key
        }
        guard Self.runsAreSmaller(runs: runs, entries: entries.count) else {
            self.init(keys: entries.map { $0.key }, rows: rows)
            return
        }
        var keys: [Key] = []
        var runEnds: [UInt16] = []
        keys.reserveCapacity(runs)
        runEnds.reserveCapacity(runs)
        for (offset, entry) in entries.enumerated() {
            if let last = keys.last, Key.compare(last, entry.key) == 0 {
                runEnds[runEnds.count - 1] += 1
            } else {
                keys.append(entry.key)
                runEnds.append(UInt16(offset + 1))
            }
        }
        self.init(keys: keys, rows: rows, runEnds: runEnds)
    }

    /// Whether `runs` runs hold `entries` entries in fewer bytes than a key each.
    @inline(__always)
    static func runsAreSmaller(runs: Int, entries: Int) -> Bool {
        let key = MemoryLayout<Key>.stride
        return runs * (key + MemoryLayout<UInt16>.stride) < entries * key
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
    func entry(at i: Int) -> Entry { Entry(key: keys[run(containing: i)], row: RowID(Int64(rows[i]))) }

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
                        return c != 0 ? c > 0 : Int64(rows[i]) >= entry.row.rawValue
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
            start + BTree.firstIndex(in: end - start) { Int64(rows[start + $0]) >= row.rawValue }
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
        guard low < entryCount, Int64(rows[low]) == entry.row.rawValue else { return false }
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
                    if try !body(Entry(key: keys[i], row: RowID(Int64(rows[i])))) { return false }
                }
            } else {
                for i in start..<end {
                    if try !body(Entry(key: keys[i], row: RowID(Int64(rows[i])))) { return false }
                }
            }
            return true
        }
        if reverse {
            var r = run(containing: end - 1)
            for i in stride(from: end - 1, through: start, by: -1) {
                while i < runStart(r) { r -= 1 }
                if try !body(Entry(key: keys[r], row: RowID(Int64(rows[i])))) { return false }
            }
        } else {
            var r = run(containing: start)
            for i in start..<end {
                while i >= runEnd(r) { r += 1 }
                if try !body(Entry(key: keys[r], row: RowID(Int64(rows[i])))) { return false }
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
