import Foundation
import OpenSwiftDataStore

/// The storage behind a model's stored properties.
///
/// `@Model` turns each stored property into accessors over the backing data. Ours
/// (`ModelBackingData`) is the context-local row: the values in the engine's form,
/// the related models once resolved, and which slots changed since the last save.
public protocol BackingData<Model>: AnyObject {
    associatedtype Model: PersistentModel
    func getValue<Value>(forKey key: KeyPath<Model, Value>) -> Value
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
    var dirty: Set<Int> { get set }
    var generation: UInt64 { get set }
    /// The related models of relationship `index`, resolving stored references.
    func relatedModels(_ index: Int) -> [any PersistentModel]
    /// The related models of relationship `index` if already resolved.
    func resolvedModels(_ index: Int) -> [any PersistentModel]?
    /// Replaces relationship `index` without touching inverses.
    func setRelated(_ index: Int, to models: [any PersistentModel])
    /// Replaces the resolved models of relationship `index` without marking a change
    /// (the stored references stay right; only the objects standing for them change).
    func replaceResolved(_ index: Int, with models: [any PersistentModel])
    /// Drops resolved relationships so they are read again from `values`.
    func forgetResolvedRelationships()
}

final class ModelBackingData<M: PersistentModel>: BackingData, ModelBacking {
    typealias Model = M

    /// Created by `createBackingData()` and not used yet. Every model starts with one
    /// (it is a stored property's default), and a model a context materializes
    /// replaces it at once; so it costs nothing until used: initializer writes are only
    /// recorded, and applied on first use.
    private var isFresh: Bool
    private var initialWrites: [(AnyKeyPath, Any)] = []

    private var storedLayout: EntityLayout?
    var layout: EntityLayout {
        if let layout = storedLayout { return layout }
        let layout = EntityLayout.of(M.self)
        storedLayout = layout
        return layout
    }

    private var storedIdentifier: PersistentIdentifier?
    var identifier: PersistentIdentifier {
        get {
            if let identifier = storedIdentifier { return identifier }
            let identifier = PersistentIdentifier.temporary(entityName: layout.name)
            storedIdentifier = identifier
            return identifier
        }
        set { storedIdentifier = newValue }
    }

    weak var context: ModelContext?
    var isDeleted = false

    private var storedValues: Row = []
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

    /// The row as last saved or fetched; nil for a model never saved.
    var committed: Row?
    /// Slots changed since the last save.
    var dirty: Set<Int> = []
    /// The store generation `values` was read from.
    var generation: UInt64 = 0
    /// Related models per relationship, once resolved or assigned.
    private var related: [[any PersistentModel]?] = []

    init() {
        isFresh = true
    }

    init(identifier: PersistentIdentifier, row: Row, generation: UInt64, context: ModelContext) {
        isFresh = false
        let layout = EntityLayout.of(M.self)
        storedLayout = layout
        storedIdentifier = identifier
        storedValues = row
        self.committed = row
        self.generation = generation
        self.context = context
        related = Array(repeating: nil, count: layout.relationships.count)
    }

    /// Gives a fresh backing data its empty row and applies the recorded writes.
    @inline(__always)
    private func prepare() {
        guard isFresh else { return }
        isFresh = false
        let layout = self.layout
        storedValues = layout.emptyRow
        related = Array(repeating: nil, count: layout.relationships.count)
        for (j, r) in layout.relationships.enumerated() where r.isToMany { related[j] = [] }
        let writes = initialWrites
        initialWrites = []
        for (key, value) in writes { write(value, at: layout.slot(for: key)) }
    }

    private func write(_ value: Any, at slot: EntityLayout.Slot) {
        switch slot {
        case let .attribute(i):
            setAttribute(i, to: ValueCoding.encode(value))
        case let .relationship(j):
            setRelated(j, to: models(in: value))
        }
    }

    // MARK: BackingData

    func getValue<Value>(forKey key: KeyPath<M, Value>) -> Value {
        switch layout.slot(for: key) {
        case let .attribute(i):
            prepare()
            if let storable = layout.attributes[i].storableType { return storable._decode(storedValues[i], as: Value.self) }
            return ValueCoding.decode(storedValues[i], as: Value.self)
        case let .relationship(j):
            return Self.relationshipValue(relatedModels(j), as: Value.self, isToMany: layout.relationships[j].isToMany)
        }
    }

    func setValue<Value>(forKey key: KeyPath<M, Value>, to newValue: Value) {
        if isFresh {
            initialWrites.append((key, newValue))
            return
        }
        write(newValue, at: layout.slot(for: key))
    }

    // MARK: Model-level access (with the owner, for inverses)

    func value<Value>(forKey key: KeyPath<M, Value>, owner: M) -> Value {
        getValue(forKey: key)
    }

    func setValue<Value>(_ newValue: Value, forKey key: KeyPath<M, Value>, owner: M) {
        switch layout.slot(for: key) {
        case let .attribute(i):
            if let storable = layout.attributes[i].storableType {
                setAttribute(i, to: storable._encode(newValue))
            } else {
                setAttribute(i, to: ValueCoding.encode(newValue))
            }
        case let .relationship(j):
            RelationshipGraph.set(j, of: owner, to: models(in: newValue))
        }
    }

    private func setAttribute(_ i: Int, to value: Value) {
        prepare()
        storedValues[i] = value
        noteChange(slot: i)
    }

    private func noteChange(slot: Int) {
        dirty.insert(slot)
        context?.noteChange(of: identifier)
    }

    // MARK: Relationships

    func relatedModels(_ index: Int) -> [any PersistentModel] {
        prepare()
        if let models = related[index] { return models }
        let models = context?.resolve(storedValues[layout.attributes.count + index], of: layout.relationships[index]) ?? []
        related[index] = models
        return models
    }

    func resolvedModels(_ index: Int) -> [any PersistentModel]? {
        prepare()
        return related[index]
    }

    func setRelated(_ index: Int, to models: [any PersistentModel]) {
        prepare()
        related[index] = models
        noteChange(slot: layout.attributes.count + index)
    }

    func replaceResolved(_ index: Int, with models: [any PersistentModel]) {
        prepare()
        related[index] = models
    }

    func forgetResolvedRelationships() {
        prepare()
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

extension PersistentModel {
    /// The model's backing data, type-erased for the context.
    var modelBacking: any ModelBacking { persistentBackingData as! any ModelBacking }
}
