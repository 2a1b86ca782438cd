/// Errors of the storage engine.
public enum StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// An update gave a row the unique key another row already holds.
    case uniqueConstraintViolation(entity: String, attributes: [String], key: [Value])
    /// A change named an entity the schema does not have.
    case unknownEntity(String)
    /// The document could not record the commit (disk full, closed, read-only…);
    /// nothing was published.
    case document(DocumentError)
    /// The commit would cross a limit of the store or of its document format (row
    /// identifiers of an entity used up, say); nothing was published or written.
    case limitExceeded(String)
    /// Rows a commit expected unchanged (`ChangeSet.expectations`) were changed or
    /// deleted by another writer since they were read; nothing was published or written.
    case conflict(changed: [EntityRow], deleted: [EntityRow])

    public var description: String {
        switch self {
        case let .uniqueConstraintViolation(entity, attributes, key):
            "unique constraint violated: \(entity)(\(attributes.joined(separator: ", "))) = \(key)"
        case let .unknownEntity(name):
            "unknown entity \(name)"
        case let .document(error):
            error.description
        case let .limitExceeded(reason):
            "limit exceeded: \(reason)"
        case let .conflict(changed, deleted):
            "conflict: \(changed.count) row(s) changed and \(deleted.count) deleted by another writer since they were read"
        }
    }
}
