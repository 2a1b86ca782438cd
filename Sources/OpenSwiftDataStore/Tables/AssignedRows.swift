/// The permanent rows a commit gave the temporary rows of its change set.
///
/// Held as runs: temporary rows one apart (a context's temporary rows count down as
/// models are made, and it hands its inserts over in that order) that became
/// consecutive permanent rows. A bulk insert of a million rows is a handful of runs,
/// where a table of pairs held 24 MB at the peak of the save; a run is 24 bytes, so
/// pairs that make no runs (upserts) cost what the pairs did. Sorted by entity and
/// temporary row once `seal()` ran, and searched by halving.
public struct AssignedRows: Sendable {
    /// `count` pairs: temporary row `temporary + k × step` of `entity` became
    /// permanent row `permanent + k`.
    private struct Run: Sendable {
        var temporary: Int64
        var permanent: Int64
        var entity: Int32
        /// The number of pairs, with the temporary rows' direction in the top bit.
        var packed: UInt32

        var count: Int { Int(packed & ~Self.descendingBit) }
        var step: Int64 { packed & Self.descendingBit != 0 ? -1 : 1 }
        /// The lowest temporary row of the run.
        var low: Int64 { packed & Self.descendingBit != 0 ? temporary - Int64(count - 1) : temporary }

        static let descendingBit: UInt32 = 1 << 31

        /// Appends the pair when it continues the run: returns false when it does not.
        @inline(__always)
        mutating func extend(_ t: Int64, of e: Int, to p: Int64) -> Bool {
            guard Int(entity) == e, p == permanent + Int64(count), packed & ~Self.descendingBit < Self.descendingBit - 1 else {
                return false
            }
            if count == 1 {
                if t == temporary + 1 { packed = 2; return true }
                if t == temporary - 1 { packed = 2 | Self.descendingBit; return true }
                return false
            }
            guard t == temporary + Int64(count) * step else { return false }
            packed += 1
            return true
        }

        /// Whether `a` comes before `b` in look-up order: by entity, then lowest row.
        static func less(_ a: Run, _ b: Run) -> Bool { a.entity != b.entity ? a.entity < b.entity : a.low < b.low }
    }

    private var runs: [Run] = []
    /// The number of pairs.
    public private(set) var count = 0

    public init() {}

    /// Room for `count` runs.
    mutating func reserveCapacity(_ count: Int) { runs.reserveCapacity(count) }

    /// Records that `temporary` became `permanent`; `seal()` before looking up.
    /// - Complexity: amortized O(1)
    @inline(__always)
    mutating func append(_ temporary: EntityRow, _ permanent: RowID) {
        count += 1
        if !runs.isEmpty, runs[runs.count - 1].extend(temporary.id.rawValue, of: temporary.entity, to: permanent.rawValue) {
            return
        }
        runs.append(Run(temporary: temporary.id.rawValue, permanent: permanent.rawValue, entity: Int32(temporary.entity), packed: 1))
    }

    /// Sorts the runs for look-ups (runs appended in order are only checked).
    /// - Complexity: O(runs) when in order, else O(runs log runs)
    mutating func seal() {
        if runs.isSorted(by: Run.less) { return }
        runs.sort(by: Run.less)
    }

    public var isEmpty: Bool { count == 0 }

    /// The permanent rows, by entity and then temporary row.
    /// - Complexity: O(pairs)
    public var values: [RowID] {
        var values: [RowID] = []
        values.reserveCapacity(count)
        for run in runs {
            let n = Int64(run.count)
            if run.step > 0 {
                for k in 0..<n { values.append(RowID(run.permanent + k)) }
            } else {
                for k in stride(from: n - 1, through: 0, by: -1) { values.append(RowID(run.permanent + k)) }
            }
        }
        return values
    }

    /// The permanent row of `temporary`, if the commit inserted it.
    /// - Complexity: O(log runs)
    public subscript(temporary: EntityRow) -> RowID? {
        let entity = Int32(truncatingIfNeeded: temporary.entity), t = temporary.id.rawValue
        // The first run past `temporary`; the one before it is the only one that may hold it.
        var low = 0, high = runs.count
        while low < high {
            let mid = (low + high) / 2
            let run = runs[mid]
            if run.entity < entity || (run.entity == entity && run.low <= t) { low = mid + 1 } else { high = mid }
        }
        guard low > 0 else { return nil }
        let run = runs[low - 1]
        guard run.entity == entity, t - run.low < Int64(run.count) else { return nil }
        return RowID(run.permanent + (t - run.temporary) * run.step)
    }
}

extension Array {
    /// Whether the elements are in `less`'s order.
    /// - Complexity: O(n)
    func isSorted(by less: (Element, Element) -> Bool) -> Bool {
        indices.dropFirst().allSatisfy { !less(self[$0], self[$0 - 1]) }
    }
}
