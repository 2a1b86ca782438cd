/// Up to `Table.segmentSize` positions of one table: a column per slot, the live
/// positions, and the identifiers of the rows at those positions.
struct Segment: Sendable {
    var columns: [Column]
    /// One bit per position: set where a row lives.
    private(set) var live: [UInt64] = []
    private(set) var liveCount = 0
    /// Positions used, live or not.
    private(set) var used = 0
    /// The identifier at position 0.
    private(set) var firstID: Int64
    /// The identifier at each position, when they are not `firstID, firstID + 1, …`;
    /// empty while they are. Always ascending.
    private(set) var ids: [Int64] = []

    init(kinds: [ColumnKind], firstID: Int64) {
        self.columns = kinds.map(Column.init(kind:))
        self.firstID = firstID
    }

    /// A segment of `columns` (one per slot), each `count` positions long, every
    /// position live: rows read whole from a document. `ids` lists the identifiers
    /// when they are not `firstID, firstID + 1, …` (empty when they are). A full one is
    /// sealed here, on the thread that decoded it (a document opens on every core),
    /// knowing which slots an index reads (`indexed`, `Table.indexedSlots(of:)`).
    init(columns: [Column], count: Int, firstID: Int64, ids: [Int64], indexed: [Bool]) {
        self.columns = columns
        self.firstID = firstID
        self.ids = ids
        used = count
        liveCount = count
        live = Bitmap.allSet(count)
        if isFull { seal(indexed: indexed) }
    }

    var isFull: Bool { used == Table.segmentSize }

    /// Stores each column in its smallest form (`Column.seal(mayHeapLongStrings:)`): a
    /// full segment takes no more appends, so this is done once, when it fills or is
    /// read whole. `indexed` says which slots an ordered index reads: their long
    /// strings stay `String`s.
    /// - Complexity: O(positions × slots)
    mutating func seal(indexed: [Bool]) {
        for slot in columns.indices { columns[slot].seal(mayHeapLongStrings: !indexed[slot]) }
        isSealed = true
    }

    /// Whether `seal(indexed:)` ran since the segment last changed shape.
    private(set) var isSealed = false

    /// Shares the string dictionaries of `previous` (the segment before) where they
    /// hold this segment's strings (`Column.shareDictionary(with:)`).
    /// - Complexity: O(distinct strings × string slots)
    mutating func shareDictionaries(with previous: Segment) {
        for slot in columns.indices where columns[slot].isEncoded {
            columns[slot].shareDictionary(with: previous.columns[slot])
        }
    }

    /// Moves every identifier of the segment by `delta` (its rows keep their order).
    /// - Complexity: O(1) while identifiers are consecutive, else O(positions)
    mutating func rebase(by delta: Int64) {
        firstID += delta
        if !ids.isEmpty { ids = ids.map { $0 + delta } }
    }

    /// The identifier at the last used position.
    var lastID: Int64 { ids.last ?? (firstID + Int64(used) - 1) }

    /// Whether `raw` lies within this segment's identifiers (stored or not).
    @inline(__always)
    func spans(_ raw: Int64) -> Bool { raw >= firstID && raw <= lastID }

    /// The position that holds (or held) identifier `raw`.
    @inline(__always)
    func position(of raw: Int64) -> Int? {
        if ids.isEmpty {
            let p = raw - firstID
            return p >= 0 && p < Int64(used) ? Int(p) : nil
        }
        var low = 0, high = ids.count
        while low < high {
            let mid = (low + high) / 2
            if ids[mid] < raw { low = mid + 1 } else { high = mid }
        }
        return low < ids.count && ids[low] == raw ? low : nil
    }

    @inline(__always)
    func id(at position: Int) -> RowID {
        RowID(ids.isEmpty ? firstID + Int64(position) : ids[position])
    }

    /// The row at `position`, read from each column in place (see `Table.withColumn`).
    func row(at position: Int) -> Row {
        columns.withUnsafeBufferPointer { columns in
            var row = Row()
            row.reserveCapacity(columns.count)
            for slot in columns.indices { row.append(Column.value(in: columns.baseAddress! + slot, at: position)) }
            return row
        }
    }

    /// Whether most used positions are dead, so compacting pays.
    var isSparse: Bool { used >= 1_024 && liveCount * 4 < used }

    mutating func append(_ row: Row, id raw: Int64) {
        precondition(used == 0 || raw > lastID, "identifiers must ascend within a table")
        if !ids.isEmpty || (used > 0 && raw != lastID + 1) {
            if ids.isEmpty { ids = (0..<Int64(used)).map { firstID + $0 } }
            ids.append(raw)
        }
        if used == 0 { firstID = raw }
        for (slot, value) in row.enumerated() { columns[slot].append(value) }
        used += 1
        if Bitmap.wordCount(used) > live.count { live.append(0) }
        setLive(used - 1, true)
    }

    /// Appends `rows` under consecutive identifiers from `raw` on (above `lastID`),
    /// column by column; they must fit.
    mutating func append(_ rows: ArraySlice<Row>, firstID raw: Int64) {
        precondition(used + rows.count <= Table.segmentSize, "\(rows.count) rows past a segment's end")
        guard !rows.isEmpty else { return }
        guard ids.isEmpty, used == 0 || raw == lastID + 1 else {
            // Identifiers with gaps (listed one by one): row by row.
            for (k, row) in rows.enumerated() { append(row, id: raw + Int64(k)) }
            return
        }
        if used == 0 { firstID = raw }
        for slot in columns.indices { columns[slot].append(rows, slot: slot) }
        let start = used
        used += rows.count
        while Bitmap.wordCount(used) > live.count { live.append(0) }
        for position in start..<used { Bitmap.set(&live, position, true) }
        liveCount += rows.count
    }

    mutating func write(_ row: Row, at position: Int) {
        for (slot, value) in row.enumerated() { columns[slot].set(value, at: position) }
    }

    /// Writes the slots of `row` that differ from `old`, so unchanged columns stay shared.
    mutating func write(_ row: Row, at position: Int, changedFrom old: Row) {
        for (slot, value) in row.enumerated() where !value.isIdentical(to: old[slot]) { columns[slot].set(value, at: position) }
    }

    mutating func setLive(_ position: Int, _ on: Bool) {
        guard Bitmap.test(live, position) != on else { return }
        Bitmap.set(&live, position, on)
        liveCount += on ? 1 : -1
    }

    /// Drops the dead positions; live rows keep their identifiers and order.
    /// - Complexity: O(used × slots)
    mutating func compact() {
        var keep: [Int] = []
        keep.reserveCapacity(liveCount)
        Bitmap.forEachSet(live) { keep.append($0) }
        let keptIDs = keep.map { id(at: $0).rawValue }
        columns = columns.map { $0.compacted(keeping: keep) }
        used = keep.count
        liveCount = keep.count
        live = [UInt64](repeating: 0, count: Bitmap.wordCount(used))
        for p in 0..<used { Bitmap.set(&live, p, true) }
        isSealed = false
        firstID = keptIDs.first ?? firstID
        let consecutive = keptIDs.last.map { $0 - firstID == Int64(keptIDs.count - 1) } ?? true
        ids = consecutive ? [] : keptIDs
    }
}
