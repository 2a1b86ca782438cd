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

    public static let includePendingChangesWithBatchSize = SwiftDataError(.includePendingChangesWithBatchSize)
    public static let unsupportedPredicate = SwiftDataError(.unsupportedPredicate)
    public static let unsupportedKeyPath = SwiftDataError(.unsupportedKeyPath)
    public static let sortingPendingChangesWithIdentifiers = SwiftDataError(.sortingPendingChangesWithIdentifiers)
    public static let unsupportedSortDescriptor = SwiftDataError(.unsupportedSortDescriptor)
    public static let duplicateConfiguration = SwiftDataError(.duplicateConfiguration)
    public static let configurationFileNameContainsInvalidCharacters = SwiftDataError(.configurationFileNameContainsInvalidCharacters)
    public static let configurationFileNameTooLong = SwiftDataError(.configurationFileNameTooLong)
    public static let configurationSchemaNotFoundInContainerSchema = SwiftDataError(.configurationSchemaNotFoundInContainerSchema)
    public static let loadIssueModelContainer = SwiftDataError(.loadIssueModelContainer)
    public static let modelValidationFailure = SwiftDataError(.modelValidationFailure)
    public static let missingModelContext = SwiftDataError(.missingModelContext)
    public static let backwardMigration = SwiftDataError(.backwardMigration)
    public static let unknownSchema = SwiftDataError(.unknownSchema)
    public static let historyTokenExpired = SwiftDataError(.historyTokenExpired)
    public static let invalidTransactionFetchRequest = SwiftDataError(.invalidTransactionFetchRequest)

    /// OpenSwiftData: an update gave a model the unique key another model holds.
    /// (Inserts with an existing key update that model instead: an upsert.)
    public static let uniqueConstraintViolation = SwiftDataError(.uniqueConstraintViolation)
    /// OpenSwiftData: `save()` on a container whose configuration has `allowsSave: false`.
    public static let readOnlyConfiguration = SwiftDataError(.readOnlyConfiguration)
    /// OpenSwiftData: a model type or identifier the container's schema does not have.
    public static let unknownModelType = SwiftDataError(.unknownModelType)
    /// OpenSwiftData: the save would cross a limit of the store (the row identifiers
    /// of an entity used up); nothing was saved.
    public static let limitExceeded = SwiftDataError(.limitExceeded)

    public static func == (lhs: SwiftDataError, rhs: SwiftDataError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public static func ~= (lhs: SwiftDataError, rhs: any Error) -> Bool {
        (rhs as? SwiftDataError)?.code == lhs.code
    }

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
