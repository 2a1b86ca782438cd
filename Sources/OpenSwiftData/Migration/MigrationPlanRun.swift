import OpenSwiftDataStore

/// Runs a `SchemaMigrationPlan` over a document's data as a container opens it.
///
/// The document's version in the plan is the one it records, which must be a
/// version the plan lists with the document's shape (an unlisted one is a later
/// app's, `backwardMigration`, or another's, `unknownSchema`). A document that
/// records no version is at the container's version when it has the container's
/// shape, unless `hashModifier`s tell the versions of that shape apart; otherwise at
/// the earliest version of its shape (written before the app had a plan, it is most
/// likely at its first).
/// From there the stages run in order up to the version of the container's schema:
/// a custom stage's `willMigrate` on a context of the old schema, the lightweight
/// step (`SchemaMigration`) to the next version, then `didMigrate` on a context of
/// the new one. Versions with no stage from them are followed by a lightweight step.
/// The whole run works on the data in memory, between the two phases of opening the
/// document (`Document.Opening`): the engine reads the document as stored, the run
/// migrates it, and the engine writes the result as one new document (or nothing,
/// read-only), so a failure anywhere leaves the file as it was.
final class MigrationPlanRun {
    let plan: any SchemaMigrationPlan.Type
    /// The container's schema: where the run ends.
    let schema: Schema

    private let schemas: [Schema]
    /// The plan's version whose models are the container's, nil when none is.
    private let targetIndex: Int?

    init(plan: any SchemaMigrationPlan.Type, schema: Schema) {
        self.plan = plan
        self.schema = schema
        self.schemas = plan.schemas.map { Schema(versionedSchema: $0) }
        // The version declaring the container's own model classes; else the last of its shape.
        let types = Set(schema.modelTypes.map { ObjectIdentifier($0) })
        let application = schema.storeSchema
        self.targetIndex = schemas.firstIndex { Set($0.modelTypes.map { ObjectIdentifier($0) }) == types }
            ?? schemas.lastIndex { $0.storeSchema.hasSameShape(as: application) }
    }

    /// Throws unless every version of the plan can be recorded in a document
    /// (`SchemaVersionStamp`: up to 2047.1023.1023): a version that cannot would leave
    /// documents unstamped, to be rewritten, or migrated again, on every open.
    func validate() throws {
        var versions = plan.schemas.map { $0.versionIdentifier }
        versions.append(target)
        for version in versions where !SchemaVersionStamp(version).isRecordable {
            throw SwiftDataError(
                .loadIssueModelContainer,
                "\(plan)'s version \(version) cannot be recorded in a document: versions go up to 2047.1023.1023")
        }
    }

    /// The version the migrated document records: the plan's version of the
    /// container's schema, or the schema's own version when the plan lacks it.
    var target: Schema.Version {
        targetIndex.map { plan.schemas[$0].versionIdentifier } ?? schema.version
    }

    /// `version` (in the document's schema) in the container's schema, nil when
    /// the document is the container's version already.
    func migrate(_ version: StoreVersion, recorded: Schema.Version?) throws -> StoreVersion? {
        let application = schema.storeSchema
        if version.schema.hasSameShape(as: application), recorded.map({ $0 == target }) ?? !hashModifiersTellApart {
            return version.schema == application ? nil : try lightweight(version, to: schema)
        }
        let matching = schemas.indices.filter { schemas[$0].storeSchema.hasSameShape(as: version.schema) }
        let source: Int
        if let recorded {
            // The recorded version decides; one the plan does not list is a later
            // app's (or another app's), never taken for a known version of its shape.
            guard let listed = plan.schemas.firstIndex(where: { $0.versionIdentifier == recorded }) else {
                if recorded > target {
                    throw SwiftDataError(.backwardMigration, "the document is at version \(recorded), later than the application's \(target)")
                }
                throw SwiftDataError(.unknownSchema, "the document records version \(recorded), which \(plan) does not list")
            }
            guard matching.contains(listed) else {
                throw SwiftDataError(.unknownSchema, "the document records version \(recorded), but its schema is not that version's")
            }
            source = listed
        } else {
            guard let earliest = matching.first else {
                throw SwiftDataError(.unknownSchema, "the document's schema is none of \(plan)'s versions")
            }
            source = earliest
        }
        let end = targetIndex ?? schemas.count - 1
        guard source <= end else {
            throw SwiftDataError(
                .backwardMigration,
                "the document is at version \(plan.schemas[source].versionIdentifier), later than the application's \(target)")
        }
        var version = try lightweight(version, to: schemas[source])
        var at = source
        while at < end {
            let stage = plan.stages.first { index(of: $0.fromVersion) == at }
            let next = stage.flatMap { index(of: $0.toVersion) } ?? at + 1
            guard next > at, next <= end else {
                throw SwiftDataError(
                    .loadIssueModelContainer,
                    "\(plan)'s stage from version \(plan.schemas[at].versionIdentifier) leads to \(plan.schemas[min(next, schemas.count - 1)].versionIdentifier), not towards \(target)")
            }
            if case let .custom(_, _, willMigrate?, _) = stage {
                version = try run(willMigrate, on: version, in: schemas[at])
            }
            version = try lightweight(version, to: schemas[next])
            if case let .custom(_, _, _, didMigrate?) = stage {
                version = try run(didMigrate, on: version, in: schemas[next])
            }
            at = next
        }
        return version.schema == application ? version : try lightweight(version, to: schema)
    }

    /// Whether the plan's versions of the container's shape differ in their
    /// attributes' `hashModifier`s, which is how Apple's version hashes tell such
    /// versions apart: a document that records no version is then not taken to be
    /// at the container's version, but at the earliest of that shape.
    private var hashModifiersTellApart: Bool {
        let application = schema.storeSchema
        let own = Self.hashModifiers(schema)
        return schemas.contains { $0.storeSchema.hasSameShape(as: application) && Self.hashModifiers($0) != own }
    }

    private static func hashModifiers(_ schema: Schema) -> Set<String> {
        Set(schema.layouts.flatMap { layout in
            layout.attributes.compactMap { attribute in attribute.hashModifier.map { "\(layout.name).\(attribute.name): \($0)" } }
        })
    }

    /// The position of `versionedSchema` in the plan's schemas.
    private func index(of versionedSchema: any VersionedSchema.Type) -> Int? {
        plan.schemas.firstIndex { ObjectIdentifier($0) == ObjectIdentifier(versionedSchema) }
    }

    private func lightweight(_ version: StoreVersion, to schema: Schema) throws -> StoreVersion {
        do {
            return try SchemaMigration.migrate(version, to: schema.storeSchema, hints: schema.migrationHints)
        } catch {
            throw SwiftDataError(.loadIssueModelContainer, "migrating to version \(schema.version): \(error)")
        }
    }

    /// Runs a stage's closure on a context over `version` in `schema`, in memory;
    /// what the closure leaves unsaved is saved when it returns.
    private func run(_ body: (ModelContext) throws -> Void, on version: StoreVersion, in schema: Schema) throws -> StoreVersion {
        let store = Store(schema: version.schema, version: version)
        let container = try ModelContainer(
            for: schema, migrationPlan: nil, configurations: [ModelConfiguration(isStoredInMemoryOnly: true)], store: store)
        let context = ModelContext(container)
        try body(context)
        if context.hasChanges { try context.save() }
        return store.current
    }
}

extension MigrationStage {
    var fromVersion: any VersionedSchema.Type {
        switch self {
        case let .lightweight(from, _), let .custom(from, _, _, _): from
        }
    }

    var toVersion: any VersionedSchema.Type {
        switch self {
        case let .lightweight(_, to), let .custom(_, to, _, _): to
        }
    }
}

extension SchemaVersionStamp {
    init(_ version: Schema.Version) {
        self.init(version.major, version.minor, version.patch)
    }
}

extension Schema.Version {
    init(_ stamp: SchemaVersionStamp) {
        self.init(stamp.major, stamp.minor, stamp.patch)
    }
}
