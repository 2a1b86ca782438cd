import OpenSwiftDataStore

/// A context's pending inserts, in insertion order (`ModelRegistry` holds it).
///
/// A pending insert is a model the list retains until the save, or, once nothing but
/// the list held it (`spillUnheld`), a row kept in a table of its entity (`keptRows`):
/// a million such inserts held a million models and backing data until the save,
/// about 200 bytes each beyond their rows. Asked for again (a look-up by identifier, a
/// fetch that includes pending changes), its model is made again from that row, under
/// the same identifier (`revived`).
///
/// Inserts let go one after another are one slot (`KeptRun`): their temporary keys are
/// one apart (a context's count down as models are made) and their rows follow each
/// other in their table. A slot per insert was 24 bytes, grown by doubling, at the peak
/// of a large save; a run is about 40 bytes for a look's thousand inserts.
///
/// Only `slots`, `revived` and `probe` (while `spillUnheld` looks at an insert) hold
/// references. The properties skip dynamic exclusivity checks, as the registry's do.
@usableFromInline
final class PendingInserts {
    /// Inserts in order: retained models, runs of kept rows, and `.removed` where a model
    /// was removed since.
    /// A save walks them in this order, then drops the list (and `index`) whole: looking
    /// each up and removing it from a table as large as the insert was a cache miss per
    /// model, several times over (about a fifth of W1's wall clock).
    @exclusivity(unchecked) private var slots: [Slot] = []
    /// The number of pending inserts (models, kept rows and models made again).
    @exclusivity(unchecked) private(set) var count = 0
    /// Where each model slot is in `slots`, by its temporary identifier: made on the
    /// first look-up of a pending insert by identifier, kept up to date from then until
    /// the list is taken or compacted. Most saves never need it, and a table of a million
    /// entries filled insert by insert cost a cache miss each (about 9 % of W1).
    /// (`UInt32`: a table of a million entries is 24 MB smaller than with `Int`.)
    @exclusivity(unchecked) private var index: [PersistentIdentifier: UInt32]?
    /// The positions in `slots` of the runs whose keys fall in each block of 1,024 keys
    /// (`key >> 10`): where a look-up by identifier that `index` does not hold looks. A
    /// run of a look's thousand inserts is in one or two blocks; runs of one or two (keys
    /// out of order, entities in turn) share a block by the hundred. Runs' keys never
    /// overlap: a key is in one run at most (see `removedKeys`). (A table of ranges kept
    /// sorted cost O(runs) per run whose keys came above the others'.)
    @exclusivity(unchecked) private var runBlocks: [Int64: [Int32]] = [:]
    /// The keys of run inserts that were removed. An insert removed and inserted again
    /// keeps its key, so it stays a model: let go again, its key would be in two runs.
    @exclusivity(unchecked) private var removedKeys: Set<Int64> = []
    /// Kept inserts whose models were made again, by temporary key: retained here until
    /// the save; their rows are gone from `keptRows`.
    @exclusivity(unchecked) private var revived: [Int64: any PersistentModel] = [:]
    /// The slots before this one were looked at for inserts to let go (`spillUnheld`):
    /// each is looked at once.
    @exclusivity(unchecked) private(set) var spillMark = 0
    /// The list's reference to an insert while `spillUnheld` looks at it.
    @exclusivity(unchecked) private var probe: AnyObject?
    /// `probe` as a model, unretained.
    @exclusivity(unchecked) unowned(unsafe) private var probeModel: (any PersistentModel)?
    /// The rows of kept inserts, by entity, in the order of their runs (a row made a
    /// model again or removed is deleted): the columns a save hands the store as they
    /// are (`ChangeSet.ColumnInsert`), at about a third of the memory of `Row`s.
    @exclusivity(unchecked) private(set) var keptRows: [Int: Table] = [:]
    /// Rows `keep` took for `keepingFor`'s table, stored when the look ends.
    @exclusivity(unchecked) private var keeping: [Row] = []
    @exclusivity(unchecked) private var keepingFor: Int?
    /// The context, which makes the model of a kept insert again.
    unowned(unsafe) var owner: ModelContext?

    /// A slot of `slots`.
    enum Slot {
        case model(any PersistentModel)
        case kept(KeptRun)
        /// Deleted or rolled back since it was inserted.
        case removed
    }

    /// Where a pending insert is.
    private enum Location {
        case slot(Int)
        /// Element `element` of the run at `slot`.
        case run(Int, element: Int)
    }

    // MARK: Looking up

    /// `index`, made first if need be.
    /// - Complexity: O(slots) when it is made, else O(1)
    private func positions() -> [PersistentIdentifier: UInt32] {
        if let index { return index }
        var made: [PersistentIdentifier: UInt32] = [:]
        made.reserveCapacity(count)
        for (position, slot) in slots.enumerated() {
            if case let .model(model) = slot { made[model.modelBacking.identifier] = UInt32(position) }
        }
        index = made
        return made
    }

    /// Where the pending insert `id` is, if it is one.
    /// - Complexity: O(1) expected once `index` is made, plus O(runs in the key's block)
    private func location(of id: PersistentIdentifier) -> Location? {
        guard id.isTemporary, count > 0 else { return nil }
        if let position = positions()[id] { return .slot(Int(position)) }
        guard !runBlocks.isEmpty, let positions = runBlocks[id.id.key >> 10] else { return nil }
        let key = id.id.key
        for p in positions {
            let position = Int(p)
            guard case let .kept(run) = slots[position], let k = run.element(ofKey: key) else { continue }
            // (The one run that holds the key.)
            guard run.layout.temporaryScope === id.id.scope || run.layout.temporaryScope.sameNames(as: id.id.scope) else {
                return nil
            }
            return isLive(run, k) ? .run(position, element: k) : nil
        }
        return nil
    }

    /// Lists the run at `position` under the blocks its keys fall in (`runBlocks`).
    /// - Complexity: O(blocks of the run), amortized
    private func addBlocks(of run: KeptRun, at position: Int) {
        let (first, last) = (run.key(0), run.key(run.count - 1))
        for block in (min(first, last) >> 10)...(max(first, last) >> 10) {
            runBlocks[block, default: []].append(Int32(position))
        }
    }

    /// Whether element `k` of `run` is pending: its row is kept or its model was made again.
    private func isLive(_ run: KeptRun, _ k: Int) -> Bool {
        keptRows[run.entity]?.contains(run.row(k)) == true || revived[run.key(k)] != nil
    }

    /// The pending insert `id`'s model, made again if it was kept as a row.
    /// - Complexity: as `location(of:)`, plus making the model of a kept insert
    func model(for id: PersistentIdentifier) -> (any PersistentModel)? {
        switch location(of: id) {
        case let .slot(position):
            if case let .model(model) = slots[position] { return model }
            return nil
        case let .run(position, k):
            guard case let .kept(run) = slots[position] else { return nil }
            return model(of: run, k)
        case nil:
            return nil
        }
    }

    /// Whether `id` is a pending insert.
    func contains(_ id: PersistentIdentifier) -> Bool { location(of: id) != nil }

    /// The model of element `k` of `run`: made again (and retained in `revived`) if its
    /// row is kept; nil if it was removed.
    /// - Complexity: O(1), plus making the model
    private func model(of run: KeptRun, _ k: Int) -> (any PersistentModel)? {
        let key = run.key(k)
        if let model = revived[key] { return model }
        let spilled = run.insert(k)
        guard let owner, let row = keptRows[run.entity]?[spilled.row] else { return nil }
        // Its row leaves the table: the model holds the values from here.
        keptRows[run.entity]?.delete(spilled.row)
        let model = spilled.makeModel(over: row, in: owner)
        revived[key] = model
        return model
    }

    // MARK: Walking

    /// Whether a pending insert is a `T` (of `T`'s class or a subclass).
    /// - Complexity: O(slots)
    func contains<T>(of type: T.Type) -> Bool {
        for slot in slots {
            switch slot {
            case let .model(model): if model is T { return true }
            case let .kept(run): if run.live > 0, run.layout.modelType is T.Type { return true }
            case .removed: break
            }
        }
        return false
    }

    /// Every pending insert's model, in insertion order, kept ones made again.
    /// - Complexity: O(pending inserts)
    var all: [any PersistentModel] {
        var models: [any PersistentModel] = []
        models.reserveCapacity(count)
        for slot in slots {
            switch slot {
            case let .model(model):
                models.append(model)
            case let .kept(run):
                guard run.live > 0 else { continue }
                for k in 0..<run.count { if let model = model(of: run, k) { models.append(model) } }
            case .removed:
                break
            }
        }
        return models
    }

    /// The pending inserts that are a `T` (a model class), in insertion order: kept
    /// ones of that class or a subclass made again, those whose row `keptPassing`
    /// rejects (given the row and its temporary row) excepted.
    /// - Complexity: O(pending inserts)
    func models<T>(of type: T.Type, keptPassing test: ((Row, RowID) -> Bool)? = nil) -> [T] {
        var models: [T] = []
        // (A copy: making models again changes `revived` and `keptRows`, not the slots.)
        for slot in slots {
            switch slot {
            case let .model(model):
                if let model = model as? T { models.append(model) }
            case let .kept(run):
                guard run.live > 0, run.layout.modelType is T.Type else { continue }
                for k in 0..<run.count {
                    if let model = revived[run.key(k)] {
                        if let model = model as? T { models.append(model) }
                        continue
                    }
                    let spilled = run.insert(k)
                    guard let row = keptRows[run.entity]?[spilled.row] else { continue }
                    if let test, !test(row, spilled.temporaryRow) { continue }
                    if let model = model(of: run, k) as? T { models.append(model) }
                }
            case .removed:
                break
            }
        }
        return models
    }

    /// Calls `body` with each pending insert's model and `kept` with each kept one, in
    /// insertion order: those of when it was called (`body` may register models; they
    /// are not visited). Kept inserts hold no related models.
    /// - Complexity: O(pending inserts, including removed ones)
    func forEach(_ body: (any PersistentModel) throws -> Void, kept: (SpilledInsert) throws -> Void) rethrows {
        // (A copy: `body` may register or remove models.)
        let all = slots
        for slot in all {
            switch slot {
            case let .model(model):
                try body(model)
            case let .kept(run):
                guard run.live > 0 else { continue }
                if revived.isEmpty, run.live == run.count {
                    // Every row of the run is kept: nothing to look up per insert.
                    for k in 0..<run.count { try kept(run.insert(k)) }
                    continue
                }
                let table = keptRows[run.entity]
                for k in 0..<run.count {
                    if let model = revived[run.key(k)] {
                        try body(model)
                    } else if table?.contains(run.row(k)) == true {
                        try kept(run.insert(k))
                    }
                }
            case .removed:
                break
            }
        }
    }

    /// Calls `body` with each pending insert's model, in insertion order, passing over
    /// kept ones (which hold no related models): those of when it was called.
    /// - Complexity: O(slots), plus O(kept inserts) when some were made models again
    func forEachModel(_ body: (any PersistentModel) throws -> Void) rethrows {
        let all = slots
        for slot in all {
            switch slot {
            case let .model(model):
                try body(model)
            case let .kept(run):
                guard !revived.isEmpty else { continue }
                for k in 0..<run.count { if let model = revived[run.key(k)] { try body(model) } }
            case .removed:
                break
            }
        }
    }

    /// Every pending insert's model (kept ones are not made again), in no order.
    /// - Complexity: O(slots + models made again)
    var models: [any PersistentModel] {
        var models: [any PersistentModel] = []
        for case let .model(model) in slots { models.append(model) }
        return models + revived.values
    }

    // MARK: Changing

    /// Appends `model`, registered under the temporary identifier `id`, which must not
    /// be pending already.
    /// - Complexity: amortized O(1)
    func append(_ model: any PersistentModel, as id: PersistentIdentifier) {
        assert(index?[id] == nil, "\(id) is a pending insert already")
        index?[id] = UInt32(slots.count)
        slots.append(.model(model))
        count += 1
    }

    /// Removes the pending insert `id`; returns the model it held (nil for a kept
    /// insert), which the caller keeps alive until it is done with it; nil, false when
    /// `id` is not pending.
    /// - Complexity: O(1) expected, as `location(of:)`
    func remove(_ id: PersistentIdentifier) -> (found: Bool, model: (any PersistentModel)?) {
        var removed: (any PersistentModel)?
        switch location(of: id) {
        case nil:
            return (false, nil)
        case let .slot(position):
            index![id] = nil
            if case let .model(model) = slots[position] { removed = model }
            slots[position] = .removed
        case let .run(position, k):
            guard case var .kept(run) = slots[position] else { return (false, nil) }
            if let model = revived.removeValue(forKey: run.key(k)) {
                removed = model
            } else {
                keptRows[run.entity]?.delete(run.row(k))
            }
            removedKeys.insert(run.key(k))
            run.live -= 1
            slots[position] = .kept(run)
        }
        count -= 1
        if count == 0 {
            reset()
        } else if slots.count >= 64, count * 2 < slots.count {
            compact()
        }
        return (true, removed)
    }

    /// Traps unless `count` is the number of pending inserts the slots hold, each
    /// run's live elements are within it, the look's mark is within the list, every
    /// position `index` holds is a model's slot, and every model made again is of a
    /// key no removal took.
    /// - Complexity: O(slots + index + revived)
    func _checkInvariants() {
        var pending = 0
        for slot in slots {
            switch slot {
            case .model: pending += 1
            case let .kept(run):
                precondition(run.live <= UInt32(run.count), "a run has more live elements than elements")
                pending += Int(run.live)
            case .removed: break
            }
        }
        precondition(pending == count, "the count is not the number of pending inserts")
        precondition(spillMark <= slots.count, "the look's mark is past the list")
        for (_, position) in index ?? [:] {
            guard Int(position) < slots.count, case .model = slots[Int(position)] else {
                preconditionFailure("the index names a slot that holds no model")
            }
        }
        for key in revived.keys { precondition(!removedKeys.contains(key), "a removed insert was made again") }
    }

    /// Empties the list.
    private func reset() {
        slots = []
        count = 0
        index = nil
        runBlocks = [:]
        removedKeys = []
        revived = [:]
        spillMark = 0
        keptRows = [:]
    }

    /// Drops the removed slots (and runs with nothing pending) once they are the
    /// majority, so inserting and deleting drafts again and again between saves does
    /// not grow the list (or the walks over it) without bound.
    /// - Complexity: O(slots), amortized O(1) per removal
    private func compact() {
        var kept: [Slot] = []
        var mark = 0
        runBlocks = [:]
        for (position, slot) in slots.enumerated() {
            switch slot {
            case .removed: continue
            case let .kept(run):
                guard run.live > 0 else { continue }
                addBlocks(of: run, at: kept.count)
            case .model: break
            }
            kept.append(slot)
            if position < spillMark { mark = kept.count }
        }
        slots = kept
        spillMark = mark
        index = nil
    }

    // MARK: Letting go

    /// The number of slots, removed ones included (where `spillUnheld` may look).
    var slotCount: Int { slots.count }

    /// Lets go the pending inserts of slots `spillMark..<end` that nothing but this list
    /// holds and `record` keeps the row of (it returns nil for those it keeps as
    /// models); each slot is looked at once. The slots looked at are replaced: models
    /// kept, runs of the inserts let go, no removed ones.
    /// - Complexity: O(end − spillMark)
    func spillUnheld(upTo end: Int, _ record: (any PersistentModel) -> SpilledInsert?) {
        guard end > spillMark else { return }
        var looked: [Slot] = []
        for position in spillMark..<end {
            switch slots[position] {
            case .removed:
                continue
            case .kept:
                looked.append(slots[position])
                continue
            case .model:
                break
            }
            moveToProbe(position)
            // `probe` holds the list's reference now, in a stored property, where
            // whether it is the only one is asked in place (asked of a local or of an
            // existential, it is asked of a copy in a debug build, and is never so).
            if isKnownUniquelyReferenced(&probe), let model = probeModel,
               removedKeys.isEmpty || !removedKeys.contains(model.modelBacking.identifier.id.key),
               let spilled = record(model) {
                index?[spilled.identifier] = nil
                if case var .kept(run) = looked.last, run.extend(with: spilled) {
                    looked[looked.count - 1] = .kept(run)
                } else {
                    looked.append(.kept(KeptRun(spilled)))
                }
            } else {
                looked.append(.model(probeModel!))
            }
            probeModel = nil
            probe = nil
        }
        storeKeptRows()
        slots.replaceSubrange(spillMark..<end, with: looked)
        for (offset, slot) in looked.enumerated() {
            if case let .kept(run) = slot { addBlocks(of: run, at: spillMark + offset) }
        }
        if index != nil {
            // The slots from here on moved.
            for position in spillMark..<slots.count {
                if case let .model(model) = slots[position] { index![model.modelBacking.identifier] = UInt32(position) }
            }
        }
        spillMark += looked.count
    }

    /// Moves the model of slot `position` to `probe` (and `probeModel`); the slot is
    /// left removed. Not inlined: the copies it makes are gone when it returns.
    @inline(never)
    private func moveToProbe(_ position: Int) {
        guard case let .model(model) = slots[position] else { return }
        slots[position] = .removed
        probe = model
        probeModel = model
    }

    /// Keeps `row`, of `entity` (described by `description`, asked when its table is
    /// made), for an insert let go: the identifier it is kept under. The rows of one
    /// look (`spillUnheld`) go into the table together, column by column, when it ends:
    /// one by one they cost about 70 % more.
    /// - Complexity: amortized O(1), plus O(slots) when the rows are stored
    func keep(_ row: Row, of entity: Int, description: () -> EntityDescription) -> RowID {
        if let batching = keepingFor, batching != entity { storeKeptRows() }
        if keptRows[entity] == nil { keptRows[entity] = Table(entity: description()) }
        keepingFor = entity
        keeping.append(row)
        return RowID(keptRows[entity]!.nextRawID + Int64(keeping.count - 1))
    }

    /// Stores the rows `keep` gathered.
    /// - Complexity: O(rows × slots)
    private func storeKeptRows() {
        guard let entity = keepingFor else { return }
        keptRows[entity]!.insert(contentsOf: keeping)
        keeping.removeAll(keepingCapacity: true)
        keepingFor = nil
    }

    /// The row of a kept insert.
    /// - Complexity: O(slots of the row)
    func row(of spilled: SpilledInsert) -> Row? { keptRows[spilled.entity]?[spilled.row] }

    /// Whether some pending insert is kept as a row.
    var hasKeptRows: Bool { keptRows.values.contains { $0.count > 0 } }

    /// Empties the list and hands its inserts over, in insertion order (to a save that
    /// stored them, or a rollback).
    /// - Complexity: O(1)
    func take() -> TakenInserts {
        let taken = TakenInserts(slots: slots, revived: revived, keptRows: keptRows, count: count)
        reset()
        return taken
    }
}

/// A pending insert, as `TakenInserts` hands it over.
enum TakenInsert {
    case model(any PersistentModel)
    /// Kept as a row: the row is what the save stores.
    case kept(SpilledInsert)
}

/// The pending inserts a save or rollback took (`PendingInserts.take()`), handed over
/// one by one in insertion order. A model handed over is no longer held here, so the
/// caller can ask whether it holds the only reference.
struct TakenInserts {
    private var slots: [PendingInserts.Slot]
    private var revived: [Int64: any PersistentModel]
    private let keptRows: [Int: Table]
    /// The number of inserts not handed over yet.
    private(set) var remaining: Int
    private var position = 0
    private var element = 0

    fileprivate init(slots: [PendingInserts.Slot], revived: [Int64: any PersistentModel], keptRows: [Int: Table], count: Int) {
        self.slots = slots
        self.revived = revived
        self.keptRows = keptRows
        remaining = count
    }

    /// The next insert, or nil after the last.
    /// - Complexity: amortized O(1)
    mutating func next() -> TakenInsert? {
        while position < slots.count {
            switch slots[position] {
            case .removed:
                position += 1
            case let .model(model):
                slots[position] = .removed
                position += 1
                remaining -= 1
                return .model(model)
            case let .kept(run):
                while element < run.count {
                    let k = element
                    element += 1
                    // (Every row of a run none of whose inserts went is kept.)
                    if revived.isEmpty, run.live == run.count {
                        remaining -= 1
                        return .kept(run.insert(k))
                    }
                    if let model = revived.removeValue(forKey: run.key(k)) {
                        remaining -= 1
                        return .model(model)
                    }
                    if keptRows[run.entity]?.contains(run.row(k)) == true {
                        remaining -= 1
                        return .kept(run.insert(k))
                    }
                }
                element = 0
                position += 1
            }
        }
        return nil
    }
}

/// Pending inserts let go one after another: of one layout and entity, temporary keys
/// one apart (counting down, as a context makes them, or up), rows consecutive in
/// their entity's table of kept rows. Element `k` is pending while its row is kept or
/// its model was made again (`PendingInserts.revived`).
struct KeptRun {
    let layout: EntityLayout
    let firstKey: Int64
    let entityIndex: Int32
    let firstRow: UInt32
    private(set) var length: UInt32 = 1
    /// The keys' direction, +1 or −1 (0 while the run has one element).
    private var step: Int8 = 0
    /// The elements not removed.
    var live: UInt32 = 1

    init(_ spilled: SpilledInsert) {
        layout = spilled.layout
        firstKey = spilled.temporaryRow.rawValue
        entityIndex = Int32(spilled.entity)
        firstRow = UInt32(spilled.row.rawValue)
    }

    var count: Int { Int(length) }
    var entity: Int { Int(entityIndex) }
    func key(_ k: Int) -> Int64 { firstKey + Int64(k) * Int64(step) }
    func row(_ k: Int) -> RowID { RowID(Int64(firstRow) + Int64(k)) }

    /// The element whose key is `key`, if the run holds it.
    func element(ofKey key: Int64) -> Int? {
        let offset = (key - firstKey) * Int64(step == 0 ? 1 : step)
        return offset >= 0 && offset < Int64(length) ? Int(offset) : nil
    }

    /// Element `k` as a kept insert.
    func insert(_ k: Int) -> SpilledInsert {
        SpilledInsert(layout: layout, key: key(k), entity: entityIndex, row: UInt32(truncatingIfNeeded: Int64(firstRow) + Int64(k)))
    }

    /// Appends `spilled` when it continues the run: returns false when it does not.
    mutating func extend(with spilled: SpilledInsert) -> Bool {
        guard spilled.layout === layout, spilled.entity == entity, length < UInt32.max,
              spilled.row.rawValue == Int64(firstRow) + Int64(length) else { return false }
        let key = spilled.temporaryRow.rawValue
        if step == 0 {
            guard key == firstKey + 1 || key == firstKey - 1 else { return false }
            step = key > firstKey ? 1 : -1
        } else if key != firstKey + Int64(length) * Int64(step) {
            return false
        }
        length += 1
        live += 1
        return true
    }
}
