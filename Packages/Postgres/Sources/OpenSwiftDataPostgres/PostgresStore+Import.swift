import Foundation
@_spi(DataStores) import OpenSwiftData

extension PostgresStore {
    /// Copies every model of `types` from `source` (a document, or any store the
    /// built-in `DefaultStore` opens) into this database, in one transaction, with
    /// relationships between them; returns how many models were copied.
    ///
    /// How an app moves from the embedded store to PostgreSQL: open the document with
    /// `DefaultStore(ModelConfiguration(schema:url:))`, open this store with the same
    /// schema, import. Models whose unique key the database has update that row
    /// (so running it twice copies nothing twice); models without a unique key are
    /// inserted again.
    /// - Parameter types: the schema's model types (every entity to copy; relationships
    ///   to entities not listed are dropped).
    @discardableResult
    public func importModels(from source: DefaultStore, types: [any PersistentModel.Type]) throws -> Int {
        let state = EditingState(author: "import")
        var snapshots: [DefaultSnapshot] = []
        func read<T: PersistentModel>(_ type: T.Type) throws {
            snapshots += try source.fetch(DataStoreFetchRequest(descriptor: FetchDescriptor<T>(), editingState: state)).fetchedSnapshots
        }
        for type in types { try read(type) }
        // Relationships name the source's identifiers; those not copied are dropped.
        let copied = Set(snapshots.map(\.persistentIdentifier))
        let request = DataStoreSaveChangesRequest(editingState: state, inserted: snapshots.map { snapshot in
            var entries = snapshot.entries
            for (name, entry) in entries {
                switch entry {
                case let .toOne(id?) where !copied.contains(id): entries[name] = .toOne(nil)
                case let .toMany(ids): entries[name] = .toMany(ids.filter(copied.contains))
                default: continue
                }
            }
            return DefaultSnapshot(persistentIdentifier: snapshot.persistentIdentifier, entries: entries)
        })
        _ = try save(request)
        invalidateState(for: state)
        return snapshots.count
    }
}
