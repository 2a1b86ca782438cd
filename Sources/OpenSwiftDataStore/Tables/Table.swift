/// A row: the values of one entity instance, slot by slot (see `EntityDescription`).
///
/// Tables store columns, not rows; a `Row` is what crosses the engine's boundary
/// (commits, documents, the interpreter, the API module).
public typealias Row = [Value]

/// One entity's rows, stored by column in fixed-size segments and versioned by
/// copy-on-write buffers.
///
/// Rows sit at dense positions in insertion order; a segment holds `segmentSize`
/// positions, with one `Column` per slot and a bitmap of live positions. Row
/// identifiers are kept apart from positions: each segment records its first
/// identifier and, only when its identifiers are not consecutive, all of them. So a
/// table costs O(rows) whatever its identifiers (a row saved under 2³² is one row),
/// and looking an identifier up is O(1) while each segment starts at its boundary
/// (identifiers dense, or rows taken whole at a boundary), O(log segments) otherwise.
///
/// A published store version shares every buffer with the next one except those a
/// commit writes: an update copies the touched columns of one segment, a delete one
/// bitmap (each at most once per commit); an insert appends to the tail segment's
/// value buffers past the published count (`AppendBuffer`) and copies its bitmaps.
public struct Table: Sendable {
    static let segmentShift = 12
    /// Positions per segment (4,096).
    public static let segmentSize = 1 << segmentShift

    /// The column kinds, slot by slot.
    public let kinds: [ColumnKind]
    var segments: [Segment] = []
    /// Number of live rows.
    public private(set) var count = 0
    /// The raw value the next inserted row gets.
    public private(set) var nextRawID: Int64 = 1

    /// An empty table for rows whose slots store as `kinds`.
    /// Per slot: whether an ordered index reads it, so a full segment keeps its long
    /// strings as they are (`Segment.seal(indexed:)`); every slot when not known.
    /// (Not an optional: a copy of a table copied a `[Bool]?` through the optional's
    /// value witnesses, about 90 instructions, and a fetch copies tables out of
    /// versions for the models it makes.)
    let indexed: [Bool]

    public init(kinds: [ColumnKind]) {
        self.kinds = kinds
        self.indexed = Array(repeating: true, count: kinds.count)
    }

    /// An empty table for rows of `entity`.
    public init(entity: EntityDescription) {
        self.kinds = ColumnKind.kinds(of: entity)
        self.indexed = Self.indexedSlots(of: entity)
    }

    /// Per slot of `entity`'s rows: whether an ordered index reads it.
    static func indexedSlots(of entity: EntityDescription) -> [Bool] {
        let slots = Set(entity.orderedIndexSlots.joined())
        return (0..<entity.slotCount).map { slots.contains($0) }
    }

    private init(kinds: [ColumnKind], indexed: [Bool]) {
        self.kinds = kinds
        self.indexed = indexed
    }

    /// Seals the last segment once it is full (`Segment.seal(indexed:)`), sharing the
    /// dictionaries of the one before.
    /// - Complexity: O(segment size × slots)
    private mutating func sealLast() {
        let s = segments.count - 1
        guard s >= 0, segments[s].isFull else { return }
        if !segments[s].isSealed { segments[s].seal(indexed: indexed) }
        if s > 0 { segments[s].shareDictionaries(with: segments[s - 1]) }
    }

    // MARK: Reading

    /// The row stored under `id`, if it exists.
    /// - Complexity: O(slots), plus O(log rows) when identifiers are not dense.
    public subscript(id: RowID) -> Row? {
        guard let (s, p) = locate(id) else { return nil }
        return segments[s].row(at: p)
    }

    /// The row stored under `id` with only `slots` read, nil in every other slot:
    /// enough for a test that reads those slots, without touching the other columns.
    /// - Complexity: O(slots of the row), plus O(log rows) when identifiers are not dense.
    public func row(_ id: RowID, reading slots: [Int]) -> Row? {
        guard let (s, p) = locate(id) else { return nil }
        var row = Row(repeating: .null, count: kinds.count)
        for slot in slots { row[slot] = withColumn(segment: s, slot: slot) { Column.value(in: $0, at: p) } }
        return row
    }

    /// Whether a row is stored under `id`.
    /// - Complexity: O(1), or O(log rows) when identifiers are not dense.
    public func contains(_ id: RowID) -> Bool { locate(id) != nil }

    /// The value in `slot` of the row stored under `id`.
    /// - Complexity: O(1), or O(log rows) when identifiers are not dense.
    public func value(_ id: RowID, slot: Int) -> Value? {
        guard let (s, p) = locate(id) else { return nil }
        return withColumn(segment: s, slot: slot) { Column.value(in: $0, at: p) }
    }

    /// Calls `body` with column `slot` of segment `s` in place. Read as
    /// `segments[s].columns[slot]`, a column is copied out first, which retains and
    /// releases each of its buffers: two atomic operations each for a read
    /// of one value (a tenth of W5, which reads one attribute of each model it makes).
    /// The column comes as a pointer: passed as a value to the closure, a column with
    /// sealed forms was copied whole again (seen in W8's index builds, +50 %).
    @inline(__always)
    func withColumn<R>(segment s: Int, slot: Int, _ body: (UnsafePointer<Column>) -> R) -> R {
        segments.withUnsafeBufferPointer { segments in
            segments[s].columns.withUnsafeBufferPointer { body($0.baseAddress! + slot) }
        }
    }

    /// Row `id`'s string in `slot` (`Column.string(in:at:)`), making no `Value`.
    /// - Complexity: O(1) while identifiers are dense
    func string(_ id: RowID, slot: Int) -> String? {
        guard let (s, p) = locate(id) else { return nil }
        return withColumn(segment: s, slot: slot) { Column.string(in: $0, at: p) }
    }

    /// Row `id`'s value in `slot` packed as `kind` (`Column.packed(in:at:as:)`).
    /// - Complexity: O(1) while identifiers are dense
    func packed(_ id: RowID, slot: Int, as kind: ScalarKind) -> PackedKey? {
        guard let (s, p) = locate(id) else { return nil }
        return withColumn(segment: s, slot: slot) { Column.packed(in: $0, at: p, as: kind) }
    }

    /// Calls `body` for every live row, in identifier order.
    /// - Complexity: O(rows × slots)
    public func forEach(_ body: (RowID, Row) throws -> Void) rethrows {
        for segment in segments {
            try Bitmap.forEachSet(segment.live) { p in try body(segment.id(at: p), segment.row(at: p)) }
        }
    }

    /// Calls `body` with the identifier and `slot`'s value of every live row, in
    /// identifier order, making no row.
    /// - Complexity: O(rows)
    public func forEach(slot: Int, _ body: (RowID, Value) throws -> Void) rethrows {
        for segment in segments {
            let column = segment.columns[slot]
            try Bitmap.forEachSet(segment.live) { p in try body(segment.id(at: p), column.value(at: p)) }
        }
    }

    /// Calls `body` with the identifier of every live row, in order, reading no value.
    /// - Complexity: O(rows)
    public func forEachID(_ body: (RowID) throws -> Void) rethrows {
        for segment in segments {
            try Bitmap.forEachSet(segment.live) { try body(segment.id(at: $0)) }
        }
    }

    /// Identifiers of every live row, in order.
    /// - Complexity: O(rows)
    public var rowIDs: [RowID] {
        var ids: [RowID] = []
        ids.reserveCapacity(count)
        for segment in segments {
            Bitmap.forEachSet(segment.live) { ids.append(segment.id(at: $0)) }
        }
        return ids
    }

    /// The segment and position holding `id`, when a live row has it.
    @inline(__always)
    func locate(_ id: RowID) -> (segment: Int, position: Int)? {
        let raw = id.rawValue
        guard raw > 0, !segments.isEmpty else { return nil }
        // While identifiers are dense, segment s starts at s × segmentSize + 1.
        var s = Int(truncatingIfNeeded: (raw - 1) >> Int64(Self.segmentShift))
        if s >= segments.count || !segments[s].spans(raw) {
            guard let found = segmentSpanning(raw) else { return nil }
            s = found
        }
        guard let p = segments[s].position(of: raw), Bitmap.test(segments[s].live, p) else { return nil }
        return (s, p)
    }

    /// The segment whose identifier range holds `raw`, by binary search.
    private func segmentSpanning(_ raw: Int64) -> Int? {
        var low = 0, high = segments.count
        while low < high {
            let mid = (low + high) / 2
            if segments[mid].lastID < raw { low = mid + 1 } else { high = mid }
        }
        return low < segments.count && segments[low].firstID <= raw ? low : nil
    }

    // MARK: Writing

    /// Stores `row` under a new identifier and returns it.
    /// - Complexity: amortized O(slots), and O(segment size ÷ 64) for the tail
    ///   segment's bitmaps the first time a commit writes it.
    public mutating func insert(_ row: Row) -> RowID {
        let id = RowID(nextRawID)
        append(row, id: id.rawValue)
        return id
    }

    /// Stores `rows` under new identifiers, consecutive from `nextRawID` on, and returns
    /// the first. Column by column, segment by segment: the same as inserting them one
    /// by one, without walking every column for every row.
    /// - Complexity: O(rows × slots)
    @discardableResult
    public mutating func insert(contentsOf rows: [Row]) -> RowID {
        let first = RowID(nextRawID)
        var start = 0
        while start < rows.count {
            if segments.isEmpty || segments[segments.count - 1].isFull {
                segments.append(Segment(kinds: kinds, firstID: nextRawID))
            }
            let end = min(rows.count, start + Table.segmentSize - segments[segments.count - 1].used)
            segments[segments.count - 1].append(rows[start..<end], firstID: nextRawID)
            sealLast()
            nextRawID += Int64(end - start)
            count += end - start
            start = end
        }
        return first
    }

    /// Stores `row` under `id`, whether or not a row is there: how documents load
    /// rows with the identifiers they were saved under.
    /// - Complexity: as `insert` when `id` is above every identifier so far or names
    ///   a position already used; O(rows × slots) otherwise (a rebuild in order).
    public mutating func put(_ id: RowID, _ row: Row) {
        precondition(id.rawValue > 0, "put of a temporary row \(id)")
        let raw = id.rawValue
        if let last = segments.last, raw <= last.lastID {
            if let s = segmentSpanning(raw), let p = segments[s].position(of: raw) {
                if !Bitmap.test(segments[s].live, p) { count += 1 }
                segments[s].write(row, at: p)
                segments[s].setLive(p, true)
            } else {
                insertOutOfOrder(row, id: raw)
            }
        } else {
            append(row, id: raw)
        }
        if raw >= nextRawID { nextRawID = raw + 1 }
    }

    /// Makes sure no future insert reuses an identifier below `next`.
    public mutating func reserveIdentifiers(below next: Int64) {
        nextRawID = max(nextRawID, next)
    }

    /// Replaces the row stored under `id`; the row must exist.
    /// - Complexity: O(slots), plus a copy of each written column the first time.
    public mutating func update(_ id: RowID, to row: Row) {
        guard let (s, p) = locate(id) else { preconditionFailure("update of a missing row \(id)") }
        segments[s].write(row, at: p, changedFrom: segments[s].row(at: p))
    }

    /// Removes the row stored under `id`, returning it.
    /// - Complexity: O(slots); O(segments) when it empties a segment.
    @discardableResult
    public mutating func remove(_ id: RowID) -> Row? {
        guard let (s, p) = locate(id) else { return nil }
        let old = segments[s].row(at: p)
        remove(segment: s, position: p)
        return old
    }

    /// Removes the row stored under `id`, reading none of its values; false when there
    /// is none.
    /// - Complexity: O(1); O(segments) when it empties a segment.
    @discardableResult
    public mutating func delete(_ id: RowID) -> Bool {
        guard let (s, p) = locate(id) else { return false }
        remove(segment: s, position: p)
        return true
    }

    private mutating func remove(segment s: Int, position p: Int) {
        // Only the live bitmap changes (and is copied): the dead position's values stay
        // until the segment is compacted or dropped.
        segments[s].setLive(p, false)
        count -= 1
        if segments[s].liveCount == 0, s != segments.count - 1 {
            // An emptied segment costs nothing once dropped: identifiers are looked up
            // by range, not by position.
            segments.remove(at: s)
        } else if segments[s].isSparse {
            segments[s].compact()
        }
    }

    /// Appends `row` under `raw`, above every identifier stored so far.
    private mutating func append(_ row: Row, id raw: Int64) {
        if segments.isEmpty || segments[segments.count - 1].isFull {
            segments.append(Segment(kinds: kinds, firstID: raw))
        }
        segments[segments.count - 1].append(row, id: raw)
        sealLast()
        count += 1
        if raw >= nextRawID { nextRawID = raw + 1 }
    }

    /// The highest identifier a position of the table holds (live or not), if any.
    var lastRawID: Int64? { segments.last?.lastID }

    /// Appends a segment read whole (a document's column frame, another table's); its
    /// identifiers must lie above `lastRawID`.
    /// - Complexity: O(1), amortized
    mutating func append(segment: Segment) {
        precondition(segment.columns.count == kinds.count, "a segment of \(segment.columns.count) columns for \(kinds.count) slots")
        precondition(segment.used > 0 && segment.firstID > (lastRawID ?? 0), "segment identifiers must ascend")
        if let last = segments.last, last.liveCount == 0 { segments.removeLast() }
        segments.append(segment)
        sealLast()
        count += segment.liveCount
        nextRawID = max(nextRawID, segment.lastID + 1)
    }

    /// Appends the rows of `other` (same kinds), each under its identifier in `other`
    /// moved up by `firstID − 1`: its segments are taken as they are, not copied, so a
    /// million rows built elsewhere (a save's inserts kept in columns) join in
    /// O(segments). (A `firstID` past a segment boundary keeps look-ups by
    /// identifier O(1); `StoreVersion.bulkInsert` picks one.) Identifiers `other` skipped (rows it deleted) stay unused; none from
    /// `firstID` to `firstID + other.nextRawID − 2` is handed out again.
    /// - Complexity: O(segments of `other`) while its identifiers are consecutive
    public mutating func append(rowsOf other: Table, firstID: Int64) {
        precondition(other.kinds == kinds, "rows of other kinds")
        precondition(firstID >= nextRawID, "rows must go above every identifier so far")
        for var segment in other.segments where segment.liveCount > 0 {
            segment.rebase(by: firstID - 1)
            append(segment: segment)
        }
        reserveIdentifiers(below: firstID + other.nextRawID - 1)
    }

    /// Puts a row under an identifier below the last one that no position has: the
    /// table is rebuilt in identifier order (documents never do this; an import with
    /// rows out of order can).
    private mutating func insertOutOfOrder(_ row: Row, id raw: Int64) {
        var rows: [(RowID, Row)] = []
        rows.reserveCapacity(count + 1)
        forEach { rows.append(($0, $1)) }
        let at = rows.firstIndex { $0.0.rawValue > raw } ?? rows.count
        rows.insert((RowID(raw), row), at: at)
        let next = nextRawID
        self = Table(kinds: kinds, indexed: indexed)
        for (id, row) in rows { append(row, id: id.rawValue) }
        nextRawID = max(next, nextRawID)
    }
}
