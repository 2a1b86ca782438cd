import OpenSwiftDataStore

/// The models a context knows, by identifier: one object per row per context.
///
/// Models with unsaved changes (inserted, changed or deleted since the last save) are
/// retained, since the next save needs them. Saved, unchanged models are not: as a Core
/// Data context does, the context holds them only while something else does (the app,
/// or a related model's resolved relationship), so fetching or inserting a million
/// models does not keep a million alive once the app lets them go. A fetch of the same
/// row afterwards makes a new object.
///
/// An unretained entry never outlives its model: the model's backing data removes it
/// when it goes (`ModelBackingData.deinit` calls `forget`). That costs nothing per
/// model, where a weak reference costs a side-table allocation each and leaves dead
/// entries to sweep. It relies on what Swift 6 enforces for a non-`Sendable` model:
/// its last reference is dropped where its context is used.
///
/// A pending insert nothing but the context holds (the app made it, inserted it and let
/// it go, as a bulk import does) is let go too, its row kept in its place
/// (`SpilledInsert`): a million such inserts held a million models and backing data
/// until the save, about 200 bytes each beyond their rows. Asked for again (a
/// look-up by identifier, a fetch that includes pending changes), it is made again
/// from that row, under the same identifier.
///
/// Only `retained`, `pending` and `probe` (while `spillUnheld` looks at an insert)
/// hold references, so mutating `unretained` never ends a model, and the `forget` a
/// model's end triggers (while those change) touches `unretained` only: no access
/// overlaps another, and the two skip dynamic exclusivity checks (two
/// `swift_beginAccess` calls, about 160 instructions, per model that ends).
final class ModelRegistry {
    /// A saved, unchanged model, unretained; `backing` tells its entry from a newer
    /// model's entry under the same identifier.
    private struct Unretained {
        unowned(unsafe) let model: any PersistentModel
        let backing: ObjectIdentifier
    }

    /// Saved models with unsaved changes (changed or deleted), retained; also a
    /// pending insert a custom store's save left unstored and a later change retains.
    @exclusivity(unchecked) private var retained: [PersistentIdentifier: any PersistentModel] = [:]
    @exclusivity(unchecked) private var unretained: [RegistryKey: Unretained] = [:]
    /// Pending inserts in insertion order: retained models, spilled ones, and `.removed`
    /// where one was removed since.
    /// A save walks them in this order, then drops the list (and `pendingIndex`)
    /// whole: looking each up and removing it from a table as large as the insert was a
    /// cache miss per model, several times over (about a fifth of W1's wall clock).
    @exclusivity(unchecked) private var pending: [PendingSlot] = []
    /// The number of pending inserts (the slots of `pending` that are not removed).
    @exclusivity(unchecked) private(set) var pendingCount = 0
    /// Where each pending insert is in `pending`, by its temporary identifier: made on
    /// the first look-up of a pending insert by identifier, kept up to date from then
    /// until the list is taken or compacted. Most saves never need it, and a table of a million
    /// entries filled insert by insert cost a cache miss each (about 9 % of W1).
    /// (`UInt32`: a table of a million entries is 24 MB smaller than with `Int`.)
    @exclusivity(unchecked) private var pendingIndex: [PersistentIdentifier: UInt32]?
    /// The slots of `pending` before this one were looked at for inserts to let go
    /// (`spillUnheld`): each is looked at once.
    @exclusivity(unchecked) private(set) var spillMark = 0
    /// The registry's reference to a pending insert while `spillUnheld` looks at it.
    @exclusivity(unchecked) private var probe: AnyObject?
    /// `probe` as a model, unretained.
    @exclusivity(unchecked) unowned(unsafe) private var probeModel: (any PersistentModel)?
    /// The rows of spilled inserts, by entity, in the order of their slots in `pending`
    /// (a slot spilled is appended; one made a model again or removed is deleted): the
    /// columns a save hands the store as they are (`ChangeSet.ColumnInsert`), at about
    /// a third of the memory of `Row`s.
    @exclusivity(unchecked) private(set) var keptRows: [Int: Table] = [:]
    /// Rows `keep` took for `keepingFor`'s table, stored when the look ends.
    @exclusivity(unchecked) private var keeping: [Row] = []
    @exclusivity(unchecked) private var keepingFor: Int?
    /// The context, which makes the model of a spilled insert again.
    unowned(unsafe) var owner: ModelContext?

    /// A slot of `pending`.
    enum PendingSlot {
        case model(any PersistentModel)
        /// A pending insert whose model was let go: its row is what the save stores.
        case spilled(SpilledInsert)
        /// Deleted or rolled back since it was inserted.
        case removed
    }

    /// `pendingIndex`, made first if need be.
    /// - Complexity: O(pending slots) when it is made, else O(1)
    private func pendingPositions() -> [PersistentIdentifier: UInt32] {
        if let index = pendingIndex { return index }
        var index: [PersistentIdentifier: UInt32] = [:]
        index.reserveCapacity(pendingCount)
        for (position, slot) in pending.enumerated() {
            switch slot {
            case let .model(model): index[model.modelBacking.identifier] = UInt32(position)
            case let .spilled(spilled): index[spilled.identifier] = UInt32(position)
            case .removed: break
            }
        }
        pendingIndex = index
        return index
    }

    /// The position in `pending` of the pending insert `id`, if it is one.
    /// - Complexity: O(1) expected, once `pendingIndex` is made
    private func pendingPosition(of id: PersistentIdentifier) -> Int? {
        guard id.isTemporary, pendingCount > 0 else { return nil }
        return pendingPositions()[id].map(Int.init)
    }

    /// The registered model for `id`, if any.
    /// - Complexity: O(1) expected (the first look-up of a pending insert: O(pending inserts))
    subscript(id: PersistentIdentifier) -> (any PersistentModel)? {
        if let model = retained[id] { return model }
        if let entry = unretained[RegistryKey(id)] { return entry.model }
        return pendingPosition(of: id).flatMap { pendingModel(at: $0) }
    }

    /// The model of pending slot `position`, made again if it was spilled; nil if removed.
    /// - Complexity: O(1), plus making the model of a spilled insert
    private func pendingModel(at position: Int) -> (any PersistentModel)? {
        switch pending[position] {
        case let .model(model):
            return model
        case let .spilled(spilled):
            guard let owner, let row = keptRows[spilled.entity]?[spilled.row] else { return nil }
            // Its row leaves the table: the model holds the values from here.
            keptRows[spilled.entity]?.delete(spilled.row)
            let model = spilled.makeModel(over: row, in: owner)
            pending[position] = .model(model)
            return model
        case .removed:
            return nil
        }
    }

    /// Whether `id` names a model with unsaved changes (one the context retains).
    /// - Complexity: O(1) expected (the first look-up of a pending insert: O(pending inserts))
    func isRetained(_ id: PersistentIdentifier) -> Bool { retained[id] != nil || pendingPosition(of: id) != nil }

    /// Whether `id`, with a temporary identifier and registered here, is retained: a
    /// pending insert (or one a custom store left unsaved and a change retains).
    /// Without a look-up by identifier in the pending list, which a change to each of a
    /// million pending inserts would otherwise make.
    /// - Complexity: O(1) expected
    func isRetainedInsert(registered id: PersistentIdentifier) -> Bool {
        id.isTemporary && (unretained.isEmpty || unretained[RegistryKey(id)] == nil)
    }

    /// The number of registered models.
    var count: Int { retained.count + unretained.count + pendingCount }

    /// Whether any model is a pending insert.
    var hasPendingInserts: Bool { pendingCount > 0 }

    /// Whether a pending insert is a `T` (of `T`'s class or a subclass).
    /// - Complexity: O(pending inserts, including removed ones)
    func containsPendingInsert<T>(of type: T.Type) -> Bool {
        for slot in pending {
            switch slot {
            case let .model(model): if model is T { return true }
            case let .spilled(spilled): if spilled.layout.modelType is T.Type { return true }
            case .removed: break
            }
        }
        return false
    }

    /// The pending inserts, in insertion order (spilled ones made again).
    /// - Complexity: O(pending inserts, including removed ones)
    var pendingInserts: [any PersistentModel] {
        var models: [any PersistentModel] = []
        models.reserveCapacity(pendingCount)
        for position in pending.indices {
            if let model = pendingModel(at: position) { models.append(model) }
        }
        return models
    }

    /// The pending inserts that are a `T` (a model class), in insertion order: spilled
    /// ones of that class or a subclass made again, those whose row `keptPassing`
    /// rejects (given the row and its temporary row) excepted.
    /// - Complexity: O(pending inserts, including removed ones)
    func pendingInserts<T>(of type: T.Type, keptPassing test: ((Row, RowID) -> Bool)? = nil) -> [T] {
        var models: [T] = []
        for position in pending.indices {
            switch pending[position] {
            case let .model(model): if let model = model as? T { models.append(model) }
            case let .spilled(spilled):
                guard spilled.layout.modelType is T.Type else { continue }
                if let test, let row = row(of: spilled), !test(row, spilled.temporaryRow) { continue }
                if let model = pendingModel(at: position) as? T { models.append(model) }
            case .removed: break
            }
        }
        return models
    }

    /// Makes room for `additional` more unretained entries (a fetch about to make
    /// that many models): one resize, where growing entry by entry doubled the table
    /// several times over.
    /// - Complexity: O(registered models) when the table grows, else O(1)
    func reserveUnretained(_ additional: Int) {
        unretained.reserveCapacity(unretained.count + additional)
    }

    /// Calls `body` with each pending insert's model and `spilled` with each spilled
    /// one, in insertion order: those of when it was called (`body` may register
    /// models; they are not visited). Spilled inserts hold no related models.
    /// - Complexity: O(pending inserts, including removed ones)
    func forEachPendingInsert(
        _ body: (any PersistentModel) throws -> Void, spilled: (SpilledInsert) throws -> Void
    ) rethrows {
        // (A copy: `body` may register or remove models.)
        let slots = pending
        for slot in slots {
            switch slot {
            case let .model(model): try body(model)
            case let .spilled(record): try spilled(record)
            case .removed: break
            }
        }
    }

    /// Calls `body` with each pending insert's model, in insertion order, passing over
    /// spilled ones (which hold no related models): those of when it was called.
    /// - Complexity: O(pending inserts, including removed ones)
    func forEachPendingModel(_ body: (any PersistentModel) throws -> Void) rethrows {
        for case let .model(model) in pending { try body(model) }
    }

    /// Lets go the pending inserts from `spillMark` up to `end` that nothing but this
    /// registry holds and `record` keeps the row of (it returns nil for those it keeps
    /// as models); each slot is looked at once.
    /// - Complexity: O(end − spillMark)
    func spillUnheld(upTo end: Int, _ record: (any PersistentModel) -> SpilledInsert?) {
        guard end > spillMark else { return }
        for position in spillMark..<end where moveToProbe(position) {
            // `probe` holds the registry's reference now, in a stored property, where
            // whether it is the only one is asked in place (asked of a local or of an
            // existential, it is asked of a copy in a debug build, and is never so).
            if isKnownUniquelyReferenced(&probe), let model = probeModel, let spilled = record(model) {
                pending[position] = .spilled(spilled)
            } else {
                pending[position] = .model(probeModel!)
            }
            probeModel = nil
            probe = nil
        }
        storeKeptRows()
        spillMark = end
    }

    /// Moves the model of pending slot `position`, if it holds one, to `probe` (and
    /// `probeModel`); the slot is left removed. Not inlined: the copies it makes are
    /// gone when it returns.
    @inline(never)
    private func moveToProbe(_ position: Int) -> Bool {
        guard case let .model(model) = pending[position] else { return false }
        pending[position] = .removed
        probe = model
        probeModel = model
        return true
    }

    /// The number of pending slots, removed ones included (where `spillUnheld` may look).
    var pendingSlotCount: Int { pending.count }

    /// Unregisters every pending insert at once and hands them over, in insertion
    /// order with `.removed` where one was removed (to a save that stored them: it registers
    /// again, under permanent identifiers, those something else still holds, making
    /// room for them when the first one comes: `reserveUnretained`).
    /// - Complexity: O(1), plus the release of the position table
    func takePendingInserts() -> [PendingSlot] {
        let taken = pending
        pending = []
        pendingCount = 0
        pendingIndex = nil
        spillMark = 0
        keptRows = [:]
        return taken
    }

    /// Keeps `row`, of `entity` (described by `description`, asked when its table is
    /// made), for a spilled insert: the identifier it is kept under. The rows of one
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

    /// The row of a spilled insert.
    /// - Complexity: O(slots)
    func row(of spilled: SpilledInsert) -> Row? { keptRows[spilled.entity]?[spilled.row] }

    /// Whether some pending insert is spilled.
    var hasSpilledInserts: Bool { keptRows.values.contains { $0.count > 0 } }

    /// Registers `model` under `id`, retained when it has unsaved changes: a model
    /// with a temporary identifier is then a pending insert, which it must not be
    /// already (an insert registers only models of no context).
    /// - Complexity: O(1) expected
    func register(_ model: any PersistentModel, as id: PersistentIdentifier, retained keep: Bool) {
        if keep {
            if !unretained.isEmpty { unretained[RegistryKey(id)] = nil }
            if id.isTemporary {
                assert(pendingIndex?[id] == nil, "\(id) is a pending insert already")
                pendingIndex?[id] = UInt32(pending.count)
                pending.append(.model(model))
                pendingCount += 1
            } else {
                retained[id] = model
            }
        } else {
            unretained[RegistryKey(id)] = Unretained(model: model, backing: ObjectIdentifier(model.modelBacking))
            guard !retained.isEmpty else { return }
            // Dropped after the access: a model ending here must not find `retained` busy.
            let replaced = retained.removeValue(forKey: id)
            _ = replaced
        }
    }

    /// Registers `model`, just made over a saved row with backing data `backing`,
    /// unretained. The caller found no entry for `id`, so none is replaced.
    /// - Complexity: O(1) expected
    func registerMade(_ model: any PersistentModel, backing: ObjectIdentifier, as id: PersistentIdentifier) {
        assert(self[id] == nil, "a made model replaces a registered one")
        unretained[RegistryKey(id)] = Unretained(model: model, backing: backing)
    }

    /// Retains the registered model `id` (it has unsaved changes now).
    /// - Complexity: O(1) expected
    func retain(_ id: PersistentIdentifier) {
        guard retained[id] == nil, let entry = unretained.removeValue(forKey: RegistryKey(id)) else { return }
        retained[id] = entry.model
    }

    /// Unregisters `id`; returns the model it held (nil for a spilled insert), which
    /// the caller keeps alive until it is done with it.
    /// - Complexity: O(1) expected (the first look-up of a pending insert: O(pending inserts))
    @discardableResult
    func remove(_ id: PersistentIdentifier) -> (any PersistentModel)? {
        if let position = pendingPosition(of: id) {
            pendingIndex![id] = nil
            let slot = pending[position]
            pending[position] = .removed
            pendingCount -= 1
            if case let .spilled(spilled) = slot { keptRows[spilled.entity]?.delete(spilled.row) }
            if pendingCount == 0 {
                pending = []
                spillMark = 0
                keptRows = [:]
            } else if pending.count >= 64, pendingCount * 2 < pending.count {
                compactPending()
            }
            if case let .model(model) = slot { return model }
            return nil
        }
        if let model = retained.removeValue(forKey: id) { return model }
        return unretained.removeValue(forKey: RegistryKey(id))?.model
    }

    /// Drops the removed slots of `pending` once they are the majority, so inserting
    /// and deleting drafts again and again between saves does not grow it (or the
    /// walks over it) without bound.
    /// - Complexity: O(pending slots), amortized O(1) per removal
    private func compactPending() {
        var kept: [PendingSlot] = []
        kept.reserveCapacity(pendingCount)
        var mark = 0
        for (position, slot) in pending.enumerated() {
            if case .removed = slot { continue }
            kept.append(slot)
            if position < spillMark { mark = kept.count }
        }
        pending = kept
        spillMark = mark
        pendingIndex = nil
    }

    /// Stops retaining every model: after a save or rollback none has unsaved changes.
    /// Models nothing else holds end here.
    /// - Complexity: O(retained models + pending slots)
    func releaseAll() {
        if !pending.isEmpty {
            // (Its callers took the pending inserts first: a spilled one would be lost.)
            assert(!pending.contains { if case .spilled = $0 { true } else { false } }, "spilled inserts released")
            unretained.reserveCapacity(unretained.count + pendingCount)
            for case let .model(model) in takePendingInserts() {
                unretained[RegistryKey(model.modelBacking.identifier)] = Unretained(model: model, backing: ObjectIdentifier(model.modelBacking))
            }
        }
        guard !retained.isEmpty else { return }
        let released = retained
        retained = [:]
        unretained.reserveCapacity(unretained.count + released.count)
        for (id, model) in released {
            unretained[RegistryKey(id)] = Unretained(model: model, backing: ObjectIdentifier(model.modelBacking))
        }
    }

    /// Every registered model, retained by the array: entries stay valid while it lives,
    /// whatever ends the caller's work lets end. (Spilled inserts have no model.)
    /// - Complexity: O(registered models)
    func allModels() -> [any PersistentModel] {
        var models = Array(retained.values) + unretained.values.map(\.model)
        for case let .model(model) in pending { models.append(model) }
        return models
    }

    /// Removes the unretained entry of a model whose backing data `backing` is ending.
    /// - Complexity: O(1) expected
    func forget(_ id: PersistentIdentifier, backing: ObjectIdentifier) {
        // One hash of the identifier, not two: every saved model that ends comes here.
        if let index = unretained.index(forKey: RegistryKey(id)), unretained[index].value.backing == backing {
            unretained.remove(at: index)
        }
    }
}

/// An identifier as `ModelRegistry.unretained` holds it: its scope is retained only
/// when it is not shared (`IdentifierScope.isShared`). A shared scope outlives the
/// context, so its keys are a pointer and a row key: filling and emptying the table
/// with a hundred thousand fetched models retains and releases no scope, where each
/// entry cost two atomic operations on one object that every identifier shares.
struct RegistryKey: Hashable {
    unowned(unsafe) let scope: IdentifierScope
    /// `scope`, retained, when it is not shared (a decoded identifier's, a custom
    /// store's primary key's).
    private let owned: IdentifierScope?
    let key: Int64

    @inline(__always)
    init(_ id: PersistentIdentifier) {
        let scope = id.id.scope
        self.scope = scope
        owned = scope.isShared ? nil : scope
        key = id.id.key
    }

    /// As `PersistentIdentifier.ID`'s `==`.
    static func == (lhs: RegistryKey, rhs: RegistryKey) -> Bool {
        lhs.key == rhs.key && (lhs.scope === rhs.scope || lhs.scope.sameNames(as: rhs.scope))
    }

    func hash(into hasher: inout Hasher) { hasher.combine(key) }

    func _rawHashValue(seed: Int) -> Int { PersistentIdentifier.ID.hash(key: key, seed: seed) }
}

/// A pending insert whose model nothing held any more (`ModelRegistry.spillUnheld`):
/// where its row is, and what makes its model again.
///
/// 24 bytes, so a pending slot is too: a million slots of 40 bytes, grown by doubling,
/// were the largest part of a large import's peak after its rows. The identifier is
/// its key and its layout's temporary scope (`init` returns nil for another scope).
struct SpilledInsert {
    /// The layout the model had (its hierarchy's, in a container with one).
    let layout: EntityLayout
    /// The key of its temporary identifier, in `layout.temporaryScope`.
    private let key: Int64
    private let entityIndex: Int32
    private let rowIndex: UInt32

    /// The insert of `identifier`, when it is in `layout`'s temporary scope and `entity`
    /// and `row` fit the record.
    init?(identifier: PersistentIdentifier, layout: EntityLayout, entity: Int, row: RowID) {
        guard identifier.id.scope === layout.temporaryScope, let entityIndex = Int32(exactly: entity),
              let rowIndex = UInt32(exactly: row.rawValue) else { return nil }
        self.layout = layout
        key = identifier.id.key
        self.entityIndex = entityIndex
        self.rowIndex = rowIndex
    }

    var identifier: PersistentIdentifier { PersistentIdentifier(scope: layout.temporaryScope, key: key) }
    /// Its entity in the container's schema, whose table of kept rows
    /// (`ModelRegistry.keptRows`) holds its row under `row`.
    var entity: Int { Int(entityIndex) }
    var row: RowID { RowID(Int64(rowIndex)) }
    /// Its temporary row: the key of its identifier.
    var temporaryRow: RowID { RowID(key) }

    /// The model again, over `row`, registered with `context` by the caller: a pending
    /// insert, with no saved row.
    func makeModel(over row: Row, in context: ModelContext) -> any PersistentModel {
        let model = layout.maker.make(
            identifier: identifier, layout: layout, row: row, table: Self.noTable, id: temporaryRow,
            generation: 0, context: context, registering: false)
        model.modelBacking.committed = nil
        return model
    }

    /// The table a model made over a row needs and never reads.
    private static let noTable = Table(kinds: [])
}
