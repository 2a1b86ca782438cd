/// A version of an app's schema: its models and version identifier.
public protocol VersionedSchema {
    static var models: [any PersistentModel.Type] { get }
    static var versionIdentifier: Schema.Version { get }
}

/// The ordered schema versions of an app and the stages between them.
public protocol SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { get }
    static var stages: [MigrationStage] { get }
}

/// One step of a migration plan: a container given the plan runs the stages from
/// the version a document is at up to its own (`MigrationPlanRun`). A custom
/// stage's closures run on a context of the stage's old schema (`willMigrate`) and
/// of its new one (`didMigrate`); changes they leave unsaved are saved.
public enum MigrationStage {
    case lightweight(fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type)
    case custom(
        fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type,
        willMigrate: ((_ context: ModelContext) throws -> Void)?,
        didMigrate: ((_ context: ModelContext) throws -> Void)?)
}
