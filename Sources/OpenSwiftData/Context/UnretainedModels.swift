/// The saved, unchanged models a context holds without retaining them, by
/// identifier (`ModelRegistry`).
///
/// Every model a fetch makes is looked up here, added, and removed when it ends, so
/// this is an open-addressing table of its own, with linear probing and
/// backward-shift deletion: a `Dictionary` keyed by identifier cost about 800
/// instructions a model for the three (generic probing, entry copies through value
/// witnesses, rehashing the neighbours of a removed entry).
///
/// Entries hold models `unowned(unsafe)`: nothing done here ends a model, so a
/// model's end (which removes its entry, `forget`) never lands in the middle of
/// another operation. The only references entries retain are identifier scopes that
/// are not shared (`IdentifierScope.isShared`), whose end does nothing else.
final class UnretainedModels {
    /// A model and its identifier's parts: a trivial value, so probing, moving and
    /// resizing copy bytes (an optional scope reference in it was copied through
    /// `Optional`'s value witnesses, about 80 instructions a copy).
    struct Entry {
        let key: Int64
        /// The identifier's scope, compared by identity first (`PersistentIdentifier.ID`'s
        /// `==`); retained by the entry when `ownsScope`.
        let scope: Unmanaged<IdentifierScope>
        /// Whether the entry holds a reference to its scope: only when the scope is
        /// not shared (`IdentifierScope.isShared`). A shared scope outlives the
        /// context, so filling and emptying the table retains and releases none, where
        /// each entry cost two atomic operations on one object every identifier shares.
        let ownsScope: Bool
        unowned(unsafe) let model: any PersistentModel
        /// Tells this model's entry from a newer model's under the same identifier.
        let backing: ObjectIdentifier

        /// An entry that owns a reference to its scope when it is not shared; the
        /// table gives it up with the entry (`release()`).
        init(_ id: PersistentIdentifier, model: any PersistentModel, backing: ObjectIdentifier) {
            let scope = id.id.scope
            key = id.id.key
            ownsScope = !scope.isShared
            self.scope = ownsScope ? .passRetained(scope) : .passUnretained(scope)
            self.model = model
            self.backing = backing
        }

        @inline(__always)
        func names(key: Int64, scope: IdentifierScope) -> Bool {
            guard self.key == key else { return false }
            return self.scope.toOpaque() == Unmanaged.passUnretained(scope).toOpaque()
                || self.scope._withUnsafeGuaranteedRef { $0.sameNames(as: scope) }
        }

        /// Gives up the entry's reference to its scope, if it owns one.
        func release() {
            if ownsScope { scope.release() }
        }
    }

    /// `mask + 1` slots, a power of two; nil where empty. No entry has an empty slot
    /// between its home slot (`home(of:)`) and its place.
    @exclusivity(unchecked) private var slots: UnsafeMutablePointer<Entry?>
    @exclusivity(unchecked) private var mask: Int
    @exclusivity(unchecked) private(set) var count = 0
    /// Mixed into every hash, so keys chosen to collide in one table do not in another.
    private let seed = UInt64.random(in: .min ... .max)

    init() {
        mask = 15
        slots = Self.emptySlots(16)
    }

    deinit {
        for slot in 0 ... mask { slots[slot]?.release() }
        slots.deinitialize(count: mask + 1)
        slots.deallocate()
    }

    var isEmpty: Bool { count == 0 }

    /// The model registered under `id`.
    /// - Complexity: O(1) expected
    subscript(id: PersistentIdentifier) -> (any PersistentModel)? {
        guard count > 0, let slot = slot(of: id) else { return nil }
        return slots[slot]!.model
    }

    /// Whether a model is registered under `id`.
    /// - Complexity: O(1) expected
    func contains(_ id: PersistentIdentifier) -> Bool {
        count > 0 && slot(of: id) != nil
    }

    /// Registers `model`, whose backing data is `backing`, under `id`, in place of
    /// the entry there.
    /// - Complexity: O(1) amortized
    func set(_ model: any PersistentModel, backing: ObjectIdentifier, for id: PersistentIdentifier) {
        let entry = Entry(id, model: model, backing: backing)
        if let slot = slot(of: id) {
            slots[slot]!.release()
            slots[slot] = entry
            return
        }
        if (count + 1) * 4 > (mask + 1) * 3 { resize(to: (mask + 1) * 2) }
        place(entry)
        count += 1
    }

    /// Registers `model`, whose backing data is `backing`, under `id`, which has no
    /// entry (a model just made for a row found in no entry): no look-up first.
    /// - Complexity: O(1) amortized
    func add(_ model: any PersistentModel, backing: ObjectIdentifier, for id: PersistentIdentifier) {
        assert(!contains(id), "a second entry under one identifier")
        if (count + 1) * 4 > (mask + 1) * 3 { resize(to: (mask + 1) * 2) }
        place(Entry(id, model: model, backing: backing))
        count += 1
    }

    /// Unregisters `id`; returns the model it held.
    /// - Complexity: O(1) expected
    @discardableResult
    func remove(_ id: PersistentIdentifier) -> (any PersistentModel)? {
        guard count > 0, let slot = slot(of: id) else { return nil }
        let model = slots[slot]!.model
        removeEntry(at: slot)
        return model
    }

    /// Removes the entry of `id` if it is still the one of backing data `backing`
    /// (which is ending).
    /// - Complexity: O(1) expected
    func forget(_ id: PersistentIdentifier, backing: ObjectIdentifier) {
        guard let slot = slot(of: id), slots[slot]!.backing == backing else { return }
        removeEntry(at: slot)
    }

    /// Makes room for `capacity` entries in all, so that adding them resizes at most once.
    /// - Complexity: O(count) when the table grows, else O(1)
    func reserveCapacity(_ capacity: Int) {
        var size = mask + 1
        while capacity * 4 > size * 3 { size *= 2 }
        if size > mask + 1 { resize(to: size) }
    }

    /// Every registered model, in no particular order.
    /// - Complexity: O(slots)
    var models: [any PersistentModel] {
        var models: [any PersistentModel] = []
        models.reserveCapacity(count)
        for slot in 0 ... mask {
            if let entry = slots[slot] { models.append(entry.model) }
        }
        return models
    }

    // MARK: Probing

    @inline(__always)
    private func home(of key: Int64) -> Int {
        // The finalizer of MurmurHash3: row keys one apart land far apart.
        var x = UInt64(bitPattern: key) ^ seed
        x = (x ^ (x >> 33)) &* 0xFF51_AFD7_ED55_8CCD
        x = (x ^ (x >> 33)) &* 0xC4CE_B9FE_1A85_EC53
        return Int(truncatingIfNeeded: x ^ (x >> 33)) & mask
    }

    /// The slot of the entry under `id`.
    @inline(__always)
    private func slot(of id: PersistentIdentifier) -> Int? {
        let key = id.id.key, scope = id.id.scope
        var slot = home(of: key)
        while let entry = slots[slot] {
            if entry.names(key: key, scope: scope) { return slot }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// Puts `entry`, under an identifier with no entry, in the first empty slot from its home.
    private func place(_ entry: Entry) {
        var slot = home(of: entry.key)
        while slots[slot] != nil { slot = (slot + 1) & mask }
        slots[slot] = entry
    }

    /// Empties `slot`, moving back each later entry of its run that may move into the
    /// hole (its home is not between the hole and its place), so that no entry has an
    /// empty slot between its home and its place and no marker of a removed entry is
    /// needed.
    private func removeEntry(at slot: Int) {
        var hole = slot
        slots[hole]!.release()
        slots[hole] = nil
        var next = (hole + 1) & mask
        while let entry = slots[next] {
            let home = home(of: entry.key)
            // Distances counted forward, around the end: the entry may fill the hole
            // when its home is at or before the hole.
            if (next &- home) & mask >= (next &- hole) & mask {
                swap(&slots[hole], &slots[next])
                hole = next
            }
            next = (next + 1) & mask
        }
        count -= 1
        checkInvariants()
    }

    private func resize(to size: Int) {
        let old = slots, oldSize = mask + 1
        slots = Self.emptySlots(size)
        mask = size - 1
        for slot in 0 ..< oldSize {
            if let entry = (old + slot).move() { place(entry) }
        }
        old.deallocate()
        checkInvariants()
    }

    private static func emptySlots(_ size: Int) -> UnsafeMutablePointer<Entry?> {
        let slots = UnsafeMutablePointer<Entry?>.allocate(capacity: size)
        slots.initialize(repeating: nil, count: size)
        return slots
    }

    // MARK: Invariants

    /// Checks, in debug builds, what probing relies on: the count, the load, and no
    /// empty slot between an entry's home and its place. Only tables of up to 1,024
    /// slots: the check reads them all, and a test making a million models would
    /// otherwise be quadratic.
    @inline(__always)
    func checkInvariants() {
        #if DEBUG
        if mask < 1_024 { _checkInvariants() }
        #endif
    }

    /// `checkInvariants()` in every build, for tests.
    /// - Complexity: O(slots × longest run)
    func _checkInvariants() {
        var found = 0
        for slot in 0 ... mask {
            guard let entry = slots[slot] else { continue }
            found += 1
            var probe = home(of: entry.key)
            while probe != slot {
                precondition(slots[probe] != nil, "an empty slot between an entry's home and its place")
                probe = (probe + 1) & mask
            }
        }
        precondition(found == count, "the count is not the number of entries")
        precondition(count * 4 <= (mask + 1) * 3, "the table is fuller than its load allows")
    }
}
