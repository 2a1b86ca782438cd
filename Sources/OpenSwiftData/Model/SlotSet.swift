/// The slots of a row a saved model changed since its last save: a bitmask for the
/// first 64 slots, a `Set` beyond. A `Set<Int>` allocated its storage on a model's
/// first change, about 900 instructions of every update and cascade delete.
struct SlotSet: Sequence, ExpressibleByArrayLiteral, Equatable {
    private var low: UInt64 = 0
    private var high: Set<Int> = []

    init(arrayLiteral slots: Int...) {
        for slot in slots { insert(slot) }
    }

    var isEmpty: Bool { low == 0 && high.isEmpty }

    /// - Complexity: O(1)
    mutating func insert(_ slot: Int) {
        precondition(slot >= 0, "slot \(slot)")
        if slot < 64 { low |= 1 << UInt64(slot) } else { high.insert(slot) }
    }

    /// - Complexity: O(1)
    func contains(_ slot: Int) -> Bool {
        slot < 64 ? slot >= 0 && low & (1 << UInt64(slot)) != 0 : high.contains(slot)
    }

    /// The slots in ascending order.
    /// - Complexity: O(slots)
    func makeIterator() -> IndexingIterator<[Int]> {
        var slots: [Int] = []
        var rest = low
        while rest != 0 {
            slots.append(rest.trailingZeroBitCount)
            rest &= rest - 1
        }
        return (slots + high.sorted()).makeIterator()
    }
}
