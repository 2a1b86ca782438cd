extension Table {
    /// Traps unless the table's internal structure is consistent: every column as
    /// long as its segment, live counts that match the bitmaps, identifiers ascending
    /// within and across segments, no empty segment but the last, lists for every
    /// position or none (`Column.lists`), sealed forms (packed numbers, string heaps,
    /// codes) that cover their column, and `count` and
    /// `nextRawID` in line with the rows. Tests call it after mutations, in the
    /// manner of swift-collections' `_checkInvariants`.
    /// - Complexity: O(rows × slots)
    public func _checkInvariants() {
        var live = 0
        var previous: Int64 = 0
        for (s, segment) in segments.enumerated() {
            precondition(segment.used <= Table.segmentSize, "segment \(s) overfull")
            precondition(segment.columns.count == kinds.count, "segment \(s) has \(segment.columns.count) columns")
            for (slot, column) in segment.columns.enumerated() {
                precondition(column.count == segment.used, "segment \(s) column \(slot) holds \(column.count) of \(segment.used)")
                precondition(
                    column.lists.isEmpty || column.lists.count == column.count,
                    "segment \(s) column \(slot) holds \(column.lists.count) lists of \(column.count)")
                // A sealed form holds every position, in place of its typed buffer.
                if let packed = column.packedInts {
                    precondition(packed.count == column.count && column.ints.isEmpty, "segment \(s) column \(slot) packed integers")
                }
                if let packed = column.packedDoubles {
                    precondition(packed.count == column.count && column.doubles.isEmpty, "segment \(s) column \(slot) packed numbers")
                }
                if let heap = column.heap {
                    precondition(heap.count == column.count && column.strings.isEmpty && !column.isEncoded, "segment \(s) column \(slot) string heap")
                }
                if column.isEncoded {
                    precondition(column.codes.count == column.count && column.strings.isEmpty, "segment \(s) column \(slot) codes")
                    precondition(column.codes.allSatisfy { Int($0) < column.dictionary.count }, "segment \(s) column \(slot) code past its dictionary")
                }
            }
            precondition(segment.live.count == Bitmap.wordCount(segment.used), "segment \(s) live bitmap size")
            precondition(Bitmap.popcount(segment.live) == segment.liveCount, "segment \(s) live count")
            precondition(segment.ids.isEmpty || segment.ids.count == segment.used, "segment \(s) identifier count")
            precondition(segment.liveCount > 0 || s == segments.count - 1, "empty segment \(s) kept")
            for p in 0..<segment.used {
                let id = segment.id(at: p).rawValue
                precondition(id > previous, "identifiers out of order at segment \(s) position \(p)")
                previous = id
            }
            live += segment.liveCount
        }
        precondition(live == count, "count \(count) but \(live) live rows")
        precondition(previous < nextRawID, "next identifier \(nextRawID) not above \(previous)")
    }
}
