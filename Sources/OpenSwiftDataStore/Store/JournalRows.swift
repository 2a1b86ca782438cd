/// The rows a commit writes, gathered while it applies them, for its journal record
/// (`CommitRecord.init(from:to:gathered:…)`).
///
/// A new row's values are the row the change set carried: the record takes it as
/// it is (its buffer shared, not copied) instead of reading it back out of the new
/// version's columns, and needs no set to find rows written twice, since a new row
/// is written once. A column insert's rows are read back (they came as columns).
/// A commit that writes a stored row (an update, an upsert, the rows an upsert's
/// merge changed) may write one row twice: then every row is read back once, in
/// the order first written, as before.
struct JournalRows {
    /// The rows in the order first written; `readBack` lists those whose values
    /// are not here.
    private(set) var puts: [CommitRecord.Put] = []
    /// Positions in `puts` of rows whose values are read from the new version.
    private(set) var readBack: [Int] = []
    /// Whether a stored row was written: then `puts` are keys only, read back once each.
    private(set) var rewritesRows = false

    init(capacity: Int) { puts.reserveCapacity(capacity) }

    /// A new row, stored as `row`; returns its position (for `resolved(at:to:)`).
    @discardableResult
    mutating func wroteNew(_ key: EntityRow, as row: Row) -> Int {
        puts.append(CommitRecord.Put(entity: key.entity, id: key.id, row: row))
        return puts.count - 1
    }

    /// A new row whose values are read back (a column insert's).
    mutating func wroteNew(_ key: EntityRow) {
        readBack.append(puts.count)
        puts.append(CommitRecord.Put(entity: key.entity, id: key.id, row: []))
    }

    /// A stored row, written again.
    mutating func rewrote(_ key: EntityRow) {
        rewritesRows = true
        puts.append(CommitRecord.Put(entity: key.entity, id: key.id, row: []))
    }

    /// The rows, moved out (so the record's changes to them copy nothing).
    mutating func takePuts() -> [CommitRecord.Put] {
        var taken: [CommitRecord.Put] = []
        swap(&taken, &puts)
        return taken
    }

    /// The new row at `position` as its temporary references were resolved.
    mutating func resolved(at position: Int, to row: Row) { puts[position].row = row }
}
