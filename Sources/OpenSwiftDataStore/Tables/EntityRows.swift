/// A list of rows of some entities, in the order they were appended, held as runs of
/// consecutive identifiers.
///
/// A commit lists the rows it inserted and wrote, and a save the temporary rows of its
/// kept inserts: a million of them as `[EntityRow]` held 16 MB each at the peak of a
/// large save, where the rows of a bulk insert (identifiers counting up) and of a
/// context's inserts (temporary identifiers counting down) are a handful of runs. A
/// run is 16 bytes, so a list without runs costs what the array did.
public struct EntityRows: Sequence, Sendable, Equatable {
    /// `count` rows of `entity`: `first`, then each one more (or, `descending`, one
    /// less) than the one before.
    struct Run: Sendable, Equatable {
        var first: Int64
        var entity: Int32
        /// The number of rows, with the direction in the top bit.
        private var packed: UInt32

        init(_ row: EntityRow) {
            first = row.id.rawValue
            entity = Int32(row.entity)
            packed = 1
        }

        var count: Int { Int(packed & ~Self.descendingBit) }
        var isDescending: Bool { packed & Self.descendingBit != 0 }
        var step: Int64 { isDescending ? -1 : 1 }
        /// The identifier after the last one, in the run's direction.
        var next: Int64 { first + Int64(count) * step }

        /// Appends `id` when it continues the run: returns false when it does not.
        @inline(__always)
        mutating func extend(with id: Int64, of entity: Int) -> Bool {
            guard Int(self.entity) == entity, packed & ~Self.descendingBit < Self.descendingBit - 1 else { return false }
            if count == 1 {
                if id == first + 1 { packed = 2; return true }
                if id == first - 1 { packed = 2 | Self.descendingBit; return true }
                return false
            }
            guard id == next else { return false }
            packed += 1
            return true
        }

        static let descendingBit: UInt32 = 1 << 31

        /// The `k`-th row.
        @inline(__always)
        func row(_ k: Int) -> EntityRow { EntityRow(entity: Int(entity), id: RowID(first + Int64(k) * step)) }
    }

    private(set) var runs: [Run] = []
    /// The number of rows.
    public private(set) var count = 0

    public init() {}

    /// The rows of `rows`, in their order.
    /// - Complexity: O(rows)
    public init(_ rows: some Sequence<EntityRow>) {
        for row in rows { append(row) }
    }

    /// The rows `ids` of `entity`, in their order.
    /// - Complexity: O(ids)
    public init(entity: Int, ids: some Sequence<RowID>) {
        for id in ids { append(EntityRow(entity: entity, id: id)) }
    }

    public var isEmpty: Bool { count == 0 }

    /// Appends `row` after the others.
    /// - Complexity: amortized O(1)
    @inline(__always)
    public mutating func append(_ row: EntityRow) {
        count += 1
        if !runs.isEmpty, runs[runs.count - 1].extend(with: row.id.rawValue, of: row.entity) { return }
        runs.append(Run(row))
    }

    /// Calls `body` with each run as (entity, first row, count, step).
    /// - Complexity: O(runs)
    func forEachRun(_ body: (_ entity: Int, _ first: Int64, _ count: Int, _ step: Int64) throws -> Void) rethrows {
        for run in runs { try body(Int(run.entity), run.first, run.count, run.step) }
    }

    public struct Iterator: IteratorProtocol {
        private let runs: [Run]
        private var run = 0
        private var k = 0

        fileprivate init(runs: [Run]) { self.runs = runs }

        @inline(__always)
        public mutating func next() -> EntityRow? {
            guard run < runs.count else { return nil }
            let row = runs[run].row(k)
            k += 1
            if k == runs[run].count {
                run += 1
                k = 0
            }
            return row
        }
    }

    public func makeIterator() -> Iterator { Iterator(runs: runs) }

    public var underestimatedCount: Int { count }

    /// Lists as equal hold the same rows in the same order (however they were appended,
    /// the runs are the same).
    public static func == (lhs: EntityRows, rhs: EntityRows) -> Bool { lhs.count == rhs.count && lhs.runs == rhs.runs }
}
