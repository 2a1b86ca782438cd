import Foundation
import OpenSwiftDataStore

extension ModelContext {
    /// The models `descriptor` names, nearest first. *Additive*.
    ///
    /// Stored models are walked nearest-first through the R-tree (built by the first
    /// spatial query, then kept by every save); unsaved inserts and changes take part
    /// with their current values, and pending deletes never do, as in `fetch(_:)`.
    /// Models at equal distances come in no particular order.
    /// - Throws: `SwiftDataError.unsupportedKeyPath` when no R-tree index of `T` is
    ///   over exactly the descriptor's attributes, in its order.
    /// - Complexity: about O((log n + k) log n) for the k models reached.
    public func fetch<T: PersistentModel>(_ descriptor: NearbyDescriptor<T>) throws -> [T] {
        let (query, found) = try nearest(descriptor)
        return found.map { query.materialize($0.candidate, as: T.self) }
    }

    /// The identifiers of the models `fetch(_:)` returns for `descriptor`, nearest
    /// first. *Additive*.
    public func fetchIdentifiers<T: PersistentModel>(_ descriptor: NearbyDescriptor<T>) throws -> [PersistentIdentifier] {
        let (query, found) = try nearest(descriptor)
        return found.map { query.identifier(of: $0.candidate) }
    }

    private func nearest<T: PersistentModel>(
        _ descriptor: NearbyDescriptor<T>
    ) throws -> (FetchQuery, [(candidate: FetchCandidate, distance: Double)]) {
        var fetch = FetchDescriptor<T>(predicate: descriptor.predicate)
        fetch.includePendingChanges = descriptor.includePendingChanges
        let query = try FetchQuery(fetch, context: self)
        let slots = try descriptor.keyPaths.map { keyPath -> Int in
            guard case let .attribute(slot)? = query.layout.slots[keyPath] else {
                throw SwiftDataError(.unsupportedKeyPath, "\(keyPath) is not a stored attribute of \(T.self)")
            }
            return slot
        }
        guard let index = query.version.schema.entities[query.entity].spatialIndexSlots.firstIndex(of: slots) else {
            let names = slots.map { query.layout.attributes[$0].name }.joined(separator: ", ")
            throw SwiftDataError(.unsupportedKeyPath, "\(T.self) has no #Index(.rtree(...)) over (\(names)), in that order")
        }
        guard descriptor.center.count == slots.count, descriptor.metric != .greatCircle || slots.count == 2 else {
            throw SwiftDataError(.unsupportedPredicate, "a point of \(descriptor.center.count) coordinates for an R-tree of \(slots.count)")
        }
        // As `FetchDescriptor.fetchLimit`: 0 or less is no limit.
        let limit = descriptor.limit.flatMap { $0 > 0 ? $0 : nil }
        // Stored rows, nearest first, until `limit` of them pass: together with the
        // unsaved models, they hold the nearest `limit` of all.
        var found: [(candidate: FetchCandidate, distance: Double)] = []
        try query.stored.forEachNearest(index: index, metric: descriptor.metric.engine, center: descriptor.center, within: descriptor.radius) {
            id, distance, row in
            found.append((FetchCandidate(rowID: id, values: row, model: nil), distance))
            return limit.map { found.count < $0 } ?? true
        }
        // Unsaved inserts and changes, measured on their current values.
        for object in query.changedModels + query.pendingModels {
            let model = unsafeDowncast(object as AnyObject, to: T.self)
            let values = model.modelBacking.values
            var point: [Double] = []
            for slot in slots {
                guard let x = SpatialIndex.coordinate(values[slot]) else { break }
                point.append(x)
            }
            guard point.count == slots.count else { continue }
            let distance = point.withUnsafeBufferPointer { descriptor.metric.engine.distance(from: descriptor.center, to: $0) }
            if let radius = descriptor.radius, !(distance <= radius) { continue }
            guard try descriptor.predicate?.evaluate(model) ?? true else { continue }
            let stored = model.persistentModelID.isTemporary ? nil : RowID(model.persistentModelID.id.key)
            found.append((FetchCandidate(rowID: stored, values: values, model: model), distance))
        }
        found.sort { $0.distance < $1.distance }
        if let limit, found.count > limit { found.removeLast(found.count - limit) }
        return (query, found)
    }
}
