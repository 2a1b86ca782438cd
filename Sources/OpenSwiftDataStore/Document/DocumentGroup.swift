import Foundation

/// Several documents holding one store between them, each the rows of its own
/// entities: a container with one file per `ModelConfiguration`.
///
/// Every document is a whole document on its own (`osd` opens any of them
/// alone), with its entities, their blobs and the history of their changes. The
/// store's generations count every save; a document journals only the saves that
/// touched it, so its generations skip and each frame names the one before
/// (format 4.1). History transactions keep the store's generation in every
/// document, so a reopen joins them again and tokens stay valid.
///
/// A save touching several documents appends to each in turn; when one fails,
/// the frames already appended are cut off again, so the save is all or nothing
/// while the process lives. A crash between two appends keeps the documents
/// written before it (as Core Data's stores save one by one).
///
/// `@unchecked Sendable`: its mutable state (`historyGenerations`) is touched only
/// from the store's serial commit path, as every `StorePersistence` method is.
public final class DocumentGroup: StorePersistence, @unchecked Sendable {
    /// One document of a group: where it is and which entities it holds.
    public struct Member: Sendable {
        public var path: String
        public var entityNames: [String]
        public var readOnly: Bool
        public var durability: Durability

        public init(path: String, entityNames: [String], readOnly: Bool, durability: Durability) {
            self.path = path
            self.entityNames = entityNames
            self.readOnly = readOnly
            self.durability = durability
        }
    }

    public let documents: [Document]
    /// Per document, the schema of its file: its entities, then those it carries.
    private let schemas: [StoreSchema]
    /// Per entity of the store: its document and its position there; nil for an
    /// entity kept in memory only.
    private let placement: [(document: Int, entity: Int)?]
    /// Per document, per entity of its own: the entity's position in the store.
    private let storeEntities: [[Int]]
    /// Per document, the generations of the history transactions it holds: a
    /// history deletion names only those (its reader checks that each is there).
    private var historyGenerations: [Set<UInt64>]
    /// Per read-only document, the row count of each of its tables when it opened:
    /// no save changes them (`append` refuses), so a version whose counts differ
    /// comes from `removeAll`, which such a document cannot follow.
    private let readOnlyCounts: [[Int]]

    private init(
        documents: [Document], schemas: [StoreSchema], placement: [(document: Int, entity: Int)?],
        historyGenerations: [Set<UInt64>], tables: [Table]
    ) {
        self.documents = documents
        self.schemas = schemas
        self.placement = placement
        var storeEntities = documents.map { _ in [Int]() }
        for (e, place) in placement.enumerated() {
            guard let place else { continue }
            if storeEntities[place.document].count <= place.entity {
                storeEntities[place.document] += Array(repeating: -1, count: place.entity + 1 - storeEntities[place.document].count)
            }
            storeEntities[place.document][place.entity] = e
        }
        self.storeEntities = storeEntities
        self.historyGenerations = historyGenerations
        self.readOnlyCounts = documents.indices.map { d in
            documents[d].isReadOnly ? storeEntities[d].map { tables[$0].count } : []
        }
    }

    /// Opens (or creates) every member and joins them into one version of
    /// `schema`: each entity named by a member is read from it, every other is
    /// empty and kept in memory only. Entities a member's file holds that the
    /// schema lacks are carried, as by `Document.open`, after the schema's.
    ///
    /// - Throws: `DocumentError` from a member, or `.schemaMismatch` when an entity
    ///   the schema places in one member is stored in another (that file is left
    ///   untouched). Members opened before the failure may have been created, or
    ///   rewritten as format 4.1 with the same content.
    public static func open(
        _ members: [Member], schema: StoreSchema, migrating hints: MigrationHints?
    ) throws(DocumentError) -> (DocumentGroup, StoreVersion) {
        var documents: [Document] = []
        var versions: [StoreVersion] = []
        func place(of name: String) -> String {
            members.first { $0.entityNames.contains(name) }.map { "in \($0.path)" } ?? "in memory only"
        }
        for member in members {
            let elsewhere = schema.entities.map(\.name).filter { !member.entityNames.contains($0) }
            let positions = schema.entities.indices.filter { member.entityNames.contains(schema.entities[$0].name) }
            let own = StoreSchema(entities: positions.map { schema.entities[$0] })
            let (document, version) = try Document.open(
                path: member.path, schema: own, readOnly: member.readOnly, durability: member.durability,
                migrating: hints.map { hints in MigrationHints(entities: positions.map { hints.entities[$0] }) },
                generationsMaySkip: true, keptElsewhere: Dictionary(uniqueKeysWithValues: elsewhere.map { ($0, place(of: $0)) }))
            documents.append(document)
            versions.append(version)
        }
        // The store's entities: the schema's, then what each file carries.
        var entities = schema.entities
        var placement = [(document: Int, entity: Int)?](repeating: nil, count: entities.count)
        for (d, version) in versions.enumerated() {
            for (local, entity) in version.schema.entities.enumerated() {
                if let e = schema.entityIndex(named: entity.name), placement[e] == nil,
                   members[d].entityNames.contains(entity.name) {
                    placement[e] = (d, local)
                } else if entities.contains(where: { $0.name == entity.name }) {
                    throw .schemaMismatch(
                        path: members[d].path, reason: "it stores entity \(entity.name), which another file of the container stores too")
                } else {
                    entities.append(entity)
                    placement.append((d, local))
                }
            }
        }
        let storeSchema = StoreSchema(entities: entities)
        var tables: [Table] = []
        var indexes: [[OrderedIndex]] = []
        for (e, entity) in entities.enumerated() {
            if let place = placement[e] {
                tables.append(versions[place.document].tables[place.entity])
                indexes.append(versions[place.document].orderedIndexes[place.entity])
            } else {
                tables.append(Table(entity: entity))
                indexes.append(entity.orderedIndexSlots.map { OrderedIndex(slots: $0, of: entity) })
            }
        }
        let group = DocumentGroup(
            documents: documents, schemas: versions.map(\.schema), placement: placement,
            historyGenerations: versions.map { version in
                var generations = Set<UInt64>()
                version.history.forEach(after: nil) { generations.insert($0.generation); return true }
                return generations
            },
            tables: tables)
        var version = StoreVersion(
            schema: storeSchema, tables: tables, generation: versions.map(\.generation).max() ?? 0, orderedIndexes: indexes)
        version.history = group.joinedHistory(versions)
        return (group, version)
    }

    /// The documents' histories as one: a save that touched several documents is
    /// one transaction again (same generation), its changes in document order.
    /// - Complexity: O(transactions × log transactions)
    private func joinedHistory(_ versions: [StoreVersion]) -> HistoryLog {
        var byGeneration: [UInt64: StoredTransaction] = [:]
        var horizon: UInt64 = 0
        for (d, version) in versions.enumerated() {
            horizon = max(horizon, version.history.horizon)
            version.history.forEach(after: nil) { transaction in
                var mapped = transaction
                mapped.changes = transaction.changes.map { $0.moved(to: storeEntities[d][$0.entity]) }
                if var joined = byGeneration[transaction.generation] {
                    joined.changes += mapped.changes
                    byGeneration[transaction.generation] = joined
                } else {
                    byGeneration[transaction.generation] = mapped
                }
                return true
            }
        }
        // (Each file's reader removed the generations deleted from it; a deletion
        // may leave older ones, so none is dropped for being below the horizon.)
        return HistoryLog(transactions: byGeneration.keys.sorted().map { byGeneration[$0]! }, horizon: horizon)
    }

    /// The document that keeps the store's entity at `entity`; nil when it is
    /// kept in memory only.
    public func document(ofEntity entity: Int) -> Document? {
        placement.indices.contains(entity) ? placement[entity].map { documents[$0.document] } : nil
    }

    // MARK: Saving

    /// Appends each document's part of `record` to it, in order; when one fails,
    /// cuts off the parts already appended and throws its error.
    /// - Throws: `.readOnly` when the save changes an entity of a document opened
    ///   read-only (before anything is written).
    public func append(_ record: CommitRecord, schema: StoreSchema) throws(DocumentError) -> Document.PendingSync? {
        let parts = split(record)
        for (d, part) in parts.enumerated() where part != nil && documents[d].isReadOnly {
            throw .readOnly(path: documents[d].path)
        }
        var appended: [Int] = []
        for (d, part) in parts.enumerated() {
            guard let part else { continue }
            do throws(DocumentError) {
                // (A group's document syncs its frame within `append`: nothing to wait for.)
                _ = try documents[d].append(part, schema: schemas[d])
            } catch {
                for earlier in appended.reversed() { try? documents[earlier].retractAppend(of: record.generation) }
                throw error
            }
            appended.append(d)
        }
        for (d, part) in parts.enumerated() {
            guard let part else { continue }
            if let transaction = part.transaction { historyGenerations[d].insert(transaction.generation) }
            if let pruning = part.pruning { historyGenerations[d].subtract(pruning.generations) }
        }
        // (Each document synced its part as it appended it: see `Document.append`.)
        return nil
    }

    /// Per document, its part of `record` (entities at its own positions), or nil
    /// when the save leaves it alone.
    private func split(_ record: CommitRecord) -> [CommitRecord?] {
        var parts = documents.map { _ in
            CommitRecord(
                generation: record.generation, timestamp: record.timestamp, author: record.author, nextRawIDs: [], puts: [],
                deletes: [])
        }
        var touched = [Bool](repeating: false, count: documents.count)
        for next in record.nextRawIDs {
            guard let place = placement[next.entity] else { continue }
            parts[place.document].nextRawIDs.append((place.entity, next.next))
            touched[place.document] = true
        }
        for put in record.puts {
            guard let place = placement[put.entity] else { continue }
            parts[place.document].puts.append(CommitRecord.Put(entity: place.entity, id: put.id, row: put.row))
            touched[place.document] = true
        }
        for delete in record.deletes {
            guard let place = placement[delete.entity] else { continue }
            parts[place.document].deletes.append(EntityRow(entity: place.entity, id: delete.id))
            touched[place.document] = true
        }
        if let transaction = record.transaction {
            for change in transaction.changes {
                guard let place = placement[change.entity] else { continue }
                if parts[place.document].transaction == nil {
                    parts[place.document].transaction = StoredTransaction(
                        generation: transaction.generation, timestamp: transaction.timestamp, author: transaction.author,
                        changes: [])
                }
                parts[place.document].transaction!.changes.append(change.moved(to: place.entity))
                touched[place.document] = true
            }
        }
        if let pruning = record.pruning {
            // (A read-only file keeps its history: a deletion cannot reach it.)
            for d in documents.indices where !documents[d].isReadOnly {
                let held = pruning.generations.filter { historyGenerations[d].contains($0) }
                guard !held.isEmpty else { continue }
                parts[d].pruning = (pruning.horizon, held)
                touched[d] = true
            }
        }
        if !touched.contains(true), let first = documents.firstIndex(where: { !$0.isReadOnly }) {
            // A save of entities kept in memory only still takes a generation, and a
            // reopen must not hand it out again (a history token may name it): the
            // first writable file records it, as a frame that changes nothing.
            touched[first] = true
        }
        return parts.indices.map { touched[$0] ? parts[$0] : nil }
    }

    // MARK: Compaction

    public func compactIfWanted(_ version: StoreVersion) {
        for (d, document) in documents.enumerated() where !document.isReadOnly && document.wantsCompaction {
            do {
                try document.compact(part(d, of: version))
            } catch {
                document.compactionFailed()
            }
        }
    }

    /// Compacts every writable document, in order; stops at the first failure
    /// (those compacted before it stay compacted: each is whole, with the same
    /// content, either way). Read-only documents are left as they are.
    public func compact(_ version: StoreVersion) throws(DocumentError) {
        for (d, document) in documents.enumerated() where !document.isReadOnly {
            try document.compact(part(d, of: version))
        }
        // (A compaction keeps every transaction: `historyGenerations` stays right.)
    }

    /// Empties every document (`Store.removeAll`). A failure part way puts the
    /// documents already emptied back to `old`, so what is recorded is all of `old`
    /// or all of `emptied`; if even that fails, saves stop (the documents say why).
    public func empty(to emptied: StoreVersion, from old: StoreVersion) throws(DocumentError) {
        for (d, document) in documents.enumerated() where document.isReadOnly {
            if storeEntities[d].map({ emptied.tables[$0].count }) != readOnlyCounts[d] { throw .readOnly(path: document.path) }
        }
        var done: [Int] = []
        for (d, document) in documents.enumerated() where !document.isReadOnly {
            do throws(DocumentError) {
                try document.compact(part(d, of: emptied))
            } catch {
                for earlier in done.reversed() {
                    do throws(DocumentError) {
                        try documents[earlier].compact(part(earlier, of: old))
                    } catch {
                        documents[earlier].poison(error)
                    }
                }
                throw error
            }
            done.append(d)
        }
        // An emptied store keeps no history.
        historyGenerations = documents.map { _ in [] }
    }

    /// Erases every document, in order; refuses before erasing any when one is
    /// read-only.
    public func erase() throws(DocumentError) {
        if let readOnly = documents.first(where: \.isReadOnly) { throw .readOnly(path: readOnly.path) }
        for document in documents { try document.erase() }
    }

    /// Each document counts its own compactions and recovery.
    public func attach(_ metrics: StoreMetrics) {
        for document in documents { document.attach(metrics) }
    }

    /// Document `d`'s part of `version`: its entities' tables and indexes, the
    /// history of their changes, at the store's generation.
    /// - Complexity: O(entities + history)
    func part(_ d: Int, of version: StoreVersion) -> StoreVersion {
        let entities = storeEntities[d]
        var part = StoreVersion(
            schema: StoreSchema(entities: entities.map { version.schema.entities[$0] }),
            tables: entities.map { version.tables[$0] }, generation: version.generation,
            orderedIndexes: entities.map { version.orderedIndexes[$0] })
        var local: [Int: Int] = [:]
        for (l, e) in entities.enumerated() { local[e] = l }
        part.history = version.history.mapChanges { change in local[change.entity].map { change.moved(to: $0) } }
        return part
    }
}
