import OpenSwiftDataStore
extension PersistentIdentifier {
    /// The permanent identifier a custom store gives a model it saved: its store,
    /// its entity and the store's own primary key for it.
    ///
    /// A non-negative integer key is held as a row key; any other key (a `UUID`, a
    /// string) as its `description`, so two keys of one text name the same model (an
    /// identifier decoded from JSON has a string key, and must equal the `UUID` one it
    /// was encoded from).
    /// - Throws: `DataStoreError.unsupportedFeature` when the store identifier, the
    ///   entity name or the key's text is empty.
    public static func identifier<T>(
        for storeIdentifier: String, entityName: String, primaryKey: T
    ) throws -> PersistentIdentifier where T: Comparable, T: CustomStringConvertible, T: Codable, T: Hashable {
        let text = primaryKey.description
        guard !storeIdentifier.isEmpty, !entityName.isEmpty, !text.isEmpty else {
            throw DataStoreError.unsupportedFeature
        }
        if let integer = primaryKey as? any BinaryInteger, let key = Int64(exactly: integer), key >= 0 {
            return PersistentIdentifier(storeIdentifier: storeIdentifier, entityName: entityName, key: key)
        }
        return PersistentIdentifier(storeIdentifier: storeIdentifier, entityName: entityName, primaryKey: text)
    }

    /// An identifier whose primary key is `primaryKey`'s text (see `IdentifierScope`).
    init(storeIdentifier: String?, entityName: String, primaryKey: String) {
        // A stable hash of the text, kept non-negative: a negative key means temporary.
        let hash = StableName.hash(primaryKey)
        self.init(
            scope: IdentifierScope(storeIdentifier: storeIdentifier, entityName: entityName, primaryKey: primaryKey),
            key: Int64(bitPattern: hash & UInt64(Int64.max)))
    }
}

extension PersistentIdentifier {
    /// SPI: the integer primary key of a permanent identifier whose key is one (the
    /// row key of stores that number their rows); nil otherwise.
    @_spi(DataStores)
    public var integerPrimaryKey: Int64? {
        id.scope.primaryKey == nil && !isTemporary ? id.key : nil
    }
}

/// SPI: `PersistentIdentifier.identifier(for:entityName:primaryKey:)` for the row keys
/// of one store's entity, with the names checked once and one scope shared by every
/// identifier made: a store that makes an identifier a fetched row (PostgresStore) spent
/// 4 % of a range fetch in that function's generic key handling and allocations.
@_spi(DataStores)
public struct RowIdentifiers: Sendable {
    private let scope: IdentifierScope

    /// - Throws: `DataStoreError.unsupportedFeature` when either name is empty.
    public init(storeIdentifier: String, entityName: String) throws {
        guard !storeIdentifier.isEmpty, !entityName.isEmpty else { throw DataStoreError.unsupportedFeature }
        scope = IdentifierScope(storeIdentifier: storeIdentifier, entityName: entityName)
    }

    /// The identifier of row `key`: the one `identifier(for:entityName:primaryKey:)` makes.
    public func identifier(_ key: Int64) throws -> PersistentIdentifier {
        guard key >= 0 else {
            // (A negative key is a text key there, not a row key.)
            return try .identifier(for: scope.storeIdentifier ?? "", entityName: scope.entityName, primaryKey: key)
        }
        return PersistentIdentifier(scope: scope, key: key)
    }
}
