/// Keeps both sides of a relationship in step, as SwiftData does in memory.
///
/// Setting `animal.category = mammals` also adds the animal to `mammals.animals`
/// and removes it from its previous category's `animals`; the same holds for
/// to-many and many-to-many relationships.
enum RelationshipGraph {
    /// Sets relationship `index` of `owner` to `newModels`, updating inverses.
    static func set(_ index: Int, of owner: any PersistentModel, to models: [any PersistentModel]) {
        let backing = owner.modelBacking
        let relationship = backing.layout.relationships[index]
        // A to-many holds a model once (Apple's are sets in the store): `[a, a]` is `[a]`.
        var newModels = models
        if relationship.isToMany, newModels.count > 1 {
            var seen = Set<ObjectIdentifier>()
            newModels = newModels.filter { seen.insert(ObjectIdentifier($0)).inserted }
        }
        let old = backing.relatedModels(index)
        backing.setRelated(index, to: newModels)
        guard relationship.inverse != nil else { return }
        let oldIDs = Set(old.map(ObjectIdentifier.init))
        let newIDs = Set(newModels.map(ObjectIdentifier.init))
        for model in old where !newIDs.contains(ObjectIdentifier(model)) {
            if let inverse = relationship.inverseIndex(in: model.modelBacking.layout) { remove(owner, from: inverse, of: model) }
        }
        for model in newModels where !oldIDs.contains(ObjectIdentifier(model)) {
            if let inverse = relationship.inverseIndex(in: model.modelBacking.layout) {
                add(owner, to: inverse, of: model, ownerRelationship: relationship)
            }
        }
    }

    /// Removes `target` from relationship `index` of `model`, if it is there.
    static func remove(_ target: any PersistentModel, from index: Int, of model: any PersistentModel) {
        let backing = model.modelBacking
        let current = backing.relatedModels(index)
        let kept = current.filter { $0 !== target }
        if kept.count != current.count { backing.setRelated(index, to: kept) }
    }

    /// Adds `target` to relationship `index` of `model`; for a to-one relationship the
    /// model's previous target loses `model` from `ownerRelationship` (the
    /// relationship of `target`'s whose inverse this is).
    static func add(
        _ target: any PersistentModel, to index: Int, of model: any PersistentModel,
        ownerRelationship: EntityLayout.RelationshipSlot
    ) {
        let backing = model.modelBacking
        let current = backing.relatedModels(index)
        if backing.layout.relationships[index].isToMany {
            if !current.contains(where: { $0 === target }) { backing.setRelated(index, to: current + [target]) }
        } else if current.first !== target {
            if let previous = current.first, let slot = previous.modelBacking.layout.slots[ownerRelationship.keyPath],
               case let .relationship(k) = slot {
                remove(model, from: k, of: previous)
            }
            backing.setRelated(index, to: [target])
        }
    }

    /// Makes the related models of a model point back at it: relationships
    /// assigned in an initializer bypass `set`, so inserting a model calls this.
    static func linkInverses(of model: any PersistentModel) {
        let backing = model.modelBacking
        for (j, relationship) in backing.layout.relationships.enumerated() {
            guard relationship.inverse != nil, let related = backing.resolvedModels(j) else { continue }
            for other in related {
                if let inverse = relationship.inverseIndex(in: other.modelBacking.layout) {
                    add(model, to: inverse, of: other, ownerRelationship: relationship)
                }
            }
        }
    }
}
