import Foundation
import OpenSwiftDataStore

/// For stores that translate fetches into their own query language (the PostgreSQL
/// store): a schema's entities in the engine's description, and predicates and sorts
/// compiled to the engine's expression form, whose slots are those descriptions'.
///
/// SPI (`@_spi(DataStores) import OpenSwiftData`): the expression form is the
/// engine's and may change with it; stores shipped in this package use it.
@_spi(DataStores)
public final class StoreQueryCompiler: @unchecked Sendable {
    /// The container whose layouts and compiled-predicate cache compile for the store;
    /// in memory and empty. Its store identifier is the store's, so identifiers a
    /// predicate captures (`ids.contains($0.persistentModelID)`) compile to its rows.
    private let container: ModelContainer
    /// Every entity, in the order expressions number them.
    public let schema: StoreSchema

    /// - Parameter storeIdentifier: the identifier of the store's permanent
    ///   identifiers, whose integer primary keys are its rows.
    public init(schema: Schema, storeIdentifier: UUID) throws {
        container = try ModelContainer(
            for: schema, migrationPlan: nil, configurations: [ModelConfiguration(isStoredInMemoryOnly: true)], store: nil,
            identifier: storeIdentifier)
        self.schema = schema.storeSchema
    }

    /// The entity models of `type` are stored in (its hierarchy's root's, for a subclass).
    public func entityIndex<T: PersistentModel>(of type: T.Type) throws -> Int {
        try container.entityIndex(of: type)
    }

    /// `predicate` in the engine's form, as a template and its values: the template's
    /// captured values are `.parameter(i)`, `parameters[i]` each (`BoundPredicate`
    /// substitutes them); `shape` is the same object for every predicate of the
    /// template's shape (its expression type, key paths and operators), so a store may
    /// keep what it made of the template (its SQL) under it, holding it; nil when the
    /// compiler does not cache the shape. Nil when `predicate` cannot be compiled (the
    /// context then evaluates it on models).
    public func compileTemplate<T: PersistentModel>(
        _ predicate: Predicate<T>
    ) throws -> (template: QueryExpression, parameters: [Value], shape: AnyObject?)? {
        do {
            let compiled = try PredicateCompiler.compile(predicate, in: container)
            return (compiled.template, compiled.parameters, compiled.cache)
        } catch is PredicateCompiler.Unsupported {
            return nil
        }
    }

    /// The attribute slots and directions of `sortBy`, or nil when a key is not a
    /// stored attribute.
    public func sortKeys<T: PersistentModel>(_ sortBy: [SortDescriptor<T>]) throws -> [(slot: Int, reverse: Bool)]? {
        let layout = container.layout(at: try container.entityIndex(of: T.self))
        return FetchQuery.sortKeys(of: sortBy.map { ($0.keyPath, $0.order == .reverse) }, in: layout)?
            .map { (slot: $0.slot, reverse: $0.reverse) }
    }

    // MARK: History

    /// Per entity, the attribute slots whose values a deletion keeps in history
    /// (`.preserveValueOnDeletion`).
    public var preservedSlots: [[Int]] {
        container.schema.layouts.map { layout in
            layout.attributes.indices.filter { layout.attributes[$0].options.contains(.preserveValueOnDeletion) }
        }
    }

    /// The transactions of `log` that `descriptor` selects, as `ModelContext.fetchHistory`
    /// reads the built-in store's: identifiers name the store's rows, and a predicate
    /// bounded below at or before `log.horizon` throws `historyTokenExpired`.
    public func history(
        _ log: HistoryLog, matching descriptor: HistoryDescriptor<DefaultHistoryTransaction>, checkingExpiry: Bool = true
    ) throws -> [DefaultHistoryTransaction] {
        try container.history(matching: descriptor, checkingExpiry: checkingExpiry, in: log)
    }
}
