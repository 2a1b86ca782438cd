/// Errors of the storage engine.
public enum StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// An update gave a row the unique key another row already holds.
    case uniqueConstraintViolation(entity: String, attributes: [String], key: [Value])
    /// A change named an entity the schema does not have.
    case unknownEntity(String)
    /// The document could not record the commit (disk full, closed, read-only…);
    /// nothing was published.
    case document(DocumentError)

    public var description: String {
        switch self {
        case let .uniqueConstraintViolation(entity, attributes, key):
            "unique constraint violated: \(entity)(\(attributes.joined(separator: ", "))) = \(key)"
        case let .unknownEntity(name):
            "unknown entity \(name)"
        case let .document(error):
            error.description
        }
    }
}
