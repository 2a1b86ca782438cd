import Foundation
import OpenSwiftDataStore
import Synchronization

/// What one model type stores, slot by slot, derived once from `schemaMetadata`.
///
/// The layout depends on the type alone (not on a container), so a model's backing
/// data can use it before the model is inserted anywhere.
final class EntityLayout: @unchecked Sendable {
    /// A class, not a struct, as `RelationshipSlot` is: every property read and write
    /// takes its slot from the layout's array, and copying a struct of this many
    /// references cost an outlined copy and destroy (about a dozen retains and
    /// releases) each time, a sixth of inserting a model (W1).
    final class AttributeSlot: @unchecked Sendable {
        let name: String
        let originalName: String
        let keyPath: AnyKeyPath
        let swiftType: Any.Type
        /// `swiftType` as a natively storable type, when it is one (the fast path).
        let storableType: (any _StorableValue.Type)?
        let valueType: ValueType
        let isOptional: Bool
        let options: [Schema.Attribute.Option]
        let defaultValue: Value?
        let hashModifier: String?
        /// The value transformer of a `.transformable(by:)` attribute, stored as `Data`.
        let transformer: String?
        /// Whether a value is stored as its type's `_storedValue` (no transformer, a
        /// natively storable type): `@Model`'s typed accessors convert it themselves.
        let storesNatively: Bool
        /// A `let` property: stored in the instance, copied into the row on insert.
        let isConstant: Bool
        /// `.ephemeral`: tracked, never persisted; the value lives in the backing data
        /// beside the row, whose slot keeps the default (`ModelBackingData.ephemeral`).
        let isEphemeral: Bool

        init(
            name: String, originalName: String, keyPath: AnyKeyPath, swiftType: Any.Type,
            storableType: (any _StorableValue.Type)?, valueType: ValueType, isOptional: Bool,
            options: [Schema.Attribute.Option], defaultValue: Value?, hashModifier: String?, transformer: String?,
            isConstant: Bool = false
        ) {
            self.isConstant = isConstant
            isEphemeral = options.contains(.ephemeral)
            self.name = name
            self.originalName = originalName
            self.keyPath = keyPath
            self.swiftType = swiftType
            self.storableType = storableType
            self.valueType = valueType
            self.isOptional = isOptional
            self.options = options
            self.defaultValue = defaultValue
            self.hashModifier = hashModifier
            self.transformer = transformer
            // (An ephemeral value takes the generic path, which keeps it off the row.)
            storesNatively = transformer == nil && storableType != nil && !options.contains(.ephemeral)
        }

        /// `value` in the engine's form.
        func encode(_ value: Any) -> Value {
            if let transformer { return TransformedValue.encode(value, by: transformer) }
            if let storableType { return storableType._encode(value) }
            return ValueCoding.encode(value)
        }

        /// A stored value as the property's type.
        func decode<T>(_ stored: Value, as type: T.Type) -> T {
            if let transformer { return TransformedValue.decode(stored, by: transformer, as: T.self) }
            if let storableType { return storableType._decode(stored, as: T.self) }
            return ValueCoding.decode(stored, as: T.self)
        }
    }

    /// A class, not a struct: saves and deletes walk relationships constantly, and
    /// each copy of a struct of this many references cost a dozen retains (about 7 %
    /// of a cascade delete). Only its layout's initializer sets `inverse`.
    final class RelationshipSlot: @unchecked Sendable {
        let name: String
        let originalName: String
        let keyPath: AnyKeyPath
        let destinationType: any PersistentModel.Type
        let destination: String
        let isToMany: Bool
        let isOptional: Bool
        /// Whether the property's value is exactly `[Destination]`, `Destination` or
        /// `Destination?`: class references that backing data reads without a cast.
        let isPlainReference: Bool
        let deleteRule: Schema.Relationship.DeleteRule
        let minimumModelCount: Int
        let maximumModelCount: Int
        let explicitInverse: AnyKeyPath?
        /// The inverse relationship's index in the destination's layout.
        fileprivate(set) var inverse: Int?
        /// The inverse relationship's key path: with model inheritance a model of the
        /// destination may have a layout whose slots differ (`inverseIndex(in:)`).
        fileprivate(set) var inverseKeyPath: AnyKeyPath?
        let options: [Schema.Relationship.Option]

        /// The inverse's index in `layout`, the layout of a related model.
        /// - Complexity: O(1) when `layout` is the one `inverse` was computed in;
        ///   O(relationships) otherwise.
        @inline(__always)
        func inverseIndex(in layout: EntityLayout) -> Int? {
            guard let inverse, let inverseKeyPath else { return nil }
            let relationships = layout.relationships
            if inverse < relationships.count, relationships[inverse].keyPath === inverseKeyPath { return inverse }
            return relationships.firstIndex { $0.keyPath == inverseKeyPath }
        }

        /// A copy, for a hierarchy's layouts (`inverse` is set per layout family).
        fileprivate func copy() -> RelationshipSlot {
            RelationshipSlot(
                name: name, originalName: originalName, keyPath: keyPath, destinationType: destinationType,
                destination: destination, isToMany: isToMany, isOptional: isOptional, isPlainReference: isPlainReference,
                deleteRule: deleteRule, minimumModelCount: minimumModelCount, maximumModelCount: maximumModelCount,
                explicitInverse: explicitInverse, inverse: nil, options: options)
        }

        init(
            name: String, originalName: String, keyPath: AnyKeyPath, destinationType: any PersistentModel.Type,
            destination: String, isToMany: Bool, isOptional: Bool, isPlainReference: Bool,
            deleteRule: Schema.Relationship.DeleteRule, minimumModelCount: Int, maximumModelCount: Int,
            explicitInverse: AnyKeyPath?, inverse: Int?, options: [Schema.Relationship.Option]
        ) {
            self.name = name
            self.originalName = originalName
            self.keyPath = keyPath
            self.destinationType = destinationType
            self.destination = destination
            self.isToMany = isToMany
            self.isOptional = isOptional
            self.isPlainReference = isPlainReference
            self.deleteRule = deleteRule
            self.minimumModelCount = minimumModelCount
            self.maximumModelCount = maximumModelCount
            self.explicitInverse = explicitInverse
            self.inverse = inverse
            self.options = options
        }
    }

    enum Slot {
        case attribute(Int)
        case relationship(Int)
    }

    let name: String
    let modelType: any PersistentModel.Type
    /// Makes models of `modelType` over stored rows (`ModelMaker`). Set last by the
    /// initializer: the maker's probe backing data takes this layout.
    @exclusivity(unchecked) private(set) var maker: ModelMaking!
    let attributes: [AttributeSlot]
    let relationships: [RelationshipSlot]
    let slots: [AnyKeyPath: Slot]
    /// The same slots by key path object, searched in declaration order: `@Model`'s
    /// accessors pass the key path objects `schemaMetadata` lists, and comparing a few
    /// identities is cheaper than hashing a key path, or even an identifier.
    /// (Attributes first, then relationships, so a position is its slot.)
    private let slotIdentities: [ObjectIdentifier]
    /// The slots' property names, attributes first: a store's snapshot made in this
    /// order is read without names (`DefaultSnapshot.orderedEntries(named:)`).
    let slotNames: [String]
    let uniqueness: [[Int]]
    let indices: [IndexDescription]
    /// The scope of this entity's temporary identifiers (of no store).
    let temporaryScope: IdentifierScope
    /// Whether models of this type hold state outside their backing data (stored
    /// `@Transient` properties): 0 until first asked, then 1 (no) or 2 (yes).
    private let transientState = Atomic<UInt8>(0)
    /// The `let` attributes (`@Model` leaves them stored in the instance), which an
    /// insert copies from the model into its row (`fillConstants(of:)`). A `let`
    /// relationship is refused when the layout is made.
    private(set) var constants: [Int] = []
    /// Whether a save must count this entity's relationships: a non-optional to-one,
    /// or a to-many with a minimum or maximum model count.
    private(set) var hasRelationshipCountRules = false
    /// Set when the model type is part of a class hierarchy in a container's schema.
    let hierarchy: Hierarchy?

    /// A class of a model hierarchy, in a container: every class of the hierarchy has
    /// the same slots (the union of their properties, the root's first, then a hidden
    /// attribute naming each row's class), so one engine entity, named after the
    /// root, stores them all, and a layout slot is an engine slot.
    struct Hierarchy {
        /// The root class's entity name: the engine entity's.
        let rootName: String
        /// The hidden attribute holding the class of each row (nil for the root).
        let discriminator: Int
        /// This class's entity name and its subclasses' (what a type test accepts).
        let memberNames: [String]
        /// Which slots the class has (its own and its superclasses' properties).
        let hasAttribute: [Bool]
        let hasRelationship: [Bool]
        var isRoot: Bool { memberNames.first == rootName }
    }

    /// The name of the hidden attribute of a hierarchy's engine entity.
    static let discriminatorName = EntityDescription.discriminatorName

    /// What the discriminator attribute's key path points at: nothing a model has.
    private struct DiscriminatorKey { var entity: String? }

    private convenience init(modelType: any PersistentModel.Type) {
        let (attributes, relationships) = Self.properties(of: modelType)
        for relationship in relationships { Self.resolveInverse(of: relationship, declaredIn: modelType) }
        self.init(
            modelType: modelType, attributes: attributes, relationships: relationships,
            constraintsOf: modelType, hierarchy: nil, aliases: [])
    }

    /// `aliases` pairs other key paths of the same properties (`\Sub.name` for
    /// `\Base.name`) with the ones the slots list.
    private init(
        modelType: any PersistentModel.Type, attributes: [AttributeSlot], relationships: [RelationshipSlot],
        constraintsOf constrained: any PersistentModel.Type, hierarchy: Hierarchy?, aliases: [(AnyKeyPath, AnyKeyPath)]
    ) {
        self.modelType = modelType
        self.name = Self.entityName(of: modelType)
        self.temporaryScope = IdentifierScope(storeIdentifier: nil, entityName: name, isShared: true)
        self.hierarchy = hierarchy
        self.attributes = attributes
        self.relationships = relationships
        var slots: [AnyKeyPath: Slot] = [:]
        for (i, a) in attributes.enumerated() { slots[a.keyPath] = .attribute(i) }
        for (j, r) in relationships.enumerated() { slots[r.keyPath] = .relationship(j) }
        for (alias, original) in aliases where slots[alias] == nil { slots[alias] = slots[original] }
        self.slots = slots
        self.slotIdentities = attributes.map { ObjectIdentifier($0.keyPath) } + relationships.map { ObjectIdentifier($0.keyPath) }
        self.slotNames = attributes.map(\.name) + relationships.map(\.name)
        let attributeIndex = { (kp: AnyKeyPath) -> Int? in
            if case let .attribute(i) = slots[kp] { return i }
            return nil
        }
        var uniqueness = attributes.indices.filter { attributes[$0].options.contains(.unique) }.map { [$0] }
        for constraint in Self.declaredUniqueness(of: constrained) {
            let slotList = constraint.compactMap(attributeIndex)
            if slotList.count == constraint.count, !uniqueness.contains(slotList) { uniqueness.append(slotList) }
        }
        self.uniqueness = uniqueness
        self.indices = Self.declaredIndices(of: constrained).compactMap { paths, isRTree in
            let slotList = paths.compactMap(attributeIndex)
            return slotList.count == paths.count ? IndexDescription(kind: isRTree ? .rtree : .binary, slots: slotList) : nil
        }
        hasRelationshipCountRules = relationships.indices.contains { j in
            let r = relationships[j]
            guard hierarchy?.hasRelationship[j] ?? true else { return false }
            return r.isToMany ? (r.minimumModelCount > 0 || r.maximumModelCount > 0) : !r.isOptional
        }
        emptyRow = attributes.indices.map { i in
            if let hierarchy {
                if i == hierarchy.discriminator { return hierarchy.isRoot ? .null : .string(name) }
                if !hierarchy.hasAttribute[i] { return .null }
            }
            return attributes[i].defaultValue ?? .null
        } + relationships.map { $0.isToMany ? .references([]) : .null }
        constants = attributes.indices.filter { attributes[$0].isConstant }
        emptyRelated = relationships.map { $0.isToMany ? [] : nil }
        unresolvedRelated = relationships.map { _ in nil }
        func makeMaker<M: PersistentModel>(_ type: M.Type, layout: EntityLayout) -> ModelMaking { ModelMaker<M>(layout: layout) }
        maker = makeMaker(modelType, layout: self)
    }

    /// The layout of `type`, built on first use.
    /// - Complexity: O(1) expected
    static func of(_ type: any PersistentModel.Type) -> EntityLayout {
        let key = ObjectIdentifier(type)
        if let found = UnsafeRawPointer(bitPattern: lastFound.load(ordering: .acquiring)),
           let layout = Unmanaged<CacheEntry>.fromOpaque(found)._withUnsafeGuaranteedRef({ $0.key == key ? $0.layout : nil }) {
            return layout
        }
        let entry: CacheEntry
        if let cached = cache.withLock({ $0[key] }) {
            entry = cached
        } else {
            let made = CacheEntry(key: key, layout: EntityLayout(modelType: type))
            entry = cache.withLock { cache in
                if let existing = cache[key] { return existing }
                cache[key] = made
                return made
            }
        }
        lastFound.store(UInt(bitPattern: Unmanaged.passUnretained(entry).toOpaque()), ordering: .releasing)
        return entry.layout
    }

    /// A layout of the cache, with its type's identity. The cache never drops an entry,
    /// so the one `lastFound` points at stays alive.
    private final class CacheEntry: Sendable {
        let key: ObjectIdentifier
        let layout: EntityLayout

        init(key: ObjectIdentifier, layout: EntityLayout) {
            self.key = key
            self.layout = layout
        }
    }

    private static let cache = Locked<[ObjectIdentifier: CacheEntry]>([:])
    /// The entry found last (its address; 0 before the first), read without the lock:
    /// `createBackingData()` asks for the same layout for every new model, and the
    /// lock and the table cost about 400 instructions each time (2 % of W1).
    private static let lastFound = Atomic<UInt>(0)

    /// The layouts of the classes of one hierarchy, for a container's schema:
    /// `members` holds the root first, then its subclasses, superclasses before
    /// subclasses. The slots are the root's properties, then each subclass's own in
    /// that order, then the discriminator.
    static func hierarchy(_ members: [any PersistentModel.Type]) -> [EntityLayout] {
        let root = members[0]
        let full = members.map { properties(of: $0) }
        var attributes: [AttributeSlot] = []
        var relationships: [RelationshipSlot] = []
        func add(_ properties: ([AttributeSlot], [RelationshipSlot])) {
            for a in properties.0 where !attributes.contains(where: { $0.keyPath == a.keyPath }) { attributes.append(a) }
            for r in properties.1 where !relationships.contains(where: { $0.keyPath == r.keyPath }) {
                let copy = r.copy()
                resolveInverse(of: copy, declaredIn: root)
                relationships.append(copy)
            }
        }
        for properties in full { add(properties) }
        let discriminator = attributes.count
        attributes.append(AttributeSlot(
            name: discriminatorName, originalName: discriminatorName, keyPath: \DiscriminatorKey.entity,
            swiftType: String?.self, storableType: String?.self, valueType: .string,
            isOptional: true, options: [], defaultValue: nil, hashModifier: nil, transformer: nil))
        let names = members.map { entityName(of: $0) }
        let aliases = members.flatMap { type in zip(type._$keyPathsRootedHere, type.schemaMetadata.map(\.keypath)).map { ($0, $1) } }
        return members.enumerated().map { k, type in
            let own = full[k]
            // This class and every class below it (each listed after its superclass).
            let descendants = members.indices.filter { isClass(members[$0], orSubclassOf: type) }
            let hierarchy = Hierarchy(
                rootName: names[0], discriminator: discriminator, memberNames: descendants.map { names[$0] },
                hasAttribute: attributes.map { a in own.0.contains { $0.keyPath == a.keyPath } },
                hasRelationship: relationships.map { r in own.1.contains { $0.keyPath == r.keyPath } })
            return EntityLayout(
                modelType: type, attributes: attributes, relationships: relationships, constraintsOf: root, hierarchy: hierarchy,
                aliases: aliases)
        }
    }

    /// Sets `relationship`'s inverse, inferred from the class that declares it (a
    /// superclass, for an inherited one; `fallback` when its key path names none).
    private static func resolveInverse(of relationship: RelationshipSlot, declaredIn fallback: any PersistentModel.Type) {
        let owner = Swift.type(of: relationship.keyPath).rootType as? any PersistentModel.Type ?? fallback
        relationship.inverse = inverse(of: relationship, in: owner)
        relationship.inverseKeyPath = relationship.inverse.map { properties(of: relationship.destinationType).1[$0].keyPath }
    }

    // MARK: Class hierarchies

    /// The `@Model` superclass of `type`, if it has one.
    static func modelSuperclass(of type: any PersistentModel.Type) -> (any PersistentModel.Type)? {
        _getSuperclass(type).flatMap { $0 as? any PersistentModel.Type }
    }

    /// The root of `type`'s class hierarchy (`type` itself without one), and how many
    /// `@Model` superclasses lie between.
    /// - Complexity: O(depth of the class hierarchy)
    static func root(of type: any PersistentModel.Type) -> (root: any PersistentModel.Type, depth: Int) {
        var (type, depth) = (type, 0)
        while let superclass = modelSuperclass(of: type) { (type, depth) = (superclass, depth + 1) }
        return (type, depth)
    }

    /// The entity name of the root of `type`'s class hierarchy: the engine entity
    /// that stores its rows.
    static func rootName(of type: any PersistentModel.Type) -> String { entityName(of: root(of: type).root) }

    /// Whether `type` is `ancestor` or one of its subclasses.
    /// - Complexity: O(depth of the class hierarchy)
    static func isClass(_ type: AnyClass, orSubclassOf ancestor: AnyClass) -> Bool {
        var current: AnyClass? = type
        while let candidate = current {
            if ObjectIdentifier(candidate) == ObjectIdentifier(ancestor) { return true }
            current = _getSuperclass(candidate)
        }
        return false
    }

    /// The slots of `self` that `other` has too (the same property, by key path):
    /// row slots (attributes and relationship references) and relationship indexes,
    /// as (here, there) pairs. For moving a model's values between two layouts of
    /// its type, or from a superclass's.
    /// - Complexity: O(slots), a hash lookup each
    func slotPairs(into other: EntityLayout) -> (rows: [(Int, Int)], relationships: [(Int, Int)]) {
        var rows: [(Int, Int)] = [], related: [(Int, Int)] = []
        for (i, attribute) in attributes.enumerated() {
            if case let .attribute(k)? = other.slots[attribute.keyPath] { rows.append((i, k)) }
        }
        for (j, relationship) in relationships.enumerated() {
            guard case let .relationship(k)? = other.slots[relationship.keyPath] else { continue }
            rows.append((attributes.count + j, other.attributes.count + k))
            related.append((j, k))
        }
        return (rows, related)
    }

    static func entityName(of type: any PersistentModel.Type) -> String {
        String(describing: type)
    }

    /// The engine's description of this entity.
    /// The engine's description of this entity. A hierarchy's is its root's, with
    /// the subclasses' attributes optional (rows of other classes leave them nil) and
    /// relationships to any class of a hierarchy naming its root.
    var entityDescription: EntityDescription {
        EntityDescription(
            name: name,
            attributes: attributes.enumerated().map { i, a in
                AttributeDescription(
                    name: a.name, type: a.valueType, isOptional: a.isOptional || hierarchy?.hasAttribute[i] == false,
                    isUnique: a.options.contains(.unique),
                    isExternalStorage: a.options.contains(.externalStorage))
            },
            relationships: relationships.map { r in
                RelationshipDescription(
                    name: r.name, destination: Self.rootName(of: r.destinationType), isToMany: r.isToMany,
                    inverse: r.inverse.map { EntityLayout.of(r.destinationType).relationships[$0].name },
                    deleteRule: RelationshipDescription.DeleteRule(rawValue: r.deleteRule.rawValue) ?? .nullify)
            },
            uniqueness: uniqueness,
            indices: indices)
    }

    /// The attribute values of a new row: defaults where declared, nil elsewhere.
    private(set) var emptyRow: Row = []
    /// The related models of a new model: none, per relationship.
    private(set) var emptyRelated: [[any PersistentModel]?] = []
    /// The related models of a stored model before any is read: nil (unresolved) per
    /// relationship. Shared, so a model read from a row allocates no array of its own
    /// until it resolves a relationship (about 740 instructions per model otherwise).
    private(set) var unresolvedRelated: [[any PersistentModel]?] = []

    // MARK: Reading schemaMetadata

    private static func properties(of type: any PersistentModel.Type) -> ([AttributeSlot], [RelationshipSlot]) {
        var attributes: [AttributeSlot] = []
        var relationships: [RelationshipSlot] = []
        for property in type.schemaMetadata {
            let swiftType = Swift.type(of: property.keypath).valueType
            let isOptional = swiftType is any _OptionalType.Type
            let bare = unwrappedType(swiftType)
            let destination: (any PersistentModel.Type, Bool)? =
                if let model = bare as? any PersistentModel.Type { (model, false) }
                else if let array = bare as? any _ModelArray.Type { (array._elementType, true) }
                else { nil }
            if let (destinationType, isToMany) = destination {
                // A `let` relationship would be resolved in `init(backingData:)`, before
                // the model is registered: a cycle of them would make models forever.
                precondition(
                    isWritable(property.keypath),
                    "\(type).\(property.name): a relationship must be declared with 'var' (a 'let' relationship is not supported)")
                let declared = property.metadata as? Schema.Relationship
                relationships.append(RelationshipSlot(
                    name: property.name,
                    originalName: declared?.originalName.nilIfEmpty ?? property.name,
                    keyPath: property.keypath,
                    destinationType: destinationType,
                    destination: entityName(of: destinationType),
                    isToMany: isToMany,
                    isOptional: isOptional,
                    isPlainReference: isToMany
                        ? !isOptional
                        : swiftType == destinationType || (swiftType as? any _OptionalType.Type)?._wrappedType == destinationType,
                    deleteRule: declared?.deleteRule ?? .nullify,
                    minimumModelCount: declared?.minimumModelCount ?? 0,
                    maximumModelCount: declared?.maximumModelCount ?? 0,
                    explicitInverse: declared?.inverseKeyPath,
                    inverse: nil,
                    options: declared?.options ?? []))
            } else {
                let declared = property.metadata as? Schema.Attribute
                let transformer = declared?.options.lazy.compactMap(\.transformerName).first
                attributes.append(AttributeSlot(
                    name: property.name,
                    originalName: declared?.originalName.nilIfEmpty ?? property.name,
                    keyPath: property.keypath,
                    swiftType: swiftType,
                    storableType: transformer == nil ? swiftType as? any _StorableValue.Type : nil,
                    valueType: transformer == nil ? ValueCoding.valueType(of: swiftType) : .data,
                    isOptional: isOptional,
                    options: declared?.options ?? [],
                    // (A transformable initial value is stored when the model is made.)
                    defaultValue: transformer == nil ? property.defaultValue.map(ValueCoding.encode) : nil,
                    hashModifier: declared?.hashModifier,
                    transformer: transformer,
                    isConstant: !isWritable(property.keypath)))
            }
        }
        return (attributes, relationships)
    }

    /// Whether `keyPath` can write its property: false for a `let` (which `@Model`
    /// leaves stored), true for the computed properties it makes of every `var`.
    static func isWritable(_ keyPath: AnyKeyPath) -> Bool {
        func check<Root>(_: Root.Type) -> Bool {
            func check<Value>(_: Value.Type) -> Bool { keyPath is ReferenceWritableKeyPath<Root, Value> }
            return _openExistential(Swift.type(of: keyPath).valueType, do: check)
        }
        return _openExistential(Swift.type(of: keyPath).rootType, do: check)
    }

    /// Copies the `let` properties of `model` (of this layout) into its row: they live
    /// in the instance, and a save writes the row. A `let` of another class of the
    /// hierarchy reads as nothing and is skipped.
    func fillConstants(of model: any PersistentModel) {
        let backing = model.modelBacking
        for i in constants {
            guard let value = model[keyPath: attributes[i].keyPath] else { continue }
            backing.setConstant(i, to: attributes[i].encode(value))
        }
    }

    /// The inverse of `relationship` of `owner`: the one named by `inverse:` on either
    /// side, else the only relationship back to `owner` when each side has exactly one.
    private static func inverse(of relationship: RelationshipSlot, in owner: any PersistentModel.Type) -> Int? {
        let theirs = properties(of: relationship.destinationType).1
        if let explicit = relationship.explicitInverse {
            return theirs.firstIndex { $0.keyPath == explicit }
        }
        if let index = theirs.firstIndex(where: { $0.explicitInverse == relationship.keyPath }) {
            return index
        }
        // Inference: one relationship each way, neither naming another inverse.
        guard relationship.destinationType != owner else { return nil }
        let (_, ours) = properties(of: owner)
        let oursToThem = ours.filter { $0.destinationType == relationship.destinationType }
        let candidates = theirs.indices.filter { theirs[$0].destinationType == owner && theirs[$0].explicitInverse == nil }
        let claimed = ours.contains { $0.explicitInverse != nil && $0.destinationType == relationship.destinationType }
        guard oursToThem.count == 1, candidates.count == 1, !claimed else { return nil }
        return candidates[0]
    }

    private static func declaredUniqueness(of type: any PersistentModel.Type) -> [[AnyKeyPath]] {
        type._$uniquenessConstraints
    }

    private static func declaredIndices(of type: any PersistentModel.Type) -> [([AnyKeyPath], Bool)] {
        type._$indices.compactMap { $0 as? any _IndexTypes }.map { ($0._keyPaths, $0._isRTree) }
    }

    /// The slot behind `keyPath`, or a clear trap when the key path is not stored.
    /// - Complexity: O(properties) for the key path objects `@Model` passes; O(properties)
    ///   plus a hash lookup for others.
    func slot(for keyPath: AnyKeyPath) -> Slot {
        let identity = ObjectIdentifier(keyPath)
        if let i = slotIdentities.firstIndex(of: identity) {
            return i < attributes.count ? .attribute(i) : .relationship(i - attributes.count)
        }
        guard let slot = slots[keyPath] else {
            preconditionFailure("\(keyPath) is not a stored property of the model \(name)")
        }
        return slot
    }
}

extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}

extension EntityLayout {
    /// Whether `model`, of this layout, holds state its backing data does not: stored
    /// properties other than `@Model`'s own (`_$`-prefixed, and the `_SwiftDataNoType`
    /// placeholders of persisted ones), such as `@Transient` ones. A model that does
    /// is not let go while pending (`PendingInserts`): made again, it would lose them.
    /// Read once per type, by reflection.
    /// - Complexity: O(stored properties) the first time, then O(1)
    func holdsStateOutsideBacking(_ model: any PersistentModel) -> Bool {
        guard ObjectIdentifier(type(of: model)) == ObjectIdentifier(modelType) else { return true }
        switch transientState.load(ordering: .relaxed) {
        case 1: return false
        case 2: return true
        default:
            var mirror: Mirror? = Mirror(reflecting: model)
            var holds = false
            while let current = mirror, !holds {
                holds = current.children.contains { child in
                    !(child.label?.hasPrefix("_$") ?? false)
                        && !String(describing: type(of: child.value)).hasSuffix("_SwiftDataNoType")
                }
                mirror = current.superclassMirror
            }
            transientState.store(holds ? 2 : 1, ordering: .relaxed)
            return holds
        }
    }
}
