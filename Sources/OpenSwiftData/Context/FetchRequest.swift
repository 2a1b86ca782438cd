import Foundation
import OpenSwiftDataStore

/// A fetch descriptor taken apart where its model type is known.
///
/// `fetch(_:)` is inlinable, so a caller's `FetchDescriptor<Trip>` is read in the
/// caller's specialization, where its fields are at known offsets. Read inside this
/// module, through the unspecialized generic, each field looked the metadata of the
/// descriptor, its predicate, an optional of it or an array up (about 330
/// instructions each) and copied it through value witnesses: about 5,000
/// instructions per fetch. What the query needs of the predicate and the sort is
/// not generic; what is (testing and sorting model objects) goes through
/// `FetchedModels`, made only by the fetches that need it.
@usableFromInline
struct FetchRequest {
    @usableFromInline let model: any PersistentModel.Type
    /// The predicate's expression tree and its variable, nil without a predicate.
    @usableFromInline let predicate: (expression: any StandardPredicateExpression<Bool>, variable: PredicateExpressions.VariableID)?
    /// Per sort descriptor: its key path (nil for a comparator-only sort) and
    /// whether it is reversed.
    @usableFromInline let sortBy: [(keyPath: AnyKeyPath?, reverse: Bool)]
    @usableFromInline let fetchLimit: Int?
    @usableFromInline let fetchOffset: Int?
    @usableFromInline let includePendingChanges: Bool

    @inlinable
    init<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) {
        model = T.self
        if let predicate = descriptor.predicate {
            self.predicate = (predicate.expression, predicate.variable.key)
        } else {
            predicate = nil
        }
        if descriptor.sortBy.isEmpty {
            sortBy = []
        } else {
            var keys: [(keyPath: AnyKeyPath?, reverse: Bool)] = []
            for sort in descriptor.sortBy { keys.append((sort.keyPath, sort.order == .reverse)) }
            sortBy = keys
        }
        fetchLimit = descriptor.fetchLimit
        fetchOffset = descriptor.fetchOffset
        includePendingChanges = descriptor.includePendingChanges
    }
}

/// The work of a fetch on model objects of its type `T`: testing unsaved models with
/// the descriptor's predicate and sorting them with its sort descriptors, which
/// Foundation does on `T`s. Only a fetch that has such work makes one.
@usableFromInline
protocol FetchedModels {
    /// Whether `model` is a `T` (of `T`'s class or a subclass).
    func isFetched(_ model: any PersistentModel) -> Bool
    /// Whether `model` (a `T`) passes the descriptor's predicate.
    func passes(_ model: any PersistentModel) throws -> Bool
    /// `models` (each a `T`) in the descriptor's sort order.
    func sorted(_ models: [any PersistentModel]) -> [any PersistentModel]
    /// The pending inserts that are `T`s (`PendingInserts.models(of:keptPassing:)`).
    func pendingModels(in pending: PendingInserts, keptPassing test: ((Row, RowID) -> Bool)?) -> [any PersistentModel]
    /// Whether a pending insert is a `T`.
    func hasPendingModels(in pending: PendingInserts) -> Bool
    /// The filter of a predicate the engine cannot run: each row's model (made when
    /// not registered) goes through `Predicate.evaluate`.
    func evaluatingFilter(context: ModelContext, entity: Int, version: StoreVersion) -> RowFilter
    /// The models a custom store's fetch of the descriptor gives (`DataStoreBackend`),
    /// which takes the descriptor typed.
    func storeMatches(in context: ModelContext, of backend: DataStoreBackend) throws -> [any PersistentModel]
}

/// `FetchedModels` through a `FetchDescriptor<T>`.
@usableFromInline
struct DescriptorModels<T: PersistentModel>: FetchedModels {
    let descriptor: FetchDescriptor<T>

    @usableFromInline
    init(descriptor: FetchDescriptor<T>) {
        self.descriptor = descriptor
    }

    @usableFromInline
    func isFetched(_ model: any PersistentModel) -> Bool { model is T }

    @usableFromInline
    func passes(_ model: any PersistentModel) throws -> Bool {
        guard let predicate = descriptor.predicate else { return true }
        return try predicate.evaluate(unsafeDowncast(model as AnyObject, to: T.self))
    }

    @usableFromInline
    func sorted(_ models: [any PersistentModel]) -> [any PersistentModel] {
        models.map { unsafeDowncast($0 as AnyObject, to: T.self) }.sorted(using: descriptor.sortBy)
    }

    @usableFromInline
    func pendingModels(in pending: PendingInserts, keptPassing test: ((Row, RowID) -> Bool)?) -> [any PersistentModel] {
        pending.models(of: T.self, keptPassing: test)
    }

    @usableFromInline
    func hasPendingModels(in pending: PendingInserts) -> Bool { pending.contains(of: T.self) }

    @usableFromInline
    func evaluatingFilter(context: ModelContext, entity: Int, version: StoreVersion) -> RowFilter {
        let predicate = descriptor.predicate
        return .custom { id in
            let identifier = context.identifier(entity: entity, row: id)
            // (A row of another class of the hierarchy is not a `T`.)
            guard let model = context.registry[identifier] as? T
                ?? context.makeModel(identifier: identifier, entity: entity, row: nil, in: version) as? T
            else { return false }
            return try predicate?.evaluate(model) ?? true
        }
    }

    @usableFromInline
    func storeMatches(in context: ModelContext, of backend: DataStoreBackend) throws -> [any PersistentModel] {
        try backend.matches(descriptor, in: context)
    }
}
