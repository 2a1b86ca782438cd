/// A row: the values of one entity instance, slot by slot (see `EntityDescription`).
public typealias Row = [Value]

/// One entity's rows, versioned by copy-on-write chunks.
///
/// Rows live in fixed-size chunks addressed by row identifier. A published store
/// version shares every chunk with the next version except the ones a commit
/// touched, so publishing costs O(changes × chunk size + rows / chunk size)
/// rather than O(rows), and a reader keeps a consistent version without locks.
public struct Table: Sendable {
    static let chunkShift = 10
    static let chunkSize = 1 << chunkShift

    /// Immutable once published; mutated in place only while uniquely referenced.
    final class Chunk: @unchecked Sendable {
        var rows: [Row?]
        init(rows: [Row?]) { self.rows = rows }
    }

    private var chunks: [Chunk] = []
    /// Number of live rows.
    public private(set) var count = 0
    /// The raw value the next inserted row gets.
    public private(set) var nextRawID: Int64 = 1

    public init() {}

    /// The row stored under `id`, if it exists.
    /// - Complexity: O(1)
    public subscript(id: RowID) -> Row? {
        let (c, o) = Self.position(of: id)
        guard id.rawValue > 0, c < chunks.count else { return nil }
        return chunks[c].rows[o]
    }

    public func contains(_ id: RowID) -> Bool { self[id] != nil }

    /// Stores `row` under a new identifier and returns it.
    /// - Complexity: amortized O(1); O(chunk size) the first time a shared chunk is touched.
    public mutating func insert(_ row: Row) -> RowID {
        let id = RowID(nextRawID)
        nextRawID += 1
        let (c, o) = Self.position(of: id)
        if c == chunks.count {
            chunks.append(Chunk(rows: [Row?](repeating: nil, count: Self.chunkSize)))
        }
        mutateChunk(c) { $0.rows[o] = row }
        count += 1
        return id
    }

    /// Stores `row` under `id`, whether or not a row is there: how documents load
    /// rows with the identifiers they were saved under.
    /// - Complexity: amortized O(1); O(chunk size) the first time a shared chunk is touched.
    public mutating func put(_ id: RowID, _ row: Row) {
        precondition(id.rawValue > 0, "put of a temporary row \(id)")
        let (c, o) = Self.position(of: id)
        if chunks.count <= c {
            // Chunks below `c` that hold no row share one empty chunk until written.
            let empty = Chunk(rows: [Row?](repeating: nil, count: Self.chunkSize))
            while chunks.count <= c { chunks.append(empty) }
        }
        var wasEmpty = false
        mutateChunk(c) {
            wasEmpty = $0.rows[o] == nil
            $0.rows[o] = row
        }
        if wasEmpty { count += 1 }
        if id.rawValue >= nextRawID { nextRawID = id.rawValue + 1 }
    }

    /// Makes sure no future insert reuses an identifier below `next`.
    public mutating func reserveIdentifiers(below next: Int64) {
        nextRawID = max(nextRawID, next)
    }

    /// Replaces the row stored under `id`; the row must exist.
    public mutating func update(_ id: RowID, to row: Row) {
        let (c, o) = Self.position(of: id)
        precondition(contains(id), "update of a missing row \(id)")
        mutateChunk(c) { $0.rows[o] = row }
    }

    /// Removes the row stored under `id`, returning it.
    @discardableResult
    public mutating func remove(_ id: RowID) -> Row? {
        guard let old = self[id] else { return nil }
        let (c, o) = Self.position(of: id)
        mutateChunk(c) { $0.rows[o] = nil }
        count -= 1
        return old
    }

    /// Calls `body` for every live row, in identifier order.
    /// - Complexity: O(rows + chunks)
    public func forEach(_ body: (RowID, Row) throws -> Void) rethrows {
        for (c, chunk) in chunks.enumerated() {
            let base = Int64(c << Self.chunkShift)
            for (o, row) in chunk.rows.enumerated() {
                if let row { try body(RowID(base + Int64(o)), row) }
            }
        }
    }

    /// Identifiers of every live row, in order.
    public var rowIDs: [RowID] {
        var ids: [RowID] = []
        ids.reserveCapacity(count)
        forEach { id, _ in ids.append(id) }
        return ids
    }

    private static func position(of id: RowID) -> (chunk: Int, offset: Int) {
        let raw = Int(id.rawValue)
        return (raw >> chunkShift, raw & (chunkSize - 1))
    }

    private mutating func mutateChunk(_ c: Int, _ body: (Chunk) -> Void) {
        if !isKnownUniquelyReferenced(&chunks[c]) {
            chunks[c] = Chunk(rows: chunks[c].rows)
        }
        body(chunks[c])
    }
}
