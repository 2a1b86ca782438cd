import Foundation
import OpenSwiftDataStore

/// One fetch, planned and run against one published store version.
///
/// The predicate is compiled to the engine's form and tested on stored rows; only
/// the rows of the final page become model objects. Models with unsaved changes
/// (and unsaved inserts) are tested on their current values with
/// `Predicate.evaluate`, so pending changes take part. A predicate the compiler
/// cannot translate falls back to materializing each row and evaluating it.
struct FetchQuery<T: PersistentModel> {
    /// A row (or unsaved model) that passed the filter.
    struct Candidate {
        var rowID: RowID?
        /// Current values in the engine's form, for sorting.
        var values: Row
        /// The model, when one already exists (registered or pending).
        var model: T?
    }

    enum Filter {
        case all
        case native(QueryExpression)
        case fallback(reason: String)
    }

    enum Access {
        case scan
        case unique(constraint: Int, key: [Value])
    }

    let descriptor: FetchDescriptor<T>
    let context: ModelContext
    let entity: Int
    let layout: EntityLayout
    let version: StoreVersion
    let filter: Filter
    let access: Access

    init(_ descriptor: FetchDescriptor<T>, context: ModelContext) throws {
        self.descriptor = descriptor
        self.context = context
        entity = try context.container.entityIndex(of: T.self)
        layout = context.container.layout(at: entity)
        version = context.container.store.current
        if let predicate = descriptor.predicate {
            do {
                filter = .native(try PredicateCompiler.compile(predicate, in: context.container))
            } catch let unsupported as PredicateCompiler.Unsupported {
                filter = .fallback(reason: unsupported.description)
            }
        } else {
            filter = .all
        }
        access = Self.plan(filter, layout: layout)
    }

    /// Picks the access path: a unique-index lookup when the predicate's top-level
    /// conjunction pins a unique key to constants, else a scan.
    private static func plan(_ filter: Filter, layout: EntityLayout) -> Access {
        guard case let .native(expression) = filter else { return .scan }
        var pinned: [Int: Value] = [:]
        for term in expression.conjuncts {
            if case let .equal(l, r) = term {
                if case let .attribute(.root, _, slot) = l, case let .constant(v) = r, !v.isNull { pinned[slot] = v }
                if case let .attribute(.root, _, slot) = r, case let .constant(v) = l, !v.isNull { pinned[slot] = v }
            }
        }
        for (c, slots) in layout.uniqueness.enumerated() {
            let key = slots.compactMap { pinned[$0] }
            if key.count == slots.count { return .unique(constraint: c, key: key) }
        }
        return .scan
    }

    // MARK: Filtering

    /// Every row and pending model that passes the filter, sorted.
    func candidates() throws -> [Candidate] {
        var examined = 0
        return try candidates(examined: &examined)
    }

    /// `candidates()`, counting the stored rows and pending models tested.
    func candidates(examined: inout Int) throws -> [Candidate] {
        var results: [Candidate] = []
        var evaluator = RowEvaluator(version: version)
        let table = version.tables[entity]
        var tested = 0
        func visit(_ id: RowID, _ row: Row) throws {
            tested += 1
            let identifier = context.identifier(of: layout, row: id)
            if context.deletedSet.contains(identifier) { return }
            if let registered = context.registry[identifier] as? T, context.changed.contains(identifier) {
                // Unsaved changes: test the model's current values.
                if try descriptor.predicate?.evaluate(registered) ?? true {
                    results.append(Candidate(rowID: id, values: registered.modelBacking.values, model: registered))
                }
                return
            }
            switch filter {
            case .all:
                results.append(Candidate(rowID: id, values: row, model: nil))
            case let .native(expression):
                if try evaluator.test(expression, row: row, id: id) {
                    results.append(Candidate(rowID: id, values: row, model: nil))
                }
            case .fallback:
                let model = context.registry[identifier] as? T
                    ?? context.makeModel(T.self, identifier: identifier, row: row, generation: version.generation) as! T
                if try descriptor.predicate?.evaluate(model) ?? true {
                    results.append(Candidate(rowID: id, values: row, model: nil))
                }
            }
        }
        switch access {
        case .scan:
            try table.forEach(visit)
        case let .unique(constraint, key):
            if let id = version.lookup(unique: key, constraint: constraint, of: entity), let row = table[id] {
                try visit(id, row)
            }
        }
        if descriptor.includePendingChanges {
            for id in context.inserted {
                guard let model = context.registry[id] as? T else { continue }
                tested += 1
                if try descriptor.predicate?.evaluate(model) ?? true {
                    results.append(Candidate(rowID: nil, values: model.modelBacking.values, model: model))
                }
            }
        }
        examined = tested
        return sorted(results)
    }

    // MARK: Sorting and windowing

    /// The candidates in `sortBy` order; stable, so ties keep store order.
    private func sorted(_ candidates: [Candidate]) -> [Candidate] {
        guard !descriptor.sortBy.isEmpty else { return candidates }
        var keys: [(slot: Int, reverse: Bool)] = []
        for sort in descriptor.sortBy {
            guard let keyPath = sort.keyPath, case let .attribute(slot)? = layout.slots[keyPath] else {
                return sortedOnModels(candidates)
            }
            keys.append((slot, sort.order == .reverse))
        }
        return candidates.enumerated().sorted { a, b in
            for key in keys {
                let x = a.element.values[key.slot], y = b.element.values[key.slot]
                if x == y { continue }
                return key.reverse ? y < x : x < y
            }
            return a.offset < b.offset
        }.map(\.element)
    }

    /// Sorts on model objects with Foundation, for sort keys the engine cannot read
    /// (key paths through relationships or into composite values).
    private func sortedOnModels(_ candidates: [Candidate]) -> [Candidate] {
        let withModels = candidates.map { candidate -> Candidate in
            var candidate = candidate
            candidate.model = materialize(candidate)
            return candidate
        }
        let order = withModels.map { $0.model! }.sorted(using: descriptor.sortBy)
        let positions = Dictionary(uniqueKeysWithValues: withModels.enumerated().map { (ObjectIdentifier($1.model!), $0) })
        return order.map { withModels[positions[ObjectIdentifier($0)]!] }
    }

    /// The candidates within `fetchOffset` and `fetchLimit`.
    func window(_ candidates: [Candidate]) -> ArraySlice<Candidate> {
        let offset = min(max(descriptor.fetchOffset ?? 0, 0), candidates.count)
        var end = candidates.count
        if let limit = descriptor.fetchLimit, limit > 0 { end = min(end, offset + limit) }
        return candidates[offset..<end]
    }

    // MARK: Results

    func identifier(of candidate: Candidate) -> PersistentIdentifier {
        if let model = candidate.model { return model.persistentModelID }
        return context.identifier(of: layout, row: candidate.rowID!)
    }

    /// The candidate's model, registered with the context.
    func materialize(_ candidate: Candidate) -> T {
        if let model = candidate.model { return model }
        return context.materialize(layout, id: candidate.rowID!, row: candidate.values, generation: version.generation) as! T
    }
}

extension QueryExpression {
    /// The terms of a top-level conjunction (the expression itself when it is none).
    var conjuncts: [QueryExpression] {
        if case let .and(l, r) = self { return l.conjuncts + r.conjuncts }
        return [self]
    }
}
