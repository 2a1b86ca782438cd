import OpenSwiftDataStore

/// A SwiftData error: one of the documented codes, plus a message saying what
/// went wrong. Equality and pattern matching compare the code only, so
/// `catch SwiftDataError.modelValidationFailure` works as on Apple platforms.
public struct SwiftDataError: Error, Hashable, Sendable, CustomStringConvertible {
    enum Code: String, Hashable, Sendable {
        case includePendingChangesWithBatchSize, unsupportedPredicate, unsupportedKeyPath
        case sortingPendingChangesWithIdentifiers, unsupportedSortDescriptor, duplicateConfiguration
        case configurationFileNameContainsInvalidCharacters, configurationFileNameTooLong
        case configurationSchemaNotFoundInContainerSchema, loadIssueModelContainer, modelValidationFailure
        case missingModelContext, backwardMigration, unknownSchema, historyTokenExpired
        case invalidTransactionFetchRequest
        // Additive (not in Apple's SwiftData):
        case uniqueConstraintViolation, readOnlyConfiguration, unknownModelType, limitExceeded
    }

    let code: Code
    /// What went wrong, for people; not part of equality.
    public let message: String?

    init(_ code: Code, _ message: String? = nil) {
        self.code = code
        self.message = message
    }

    /// A batched fetch (`fetch(_:batchSize:)`) was asked to include unsaved inserts of
    /// its model type; save first or turn off `includePendingChanges`.
    public static let includePendingChangesWithBatchSize = SwiftDataError(.includePendingChangesWithBatchSize)
    /// The predicate cannot be answered.
    ///
    /// Thrown here only by nearest-neighbour fetches whose center point does not
    /// fit the R-tree index; an ordinary fetch evaluates a predicate it cannot
    /// compile in Swift instead.
    public static let unsupportedPredicate = SwiftDataError(.unsupportedPredicate)
    /// A key path names no stored attribute (a `@Transient` or computed property), or no
    /// R-tree index covers the key paths of a nearest-neighbour fetch.
    public static let unsupportedKeyPath = SwiftDataError(.unsupportedKeyPath)
    /// `fetchIdentifiers(_:)` was asked to sort while unsaved inserts of the model type
    /// take part; save first or turn off `includePendingChanges`.
    public static let sortingPendingChangesWithIdentifiers = SwiftDataError(.sortingPendingChangesWithIdentifiers)
    /// A sort the store cannot perform. Not thrown by OpenSwiftData, which sorts in
    /// memory what the store cannot.
    public static let unsupportedSortDescriptor = SwiftDataError(.unsupportedSortDescriptor)
    /// A container was given two equal configurations.
    public static let duplicateConfiguration = SwiftDataError(.duplicateConfiguration)
    /// A configuration's file name has characters the file system rejects. Not thrown by
    /// OpenSwiftData; kept for source compatibility.
    public static let configurationFileNameContainsInvalidCharacters = SwiftDataError(.configurationFileNameContainsInvalidCharacters)
    /// A configuration's file name is too long. Not thrown by OpenSwiftData; kept for
    /// source compatibility.
    public static let configurationFileNameTooLong = SwiftDataError(.configurationFileNameTooLong)
    /// A configuration's schema names an entity that the container's schema lacks.
    public static let configurationSchemaNotFoundInContainerSchema = SwiftDataError(.configurationSchemaNotFoundInContainerSchema)
    /// The container's store could not be opened or migrated; the message says why.
    public static let loadIssueModelContainer = SwiftDataError(.loadIssueModelContainer)
    /// A save or delete broke a schema rule: a nil non-optional to-one relationship,
    /// a to-many count outside its minimum and maximum, or a `.deny` delete rule
    /// still in force. Also thrown when a custom store's save left an insert
    /// without a permanent identifier.
    public static let modelValidationFailure = SwiftDataError(.modelValidationFailure)
    /// An operation needed a model's context and the model had none. Not thrown by
    /// OpenSwiftData; kept for source compatibility.
    public static let missingModelContext = SwiftDataError(.missingModelContext)
    /// The store was written by a later schema version than the application's.
    public static let backwardMigration = SwiftDataError(.backwardMigration)
    /// The store's schema, or the version it records, is none of the migration plan's
    /// versions.
    public static let unknownSchema = SwiftDataError(.unknownSchema)
    /// History after the requested token was deleted, so the reader must resynchronize.
    public static let historyTokenExpired = SwiftDataError(.historyTokenExpired)
    /// A history descriptor's transaction type is not the type the store keeps.
    public static let invalidTransactionFetchRequest = SwiftDataError(.invalidTransactionFetchRequest)

    /// OpenSwiftData: an update gave a model the unique key another model holds.
    /// (Inserts with an existing key update that model instead: an upsert.)
    public static let uniqueConstraintViolation = SwiftDataError(.uniqueConstraintViolation)
    /// OpenSwiftData: `save()` or `deleteHistory(_:)` on a container whose
    /// configuration has `allowsSave: false`.
    public static let readOnlyConfiguration = SwiftDataError(.readOnlyConfiguration)
    /// OpenSwiftData: a model type or identifier the container's schema does not have.
    public static let unknownModelType = SwiftDataError(.unknownModelType)
    /// OpenSwiftData: the save would cross a limit of the store (the row identifiers
    /// of an entity used up); nothing was saved.
    public static let limitExceeded = SwiftDataError(.limitExceeded)

    /// Errors are equal when their codes are; the message is not compared.
    public static func == (lhs: SwiftDataError, rhs: SwiftDataError) -> Bool { lhs.code == rhs.code }
    /// Hashes the code only, matching `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// Matches any error that is a `SwiftDataError` with this code, so `catch
    /// SwiftDataError.x` works.
    public static func ~= (lhs: SwiftDataError, rhs: any Error) -> Bool {
        (rhs as? SwiftDataError)?.code == lhs.code
    }

    /// The error's code, followed by its message when it has one.
    public var description: String {
        message.map { "SwiftDataError.\(code.rawValue): \($0)" } ?? "SwiftDataError.\(code.rawValue)"
    }
}

/// Errors of document files (opening, saving, compacting), from the storage engine.
public typealias DocumentError = OpenSwiftDataStore.DocumentError
/// How far a save goes to survive power loss (`ModelConfiguration.durability`).
public typealias Durability = OpenSwiftDataStore.Durability

extension StoreError {
    /// The error `save()` throws for a failed commit: a unique-constraint
    /// violation as `SwiftDataError`, a document failure as `DocumentError`.
    var apiError: any Error {
        switch self {
        case .uniqueConstraintViolation: SwiftDataError(.uniqueConstraintViolation, description)
        case .unknownEntity: SwiftDataError(.unknownModelType, description)
        case .limitExceeded: SwiftDataError(.limitExceeded, description)
        case let .document(error): error
        // (Unreached: only a save sets expectations, and it maps the rows to
        // identifiers itself, `saveConflict(changed:deleted:)`.)
        case .conflict: SaveConflictError()
        }
    }
}
