import Foundation
import OpenSwiftDataStore

/// The schema and the store of an app's models; contexts work on it.
///
/// `Sendable`: share one container between actors and give each actor its own
/// context (`@ModelActor` does). All saves, from any context, take the store's one
/// serial commit path; fetches read the latest published version without waiting.
public class ModelContainer: Equatable, @unchecked Sendable {
    /// The models the container manages: every entity of every configuration.
    public final let schema: Schema
    /// The migration plan the container was created with (run when its document
    /// opened); nil for none.
    public final let migrationPlan: (any SchemaMigrationPlan.Type)?
    /// The configurations the container opened: where each entity's data lives.
    public private(set) var configurations: Set<ModelConfiguration>

    /// Where the container's rows live: the engine, or a custom `DataStore`. Its
    /// contexts read and write through it alone (`ModelBackend`).
    let backend: any ModelBackend
    /// The engine's store; nil over a custom store, whose container builds none.
    /// Only the features the engine alone has ask for it (see `requireEngine()`).
    let engineStore: Store?
    /// The backend's map between model references and identifiers
    /// (`ModelBackend.references`), kept here: a save asks for every related model,
    /// and a delete for every stored reference, where a call through the backend's
    /// existential kept the caller from being inlined (about 3 % of W6 delete).
    let rowReferences: ExternalReferences?
    /// Names this container's store in permanent identifiers.
    let storeIdentifier: String
    private let entityIndexes: [ObjectIdentifier: Int]
    private let entityIndexesByName: [String: Int]
    /// The layouts of the classes of hierarchies, by entity name.
    private let memberIndex: [String: EntityLayout]
    let allowsSave: Bool
    /// Saves and fetches counted and timed, when the app bootstrapped a metrics
    /// backend before opening the container (`StoreMetrics`); nil otherwise.
    let metrics: StoreMetrics?
    /// Compiled predicate templates by shape (see `PredicateCompiler.compile`).
    let compiledPredicates = PredicateCache()

    /// The main actor's context, with autosave on.
    @MainActor public var mainContext: ModelContext {
        if let context = _mainContext { return context }
        let context = ModelContext(self)
        context.autosaveEnabled = true
        context.isMainContext = true
        _mainContext = context
        return context
    }

    @MainActor private var _mainContext: ModelContext?

    /// A container for `forTypes` and the models they relate to, over the stores
    /// `configurations` name (one document in the default location when none).
    /// Throws `SwiftDataError` when a store cannot be opened or migrated.
    public convenience init(
        for forTypes: any PersistentModel.Type..., migrationPlan: (any SchemaMigrationPlan.Type)? = nil,
        configurations: ModelConfiguration...
    ) throws {
        try self.init(for: Schema(forTypes), migrationPlan: migrationPlan, configurations: configurations)
    }

    /// A container for the entities of `givenSchema`, over the stores
    /// `configurations` name.
    public convenience init(
        for givenSchema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)? = nil,
        configurations: ModelConfiguration...
    ) throws {
        try self.init(for: givenSchema, migrationPlan: migrationPlan, configurations: configurations)
    }

    /// A container for `forTypes` over `configurations`, which may name a custom
    /// store (`DataStoreConfiguration`).
    public convenience init(for forTypes: any PersistentModel.Type..., configurations: any DataStoreConfiguration...) throws {
        try self.init(for: Schema(forTypes), configurations: configurations)
    }

    /// A container over the stores `configurations` name: `ModelConfiguration`s open
    /// the built-in store; one configuration of another `DataStoreConfiguration` type
    /// opens that custom store (OpenSwiftData.docc/CustomDataStores.md), which then holds every entity.
    public convenience init(for givenSchema: Schema, configurations: [any DataStoreConfiguration]) throws {
        var models: [ModelConfiguration] = []
        var custom: [any DataStoreConfiguration] = []
        for configuration in configurations {
            if let model = configuration as? ModelConfiguration { models.append(model) } else { custom.append(configuration) }
        }
        guard let first = custom.first else {
            try self.init(for: givenSchema, migrationPlan: nil, configurations: models)
            return
        }
        guard custom.count == 1, models.isEmpty else {
            throw SwiftDataError(
                .loadIssueModelContainer, "a container opens one custom store, with no other configuration beside it")
        }
        try self.init(
            for: givenSchema, migrationPlan: nil, configurations: [], store: nil,
            external: try Self.openExternal(first, schema: givenSchema))
    }

    /// A container for the entities of `givenSchema`, over the stores
    /// `configurations` name; the array form of the variadic initializer.
    public convenience init(
        for givenSchema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)? = nil,
        configurations: [ModelConfiguration]
    ) throws {
        try self.init(for: givenSchema, migrationPlan: migrationPlan, configurations: configurations, store: nil)
    }

    /// A container over `store`, or over the store its configurations name when nil.
    /// The store identifier is the document's when the store has one (or
    /// `identifier`), so identifiers resolve after reopening; a new one otherwise.
    init(
        for givenSchema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)?,
        configurations: [ModelConfiguration], store: Store?, identifier: UUID? = nil, external: (any ExternalStore)? = nil
    ) throws {
        if Set(configurations).count != configurations.count {
            throw SwiftDataError(.duplicateConfiguration, "two configurations name the same store")
        }
        for configuration in configurations {
            for entity in configuration.schema?.entities ?? [] where givenSchema.entitiesByName[entity.name] == nil {
                throw SwiftDataError(
                    .configurationSchemaNotFoundInContainerSchema,
                    "configuration \(configuration.name) names entity \(entity.name), which the container's schema lacks")
            }
        }
        try Self.validate(givenSchema)
        self.schema = givenSchema
        self.migrationPlan = migrationPlan
        // A custom store's container lists no ModelConfiguration.
        let ordered = configurations.isEmpty && external == nil ? [ModelConfiguration()] : configurations
        self.configurations = Set(ordered)
        let group: DocumentGroup?
        if let external {
            // The store keeps every row: no engine store is built beside it.
            let backend = DataStoreBackend(store: external, schema: givenSchema.storeSchema)
            self.backend = backend
            self.engineStore = nil
            self.rowReferences = backend.references
            self.allowsSave = true
            self.storeIdentifier = backend.storeIdentifier
            self.metrics = StoreMetrics.make(dimensions: external.metricsDimensions)
            group = nil
        } else {
            // In the order given (not the set's): the first configuration naming an
            // entity keeps it (`Placement`).
            let store = try store ?? Self.openStore(schema: givenSchema, migrationPlan: migrationPlan, configurations: ordered)
            group = store.persistence as? DocumentGroup
            // A group's read-only documents refuse their own entities' changes (`DocumentError.readOnly`).
            self.allowsSave = group.map { $0.documents.contains { !$0.isReadOnly } }
                ?? store.document.map { !$0.isReadOnly }
                ?? ordered.allSatisfy(\.allowsSave)
            let storeIdentifier = (store.document?.storeIdentifier ?? group?.documents.first?.storeIdentifier ?? identifier ?? UUID())
                .uuidString
            self.storeIdentifier = storeIdentifier
            store.preserveOnDeletion(givenSchema.layouts.map { layout in
                layout.attributes.indices.filter { layout.attributes[$0].options.contains(.preserveValueOnDeletion) }
            })
            self.engineStore = store
            self.backend = EngineBackend(store: store, storeIdentifier: storeIdentifier)
            self.metrics = StoreMetrics.make(dimensions: [
                ("store", store.persistence == nil ? "memory" : "document"), ("configuration", ordered[0].name),
            ])
            if let metrics { store.persistence?.attach(metrics) }
            self.rowReferences = nil
        }
        var indexes: [ObjectIdentifier: Int] = [:]
        var byName: [String: Int] = [:]
        for (i, layout) in givenSchema.layouts.enumerated() {
            indexes[ObjectIdentifier(layout.modelType)] = i
            byName[layout.name] = i
        }
        // Every class of a hierarchy is stored in its root's entity.
        for layout in givenSchema.memberLayouts.values {
            guard let root = layout.hierarchy?.rootName, let i = byName[root] else { continue }
            indexes[ObjectIdentifier(layout.modelType)] = i
            byName[layout.name] = i
        }
        self.hasHierarchies = givenSchema.memberLayouts.count > givenSchema.layouts.count
        self.entityIndexes = indexes
        self.entityIndexesByName = byName
        self.memberIndex = Dictionary(
            givenSchema.memberLayouts.values.filter { $0.hierarchy != nil }.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        // In a group, each entity's identifiers name the document that keeps it.
        let storeIdentifier = self.storeIdentifier
        self.identifierScopes = givenSchema.layouts.enumerated().map { e, layout in
            IdentifierScope(
                storeIdentifier: group?.document(ofEntity: e)?.storeIdentifier.uuidString ?? storeIdentifier,
                entityName: layout.name, isShared: true)
        }
    }

    /// Containers are equal only when they are the same container.
    public static func == (lhs: ModelContainer, rhs: ModelContainer) -> Bool { lhs === rhs }

    /// Removes every model from the store; a document is rewritten empty. History
    /// goes too (earlier tokens expire), and `ModelContext.didSave` is posted with
    /// the removed identifiers under `invalidatedAllIdentifiers`.
    ///
    /// SwiftData declares this non-throwing: if the document cannot be rewritten
    /// (disk full), nothing is removed, in memory or on disk.
    public func deleteAllData() {
        backend.deleteAllData(of: self)
    }

    /// Removes every model and the store itself: the document file and its blob
    /// folder are deleted. Later saves through this container throw
    /// `DocumentError.closed`. Posts `invalidatedAllIdentifiers` as `deleteAllData()` does.
    public func erase() throws {
        try backend.erase(of: self)
    }

    /// The engine's store, for code only the engine backend runs (its fetch
    /// query, its save): a container over a custom store never gets there.
    var store: Store {
        guard let engineStore else { preconditionFailure("the engine's path ran over a custom DataStore") }
        return engineStore
    }

    /// The engine's store, for the features only the engine has (explain,
    /// aggregates, nearby queries, batch updates): over a custom store they throw
    /// `DataStoreError.unsupportedFeature`, as a store without them does.
    func requireEngine() throws -> Store {
        guard let engineStore else { throw DataStoreError.unsupportedFeature }
        return engineStore
    }

    // MARK: Entities

    func entityIndex(of type: any PersistentModel.Type) throws -> Int {
        guard let index = entityIndexes[ObjectIdentifier(type)] else {
            throw SwiftDataError(.unknownModelType, "\(type) is not in the container's schema")
        }
        return index
    }

    func entityIndex(named name: String) -> Int? { entityIndexesByName[name] }

    /// The entity whose rows `id` names: found by its scope when that is the
    /// container's for the entity (compared by identity: no name is hashed, about 380
    /// instructions a deleted model in a save), else by name.
    /// - Complexity: O(entities)
    func entityIndex(of id: PersistentIdentifier) -> Int? {
        let scope = id.id.scope
        for (entity, shared) in identifierScopes.enumerated() where shared === scope { return entity }
        return entityIndex(named: id.entityName)
    }

    /// The entity `relationship` leads to: by its destination class, which hashes
    /// cheaper than its name (every relationship resolved asks).
    func entityIndex(ofDestination relationship: EntityLayout.RelationshipSlot) -> Int? {
        entityIndexes[ObjectIdentifier(relationship.destinationType)]
    }

    func layout(at index: Int) -> EntityLayout { schema.layouts[index] }

    /// Whether the schema has a class hierarchy (model inheritance).
    let hasHierarchies: Bool

    /// The layout of `type` in this container: a class of a hierarchy has its
    /// hierarchy's slots, which its standalone layout (`EntityLayout.of`) lacks.
    func layout(of type: any PersistentModel.Type) -> EntityLayout? {
        schema.memberLayouts[ObjectIdentifier(type)]
    }

    /// The layout of the class of stored row `id` of `entity`: the entity's own, or,
    /// in a hierarchy, that of the class its discriminator names.
    /// - Complexity: O(1); a hierarchy's reads one value of the row.
    func layout(at entity: Int, row id: RowID, in table: Table, values row: Row?) -> EntityLayout {
        let layout = schema.layouts[entity]
        guard let hierarchy = layout.hierarchy else { return layout }
        let stored = row.map { $0[hierarchy.discriminator] } ?? table.value(id, slot: hierarchy.discriminator)
        guard case let .string(name)? = stored, let index = memberIndex[name] else { return layout }
        return index
    }

    /// The scope of the permanent identifiers of entity `index`, one per entity, so
    /// identifiers of this container share it.
    let identifierScopes: [IdentifierScope]

    /// Opens the custom store `configuration` names, with the container's schema
    /// when the configuration has none (a store reads its entities from it).
    private static func openExternal<C: DataStoreConfiguration>(_ configuration: C, schema: Schema) throws -> any ExternalStore {
        var configuration = configuration
        if let own = configuration.schema {
            for entity in own.entities where schema.entitiesByName[entity.name] == nil {
                throw SwiftDataError(
                    .configurationSchemaNotFoundInContainerSchema,
                    "configuration \(configuration.name) names entity \(entity.name), which the container's schema lacks")
            }
        } else {
            configuration.schema = schema
        }
        try configuration.validate()
        return ExternalStoreBox(try C.Store(configuration, migrationPlan: nil))
    }

    /// Rejects types that cannot be stored, before any data is touched.
    private static func validate(_ schema: Schema) throws {
        for layout in schema.layouts where layout.hierarchy != nil {
            // Two classes of a hierarchy declaring one name would share an engine slot name.
            var names = Set<String>()
            for name in layout.attributes.map(\.name) + layout.relationships.map(\.name) where !names.insert(name).inserted {
                throw SwiftDataError(
                    .loadIssueModelContainer,
                    "two classes of the hierarchy of \(layout.name) declare a property named \(name): rename one")
            }
        }
        for layout in schema.layouts {
            for attribute in layout.attributes {
                if let transformer = attribute.transformer {
                    guard TransformedValue.transformer(named: transformer) != nil else {
                        throw SwiftDataError(
                            .loadIssueModelContainer,
                            "\(layout.name).\(attribute.name) is transformable by \(transformer), but no ValueTransformer is registered under that name")
                    }
                    continue
                }
                guard !ValueCoding.isStorable(unwrappedType(attribute.swiftType)) else { continue }
                throw SwiftDataError(
                    .loadIssueModelContainer,
                    "\(layout.name).\(attribute.name) has type \(attribute.swiftType), which is neither a SwiftData value type nor Codable")
            }
        }
    }
}
