import Synchronization

/// A column's value buffer: an array whose copies share one storage, copied on a
/// write as an array is, but for an append at the storage's end.
///
/// A commit that inserts a row builds a new store version from the published one,
/// whose open segment's columns it shares. With arrays, the append copied each of
/// those columns whole (up to `Table.segmentSize` values, a string retained each),
/// and the old copy was destroyed with the old version: 18 % of a server's samples
/// under concurrent inserts (#42). Here an append at the end of shared storage
/// writes the slot past every version's count and takes it, so the new version
/// holds one more value and the published ones, which never read past their
/// count, do not see it. A version that appends where another already took the
/// slot (two versions made from one), a write to a value (`subscript` set), and an
/// append past the capacity copy; the copy has the storage's capacity, doubled only
/// when full.
///
/// The storage's `taken` count is claimed by compare-and-exchange, so two writers
/// can never take one slot; what they write is published to readers with the
/// version that holds it (the store's publication orders it).
/// - Complexity: O(1) reads, writes of a unique storage and appends at a shared
///   storage's end; O(n) for a write or append that copies.
struct AppendBuffer<Element>: @unchecked Sendable {
    /// Values `0..<taken` are initialized; each buffer holding the storage reads a
    /// prefix of them, its `count`.
    final class Storage {
        let elements: UnsafeMutablePointer<Element>
        let capacity: Int
        /// How many slots are initialized: the count of the buffer that appended last.
        let taken = Atomic<Int>(0)

        init(capacity: Int) {
            self.capacity = capacity
            elements = .allocate(capacity: Swift.max(capacity, 1))
        }

        deinit {
            elements.deinitialize(count: taken.load(ordering: .acquiring))
            elements.deallocate()
        }
    }

    private var storage: Storage?
    private(set) var count = 0

    init() {}

    init(_ values: [Element]) {
        guard !values.isEmpty else { return }
        let storage = Storage(capacity: values.count)
        values.withUnsafeBufferPointer { source in
            _ = UnsafeMutableBufferPointer(start: storage.elements, count: values.count).initialize(fromContentsOf: source)
        }
        storage.taken.store(values.count, ordering: .releasing)
        self.storage = storage
        count = values.count
    }

    /// `count` copies of `value`, to be overwritten in place (a document's column
    /// read without an array first).
    init(repeating value: Element, count: Int) {
        guard count > 0 else { return }
        let storage = Storage(capacity: count)
        storage.elements.initialize(repeating: value, count: count)
        storage.taken.store(count, ordering: .releasing)
        self.storage = storage
        self.count = count
    }

    var capacity: Int { storage?.capacity ?? 0 }

    /// The values as an array (a copy).
    var array: [Element] { withUnsafeBufferPointer { Array($0) } }

    subscript(position: Int) -> Element {
        get {
            precondition(position >= 0 && position < count, "position \(position) outside \(count) values")
            return storage.unsafelyUnwrapped.elements[position]
        }
        set {
            precondition(position >= 0 && position < count, "position \(position) outside \(count) values")
            makeUnique(capacity: capacity)
            storage.unsafelyUnwrapped.elements[position] = newValue
        }
    }

    /// Appends `value`: in place when the storage is this buffer's alone or this
    /// buffer ends where it was last appended to, by a copy otherwise.
    mutating func append(_ value: Element) {
        // (Uniqueness is asked before any local reference to the storage is made.)
        if storage != nil, isKnownUniquelyReferenced(&storage) {
            let storage = storage.unsafelyUnwrapped
            if count < storage.capacity {
                // Slots past this count (taken by a version since dropped) are freed first.
                let taken = storage.taken.load(ordering: .relaxed)
                if taken > count { (storage.elements + count).deinitialize(count: taken - count) }
                (storage.elements + count).initialize(to: value)
                storage.taken.store(count + 1, ordering: .releasing)
                count += 1
                return
            }
        } else if let storage, count < storage.capacity,
                  storage.taken.compareExchange(expected: count, desired: count + 1, ordering: .acquiringAndReleasing).exchanged {
            (storage.elements + count).initialize(to: value)
            count += 1
            return
        }
        // Doubled only when full: a copy forced by a taken slot (a version made from
        // the same one appended first, say a commit that then failed) keeps the size.
        makeUnique(capacity: count < capacity ? capacity : Swift.max(count + 1, capacity * 2, 16))
        append(value)
    }

    /// Makes room for `minimumCapacity` values.
    mutating func reserveCapacity(_ minimumCapacity: Int) {
        guard minimumCapacity > capacity else { return }
        makeUnique(capacity: minimumCapacity)
    }

    /// Calls `body` with the values in place, to change them (the storage made this
    /// buffer's own first).
    mutating func withUnsafeMutableBufferPointer<R>(_ body: (UnsafeMutableBufferPointer<Element>) throws -> R) rethrows -> R {
        makeUnique(capacity: capacity)
        return try body(UnsafeMutableBufferPointer(start: storage?.elements, count: count))
    }

    /// Calls `body` with the values in place.
    func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<Element>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(start: storage?.elements, count: count))
    }

    /// Gives this buffer a storage of its own, of `capacity` slots at least, when its
    /// storage is shared or smaller.
    private mutating func makeUnique(capacity wanted: Int) {
        if storage != nil, isKnownUniquelyReferenced(&storage), storage!.capacity >= wanted { return }
        let copy = Storage(capacity: Swift.max(wanted, count))
        if let storage { (copy.elements).initialize(from: storage.elements, count: count) }
        copy.taken.store(count, ordering: .releasing)
        storage = copy
    }
}

extension AppendBuffer: RandomAccessCollection {
    var startIndex: Int { 0 }
    var endIndex: Int { count }
}

extension AppendBuffer: ExpressibleByArrayLiteral {
    init(arrayLiteral elements: Element...) {
        self.init(elements)
    }
}
