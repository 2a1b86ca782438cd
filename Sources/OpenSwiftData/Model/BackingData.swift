import Foundation
import OpenSwiftDataStore

/// The storage behind a model's stored properties.
///
/// `@Model` turns each stored property into accessors over the backing data. Ours
/// (`ModelBackingData`) is the context-local row: the values in the engine's form,
/// the related models once resolved, and which slots changed since the last save.
public protocol BackingData<Model>: AnyObject {
    /// The model class whose properties this backing data stores.
    associatedtype Model: PersistentModel
    /// The current value of the stored property at `key`, unsaved changes included.
    func getValue<Value>(forKey key: KeyPath<Model, Value>) -> Value
    /// Writes the stored property at `key`.
    func setValue<Value>(forKey key: KeyPath<Model, Value>, to newValue: Value)
}

/// The type-erased view of a model's backing data that contexts work with.
protocol ModelBacking: AnyObject {
    var layout: EntityLayout { get }
    var identifier: PersistentIdentifier { get set }
    var context: ModelContext? { get set }
    var isDeleted: Bool { get set }
    var values: Row { get set }
    var committed: Row? { get set }
    var dirty: SlotSet { get set }
    var generation: UInt64 { get set }
    /// The related models of relationship `index`, resolving stored references.
    func relatedModels(_ index: Int) -> [any PersistentModel]
    /// The related models of relationship `index` if already resolved.
    func resolvedModels(_ index: Int) -> [any PersistentModel]?
    /// The stored references of relationship `index` while its models are not
    /// resolved (what `relatedModels(_:)` would resolve); nil once they are.
    func unresolvedReferences(_ index: Int) -> Value?
    /// The values of `.ephemeral` attributes set on this model, by attribute index:
    /// kept beside the row, never written to it.
    var ephemeral: [Int: Value] { get set }
    /// Writes attribute `index` of a model being inserted (a `let` property's value).
    func setConstant(_ index: Int, to value: Value)
    /// Replaces relationship `index` without touching inverses.
    func setRelated(_ index: Int, to models: [any PersistentModel])
    /// Replaces the resolved models of relationship `index` without marking a change
    /// (the stored references stay right; only the objects standing for them change).
    func replaceResolved(_ index: Int, with models: [any PersistentModel])
    /// Drops resolved relationships so they are read again from `values`.
    func forgetResolvedRelationships()
    /// Drops resolved relationships without reading a fault's row (the context is ending).
    func dropResolvedRelationships()
    /// Makes the values of a saved model without unsaved changes a fault again.
    func refault(from table: Table, generation: UInt64, keepingRelationships: Bool)
    /// Brings a model without unsaved changes to its row in a newer version's table.
    func refresh(from table: Table, row: Row?, generation: UInt64)
    /// Makes a deleted, saved model new again (undoing its deletion): its values
    /// loaded, no saved row, a temporary identifier.
    func prepareForReinsertion()
    /// Moves a model not yet in a context to `layout`, another layout of its type
    /// (its class hierarchy's in a container), slot by slot.
    func adopt(_ layout: EntityLayout)
}

/// The non-generic root of our backing data: checking a model's backing data against
/// it is one class comparison and one field read, where a check against
/// `ModelBackingData<M>` looks the generic class's metadata up each time.
class OurBackingData {
    /// `M` of the `ModelBackingData<M>` this is.
    let modelClass: AnyClass
    /// `modelClass`'s identity (the metadata pointer itself, nothing to store).
    @inline(__always)
    var modelType: ObjectIdentifier { ObjectIdentifier(modelClass) }

    init(modelClass: AnyClass) {
        self.modelClass = modelClass
    }

    /// Backing data over stored row `id` of `table`: over `row` when given, else a
    /// fault read when first used; `layout` is the model class's. `ModelMaker` calls
    /// it through the class's metatype, which spares a generic metadata lookup per
    /// model (about 330 instructions).
    required init(
        identifier: PersistentIdentifier, layout: EntityLayout, row: Row?, table: Table, id: RowID, generation: UInt64,
        context: ModelContext
    ) {
        preconditionFailure("abstract")
    }

    /// Backing data for a model its own initializer makes (`createBackingData()`),
    /// with no row until written; `ModelMaker` calls it through the metatype.
    required init(freshWith layout: EntityLayout) {
        preconditionFailure("abstract")
    }

    // Model inheritance: a model's backing data is a `ModelBackingData` of its own
    // class, which the accessors its superclasses generated reach through these
    // (`Root` is the class that declared the property).

    /// The backing data as the type-erased view contexts use.
    var erased: any ModelBacking { preconditionFailure("abstract") }

    func inheritedValue<Root, Value>(forKey key: KeyPath<Root, Value>) -> Value { preconditionFailure("abstract") }

    func setInheritedValue<Root, Value>(_ newValue: Value, forKey key: KeyPath<Root, Value>, owner: any PersistentModel) {
        preconditionFailure("abstract")
    }

    /// The stored value of the natively stored attribute `key`, or nil when `key` is
    /// another kind of property (`@Model`'s typed accessors then take the generic path).
    func storedValue(forKey key: AnyKeyPath) -> Value? { preconditionFailure("abstract") }

    /// The related models of relationship `key`, resolving stored references; nil
    /// when `key` is an attribute.
    func relatedModels(forKey key: AnyKeyPath) -> [any PersistentModel]? { preconditionFailure("abstract") }

    /// Writes `value`, the stored form of a natively stored attribute's new value;
    /// false (nothing written) when `key` is another kind of property.
    func setStoredValue(_ value: Value, forKey key: AnyKeyPath) -> Bool { preconditionFailure("abstract") }

    /// Takes the values and related models of every property `other`'s layout has and
    /// this one's has too (a superclass's backing data, written by its initializer).
    func adoptValues(of other: OurBackingData) { preconditionFailure("abstract") }

    /// Whether this backs a model of `type` or of a subclass of it.
    /// - Complexity: O(depth of the class hierarchy)
    func backs(_ type: AnyClass) -> Bool { EntityLayout.isClass(modelClass, orSubclassOf: type) }
}

/// The backing data of models of type `M`: the context-local row (see `BackingData`).
///
/// Its stored properties skip dynamic exclusivity checks (`@exclusivity(unchecked)`):
/// a model is used on one actor or thread, no access to them overlaps another, and
/// the checks cost about 5,000 instructions per inserted model (`swift_beginAccess`).
final class ModelBackingData<M: PersistentModel>: OurBackingData, BackingData, ModelBacking {
    typealias Model = M

    /// Where the values come from until first used.
    private enum State {
        /// Made by `createBackingData()` for a model its own initializer makes (the
        /// first property initializer that writes, or the first use): it makes no row
        /// until written.
        case fresh
        /// A stored row not read yet (a fault): read on first use from the table of the
        /// version it was fetched or saved in, so a fetch that only counts or passes
        /// models on reads no column. (Holding the table, not the store, keeps the values
        /// those of that version, as an eager read would have, and keeps no document
        /// open; it holds that version's column buffers until written. Reading a
        /// property or a relationship reads its one slot and leaves the model a fault.)
        case fault(Table, id: RowID)
        case loaded
    }

    @exclusivity(unchecked) private var state: State

    /// The model class's layout (its hierarchy's in a container, once adopted).
    @exclusivity(unchecked) private(set) var layout: EntityLayout

    @exclusivity(unchecked) private var storedIdentifier: PersistentIdentifier?
    var identifier: PersistentIdentifier {
        get {
            if let identifier = storedIdentifier { return identifier }
            let identifier = PersistentIdentifier.temporary(in: layout.temporaryScope)
            storedIdentifier = identifier
            return identifier
        }
        set { storedIdentifier = newValue }
    }

    /// The context's link (see `ContextLink`): nil until registered with a context.
    @exclusivity(unchecked) private var contextLink: ContextLink?
    /// The context the model is registered with, while that context lives.
    var context: ModelContext? {
        get { contextLink?.context }
        set { contextLink = newValue?.link }
    }
    @exclusivity(unchecked) var isDeleted = false

    @exclusivity(unchecked) private var storedValues: Row = []
    /// Attribute values, then relationship references, in the engine's form.
    var values: Row {
        get {
            prepare()
            return storedValues
        }
        _modify {
            prepare()
            yield &storedValues
        }
    }

    @exclusivity(unchecked) private var storedCommitted: Row?
    /// The row as last saved or fetched; nil for a model never saved.
    var committed: Row? {
        get {
            prepare()
            return storedCommitted
        }
        set {
            prepare()
            storedCommitted = newValue
        }
    }

    /// Slots changed since the last save, of saved models (an insert stores its
    /// whole row).
    @exclusivity(unchecked) var dirty: SlotSet = []
    /// The store generation `values` was read from.
    @exclusivity(unchecked) var generation: UInt64 = 0
    /// Related models per relationship, once resolved or assigned.
    @exclusivity(unchecked) private var related: [[any PersistentModel]?] = []
    /// `.ephemeral` attribute values (see `ModelBacking.ephemeral`): untouched by
    /// saves, refaults and refreshes, so the value stays in memory across `save()`.
    @exclusivity(unchecked) var ephemeral: [Int: Value] = [:]

    required init(freshWith layout: EntityLayout) {
        state = .fresh
        self.layout = layout
        super.init(modelClass: M.self)
    }

    deinit {
        // The model is ending: the context holds saved, unchanged models unretained,
        // and such an entry must go with its model (`ModelRegistry`).
        if let registry = contextLink?.registry, let identifier = storedIdentifier {
            registry._withUnsafeGuaranteedRef { $0.forget(identifier, backing: ObjectIdentifier(self)) }
        }
    }

    required init(
        identifier: PersistentIdentifier, layout: EntityLayout, row: Row?, table: Table, id: RowID, generation: UInt64,
        context: ModelContext
    ) {
        if let row {
            state = .loaded
            storedValues = row
            storedCommitted = row
            related = layout.unresolvedRelated
        } else {
            state = .fault(table, id: id)
        }
        self.layout = layout
        storedIdentifier = identifier
        self.generation = generation
        contextLink = context.link
        super.init(modelClass: M.self)
    }

    /// Makes the values of a saved model a fault over its row in `table`, read when
    /// next used; resolved relationships stay when `keepingRelationships` (they are
    /// what was just saved). The caller makes sure it has no unsaved changes.
    func refault(from table: Table, generation: UInt64, keepingRelationships: Bool) {
        prepare()
        state = .fault(table, id: RowID(identifier.id.key))
        storedValues = []
        storedCommitted = nil
        if !keepingRelationships { related = [] }
        dirty = []
        self.generation = generation
    }

    /// Brings a model without unsaved changes to its row in `table` (of a newer
    /// version): a fault stays one, over the new table; loaded values take `row` (read
    /// from `table` when nil). Resolved relationships are dropped only when the stored
    /// references changed, so a model a `noAction` delete left pointing at a deleted
    /// one keeps it.
    func refresh(from table: Table, row: Row?, generation: UInt64) {
        self.generation = generation
        let layout = self.layout
        let id = RowID(identifier.id.key)
        if case let .fault(old, _) = state {
            let relationshipSlots = layout.attributes.count..<(layout.attributes.count + layout.relationships.count)
            let same = relationshipSlots.allSatisfy { old.value(id, slot: $0) == table.value(id, slot: $0) }
            state = .fault(table, id: id)
            if !same { related = [] }
            return
        }
        guard let row = row ?? table[id], storedCommitted != row else { return }
        storedValues = row
        storedCommitted = row
        forgetResolvedRelationships()
    }

    func adopt(_ layout: EntityLayout) {
        prepare()
        let (rowSlots, relationshipSlots) = self.layout.slotPairs(into: layout)
        var values = layout.emptyRow
        var committed = storedCommitted.map { _ in layout.emptyRow }
        var relatedModels = layout.emptyRelated
        for (from, to) in rowSlots {
            values[to] = storedValues[from]
            committed?[to] = storedCommitted![from]
        }
        for (from, to) in relationshipSlots where from < related.count { relatedModels[to] = related[from] }
        if !ephemeral.isEmpty {
            var moved: [Int: Value] = [:]
            for (from, to) in rowSlots { if let value = ephemeral[from] { moved[to] = value } }
            ephemeral = moved
        }
        storedValues = values
        storedCommitted = committed
        related = relatedModels
        dirty = []
        self.layout = layout
    }

    func prepareForReinsertion() {
        prepare()
        storedCommitted = nil
        dirty = []
        isDeleted = false
        storedIdentifier = PersistentIdentifier.temporary(in: layout.temporaryScope)
    }

    /// Gives a fresh backing data its empty row, or reads a fault's row.
    @inline(__always)
    private func prepare() {
        switch state {
        case .loaded:
            return
        case .fresh:
            state = .loaded
            let layout = self.layout
            storedValues = layout.emptyRow
            related = layout.emptyRelated
        case let .fault(table, id):
            state = .loaded
            let layout = self.layout
            if let row = table[id] {
                storedValues = row
                storedCommitted = row
            } else {
                // Not in that version: it reads as `model(for:)` reads a gone row.
                storedValues = layout.emptyRow
                storedCommitted = storedValues
                isDeleted = true
            }
            if related.count != layout.relationships.count {
                related = layout.unresolvedRelated
            }
        }
    }

    /// Writes a property's value, encoded for its type without boxing it.
    private func write<Value>(_ value: Value, at slot: EntityLayout.Slot) {
        switch slot {
        case let .attribute(i):
            setAttribute(i, to: layout.attributes[i].encode(value))
        case let .relationship(j):
            let relationship = layout.relationships[j]
            setRelated(j, to: relationship.isPlainReference
                ? Self.referencedModels(in: value, isToMany: relationship.isToMany) : models(in: value))
        }
    }

    /// The models a relationship property's value holds, when the layout found it to be
    /// `[Destination]`, `Destination?` or `Destination` (`isPlainReference`): class
    /// references, read as such without a dynamic cast of the whole value; only the
    /// models in it are cast. Other shapes (`[Destination]?`, `Destination??`) go
    /// through `models(in:)`.
    private static func referencedModels<Value>(in value: Value, isToMany: Bool) -> [any PersistentModel] {
        if isToMany, MemoryLayout<Value>.size == MemoryLayout<[AnyObject]>.size {
            let objects = unsafeBitCast(value, to: [AnyObject].self)
            return objects.isEmpty ? [] : objects.map { $0 as! any PersistentModel }
        }
        if !isToMany, MemoryLayout<Value>.size == MemoryLayout<AnyObject?>.size {
            return unsafeBitCast(value, to: AnyObject?.self).map { [$0 as! any PersistentModel] } ?? []
        }
        return models(in: value)
    }

    // MARK: BackingData

    func getValue<Value>(forKey key: KeyPath<M, Value>) -> Value {
        read(at: layout.slot(for: key))
    }

    func setValue<Value>(forKey key: KeyPath<M, Value>, to newValue: Value) {
        write(newValue, at: layout.slot(for: key))
    }

    @inline(__always)
    private func read<Value>(at slot: EntityLayout.Slot) -> Value {
        switch slot {
        case let .attribute(i):
            let attribute = layout.attributes[i]
            if attribute.isEphemeral { return attribute.decode(ephemeral[i] ?? layout.emptyRow[i], as: Value.self) }
            // A fault reads the one column until it is written (as a relationship reads
            // its one slot): a model read for a few properties copies no row.
            if case let .fault(table, id) = state, let stored = table.value(id, slot: i) {
                return layout.attributes[i].decode(stored, as: Value.self)
            }
            prepare()
            return layout.attributes[i].decode(storedValues[i], as: Value.self)
        case let .relationship(j):
            return Self.relationshipValue(relatedModels(j), as: Value.self, isToMany: layout.relationships[j].isToMany)
        }
    }

    // MARK: Model-level access (with the owner, for inverses)

    func value<Value>(forKey key: KeyPath<M, Value>, owner: M) -> Value {
        getValue(forKey: key)
    }

    func setValue<Value>(_ newValue: Value, forKey key: KeyPath<M, Value>, owner: M) {
        set(newValue, at: layout.slot(for: key), owner: owner)
    }

    // MARK: Inheritance

    override var erased: any ModelBacking { self }

    override func inheritedValue<Root, Value>(forKey key: KeyPath<Root, Value>) -> Value {
        read(at: layout.slot(for: key))
    }

    override func setInheritedValue<Root, Value>(_ newValue: Value, forKey key: KeyPath<Root, Value>, owner: any PersistentModel) {
        func set<Owner: PersistentModel>(_ owner: Owner) { self.set(newValue, at: layout.slot(for: key), owner: owner) }
        set(owner)
    }

    /// The slot of `key` when it is an attribute stored natively (what the typed
    /// accessors may read and write), else nil.
    @inline(__always)
    private func nativeAttribute(_ key: AnyKeyPath) -> Int? {
        guard case let .attribute(i) = layout.slot(for: key), layout.attributes[i].storesNatively else { return nil }
        return i
    }

    override func storedValue(forKey key: AnyKeyPath) -> Value? {
        guard let i = nativeAttribute(key) else { return nil }
        if case let .fault(table, id) = state, let stored = table.value(id, slot: i) { return stored }
        prepare()
        return storedValues[i]
    }

    override func relatedModels(forKey key: AnyKeyPath) -> [any PersistentModel]? {
        guard case let .relationship(j) = layout.slot(for: key) else { return nil }
        return relatedModels(j)
    }

    override func setStoredValue(_ value: Value, forKey key: AnyKeyPath) -> Bool {
        guard let i = nativeAttribute(key) else { return false }
        setAttribute(i, to: value)
        return true
    }

    override func adoptValues(of other: OurBackingData) {
        let source = other.erased
        let (rowSlots, relationshipSlots) = source.layout.slotPairs(into: layout)
        prepare()
        let values = source.values
        for (from, to) in rowSlots {
            storedValues[to] = values[from]
            if let value = source.ephemeral[from] { ephemeral[to] = value }
        }
        for (from, to) in relationshipSlots {
            if let models = source.resolvedModels(from) { related[to] = models }
        }
    }

    @inline(__always)
    private func set<Value, Owner: PersistentModel>(_ newValue: Value, at slot: EntityLayout.Slot, owner: Owner) {
        switch slot {
        case let .attribute(i):
            setAttribute(i, to: layout.attributes[i].encode(newValue))
        case let .relationship(j):
            if ModelContext.undoContexts.load(ordering: .relaxed) > 0, let context,
               context.undoState.restoringSide == .init(model: ObjectIdentifier(owner), relationship: j) {
                // Undo restores each side of a relationship on its own. (Cleared at
                // first use: an observer's own write during it maintains inverses.)
                context.undoState.restoringSide = nil
                setRelated(j, to: models(in: newValue))
            } else {
                RelationshipGraph.set(j, of: owner, to: models(in: newValue))
            }
        }
    }

    private func setAttribute(_ i: Int, to value: Value) {
        if layout.attributes[i].isEphemeral {
            // Tracked (the context has changes, observers ran), never written: the row's
            // slot keeps its default, so no save, journal frame or history holds it.
            if ephemeral[i] != value {
                ephemeral[i] = value
                context?.noteChange(of: identifier)
            }
            return
        }
        prepare()
        // Initial values that are not literals (`UUID()`, `.now`) and writes of an
        // unchanged value may equal what the row holds: skipping them spares the copy
        // of a row shared with the layout (and an undo step that changes nothing).
        if !storedValues[i].isIdentical(to: value) {
            if ModelContext.undoContexts.load(ordering: .relaxed) > 0, let context, context.undoManager != nil {
                context.willChange(self, slot: i)
            }
            storedValues[i] = value
        }
        noteChange(slot: i)
    }

    func setConstant(_ index: Int, to value: Value) {
        prepare()
        storedValues[index] = value
    }

    private func noteChange(slot: Int) {
        // A model never saved stores its whole row; only saved ones need the slots.
        if storedCommitted != nil { dirty.insert(slot) }
        context?.noteChange(of: identifier)
    }

    // MARK: Relationships

    func relatedModels(_ index: Int) -> [any PersistentModel] {
        let layout = self.layout
        let slot = layout.attributes.count + index
        if related.count == layout.relationships.count, let models = related[index] { return models }
        let stored: Value
        if case let .fault(table, id) = state, let value = table.value(id, slot: slot) {
            // A relationship needs its one slot, not the row: the model stays a fault
            // (walking trip.bucketList reads no trip attribute).
            if related.count != layout.relationships.count {
                related = layout.unresolvedRelated
            }
            stored = value
        } else {
            prepare()
            if let models = related[index] { return models }
            stored = storedValues[slot]
        }
        let models = context?.resolve(stored, of: layout.relationships[index]) ?? []
        related[index] = models
        return models
    }

    func resolvedModels(_ index: Int) -> [any PersistentModel]? {
        prepare()
        return related[index]
    }

    func unresolvedReferences(_ index: Int) -> Value? {
        let layout = self.layout
        let slot = layout.attributes.count + index
        if related.count == layout.relationships.count, related[index] != nil { return nil }
        // (As `relatedModels(_:)` reads them: a fault's from its row, without loading it.)
        if case let .fault(table, id) = state, let value = table.value(id, slot: slot) { return value }
        prepare()
        return related[index] == nil ? storedValues[slot] : nil
    }

    func setRelated(_ index: Int, to models: [any PersistentModel]) {
        prepare()
        if ModelContext.undoContexts.load(ordering: .relaxed) > 0, let context, context.undoManager != nil {
            context.willChange(self, slot: layout.attributes.count + index)
        }
        if !(models.isEmpty && related[index]?.isEmpty == true) { related[index] = models }
        if let context = contextLink?.context {
            context.mayHoldResolvedRelationships = true
            context.mayReachUnregistered = true
        }
        noteChange(slot: layout.attributes.count + index)
    }

    func replaceResolved(_ index: Int, with models: [any PersistentModel]) {
        prepare()
        related[index] = models
        contextLink?.context?.mayHoldResolvedRelationships = true
    }

    func forgetResolvedRelationships() {
        prepare()
        for j in related.indices { related[j] = nil }
    }

    func dropResolvedRelationships() {
        for j in related.indices { related[j] = nil }
    }

    static func relationshipValue<Value>(_ models: [any PersistentModel], as type: Value.Type, isToMany: Bool) -> Value {
        if isToMany {
            guard let typed = models as? Value else {
                preconditionFailure("cannot read the related models as \(Value.self)")
            }
            return typed
        }
        if let model = models.first {
            guard let typed = model as? Value else {
                preconditionFailure("cannot read the related model as \(Value.self)")
            }
            return typed
        }
        if let optional = type as? any _OptionalType.Type { return optional._none as! Value }
        preconditionFailure("the non-optional relationship of type \(Value.self) has no model")
    }
}

