import Foundation
import OpenSwiftDataStore

/// Which store keeps each entity when a container has several configurations
/// (Apple's WWDC23 pattern: `ModelConfiguration(schema:url:)` per group of types).
///
/// An entity is kept by the first configuration, in the order given, whose schema
/// names it (a configuration without a schema names every entity); one that no
/// configuration names goes to the first. Configurations with the same `url` are
/// one store. A relationship never leaves its store, as in Core Data: the
/// container refuses to open when one would.
extension ModelContainer {
    /// Where the entities of a schema are kept, by configuration.
    struct Placement {
        /// Per entity (the schema's layouts, in order): the position of its configuration.
        let keepers: [Int]
        let configurations: [ModelConfiguration]

        init(schema: Schema, configurations: [ModelConfiguration]) {
            self.configurations = configurations
            keepers = schema.layouts.map { layout in
                configurations.firstIndex { configuration in
                    guard let own = configuration.schema else { return true }
                    return own.entities.contains { Placement.rootName(of: $0.name, in: schema) == layout.name }
                } ?? 0
            }
        }

        /// The file that keeps the entity at `entity`; nil when it is kept in memory only.
        func path(ofEntity entity: Int) -> String? {
            let configuration = configurations[keepers[entity]]
            return configuration.isStoredInMemoryOnly ? nil : configuration.url.standardizedFileURL.path
        }

        /// The files that keep entities, each once, in the order of their configurations.
        var paths: [String] {
            var seen = Set<String>()
            return keepers.indices.compactMap { path(ofEntity: $0) }.filter { seen.insert($0).inserted }
        }

        /// Whether some entity is kept in memory only.
        var keepsEntitiesInMemory: Bool { keepers.indices.contains { path(ofEntity: $0) == nil } }

        /// The first configuration that keeps its entities at `path`.
        func configuration(at path: String) -> ModelConfiguration {
            configurations.first { !$0.isStoredInMemoryOnly && $0.url.standardizedFileURL.path == path }!
        }

        /// Throws when a relationship joins entities kept in different stores.
        func checkRelationships(of schema: Schema) throws {
            for layout in schema.memberLayouts.values {
                guard let source = Placement.entityIndex(of: layout.name, in: schema) else { continue }
                for relationship in layout.relationships {
                    let destinationName = EntityLayout.entityName(of: relationship.destinationType)
                    guard let destination = Placement.entityIndex(of: destinationName, in: schema),
                          path(ofEntity: source) != path(ofEntity: destination)
                    else { continue }
                    func place(_ entity: Int) -> String { path(ofEntity: entity).map { "in \($0)" } ?? "in memory only" }
                    throw SwiftDataError(
                        .loadIssueModelContainer,
                        "\(layout.name).\(relationship.name) relates \(layout.name), kept \(place(source)), to \(destinationName), kept \(place(destination)): a relationship cannot cross stores (as in Core Data); name both in one configuration")
                }
            }
        }

        /// The name of the entity that stores class `name`: its hierarchy's root.
        static func rootName(of name: String, in schema: Schema) -> String {
            schema.memberLayouts.values.first { $0.name == name }?.hierarchy?.rootName ?? name
        }

        static func entityIndex(of name: String, in schema: Schema) -> Int? {
            let root = rootName(of: name, in: schema)
            return schema.layouts.firstIndex { $0.name == root }
        }
    }

    /// The store `configurations` describe: in memory when no entity is kept in a
    /// file; one document when one file keeps every entity; else a group of
    /// documents, one per file, with the entities kept in memory beside them.
    ///
    /// A document of an earlier schema is migrated by the plan's stages when there
    /// is a plan (`MigrationPlanRun`), otherwise lightweight (`SchemaMigration`).
    static func openStore(
        schema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)?, configurations: [ModelConfiguration]
    ) throws -> Store {
        let placement = Placement(schema: schema, configurations: configurations)
        try placement.checkRelationships(of: schema)
        let paths = placement.paths
        guard let first = paths.first else { return Store(schema: schema.storeSchema) }
        if paths.count == 1, !placement.keepsEntitiesInMemory {
            return try openDocument(placement.configuration(at: first), schema: schema, migrationPlan: migrationPlan)
        }
        guard migrationPlan == nil else {
            throw SwiftDataError(
                .loadIssueModelContainer,
                "a migration plan migrates one document, and this container keeps its entities in \(paths.count) files and memory: open each file with a container of its own to migrate it")
        }
        let storeSchema = schema.storeSchema
        let members = try paths.map { path in
            let configuration = placement.configuration(at: path)
            try prepareFolder(for: configuration)
            return DocumentGroup.Member(
                path: path,
                entityNames: storeSchema.entities.indices.filter { placement.path(ofEntity: $0) == path }.map { storeSchema.entities[$0].name },
                readOnly: !configuration.allowsSave, durability: configuration.durability)
        }
        do {
            let (group, version) = try DocumentGroup.open(members, schema: storeSchema, migrating: schema.migrationHints)
            return Store(document: group, version: version)
        } catch {
            throw SwiftDataError(.loadIssueModelContainer, error.description)
        }
    }

    /// The document of `configuration`, keeping every entity.
    private static func openDocument(
        _ configuration: ModelConfiguration, schema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)?
    ) throws -> Store {
        let url = configuration.url
        let run = migrationPlan.map { MigrationPlanRun(plan: $0, schema: schema) }
        try run?.validate()
        try prepareFolder(for: configuration)
        let target = run.map { SchemaVersionStamp($0.target) }
        let opening: Document.Opening
        do {
            // With a plan, the document is read as stored, and the plan brings it to
            // the container's schema here, between the two phases of the open.
            opening = try Document.Opening.read(
                path: url.path, schema: schema.storeSchema, readOnly: !configuration.allowsSave, durability: configuration.durability,
                migrating: schema.migrationHints, asStored: run != nil, creatingAt: target)
        } catch {
            throw SwiftDataError(.loadIssueModelContainer, error.description)
        }
        // A stage's own error, or the plan's SwiftDataError, propagates as it is.
        let migrated = try run.flatMap { run in
            try run.migrate(opening.contents.version, recorded: opening.contents.schemaVersion.map(Schema.Version.init))
        }
        do {
            // (`migrate` returns the data in the container's schema, or nil when it is
            // in it already.)
            let (document, version) = run == nil
                ? try opening.finish() : try opening.finish(migratedTo: migrated, recording: target)
            return Store(document: document, version: version)
        } catch {
            throw SwiftDataError(.loadIssueModelContainer, error.description)
        }
    }

    /// Checks the configuration's URL and makes its folder when it may save.
    private static func prepareFolder(for configuration: ModelConfiguration) throws {
        let url = configuration.url
        guard url.isFileURL else {
            throw SwiftDataError(.loadIssueModelContainer, "\(url) is not a file URL")
        }
        guard configuration.allowsSave else { return }
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw SwiftDataError(.loadIssueModelContainer, "\(url.path): \(error.localizedDescription)")
        }
    }

    /// Whether `id` names a row of this container's store (not another's).
    func isStoredHere(_ id: PersistentIdentifier) -> Bool {
        guard let entity = entityIndex(of: id) else { return false }
        return identifierScopes[entity].storeIdentifier == id.storeIdentifier
    }
}
