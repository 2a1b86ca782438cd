import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
@_spi(DataStores) import OpenSwiftData
import OpenSwiftDataStore
import PostgresNIO

/// A `DataStore` over PostgreSQL, through postgres-nio: the same `@Model` code, its
/// data in a database that several processes share.
///
/// **Tables.** Each entity is a table named after it: `_id bigserial` (the primary
/// key, and the permanent identifier's key), `_version bigint` (counts the row's
/// writes), a column per attribute (types in `PostgresValues`), a `bigint`
/// column per to-one relationship and a `bigint[]` column per to-many one (both sides
/// of a relationship are stored, as the engine stores them). Unique constraints are
/// unique indexes, `#Index`es indexes. Opening creates what is missing; it never
/// drops or alters a column.
///
/// Text columns use collation `"C"`, so text compares and sorts by code point, as the
/// engine does, and indexes serve it.
///
/// **Fetches** translate the compiled predicate to SQL (`PostgresPredicate`) with
/// sorts, limits and offsets; what SQL cannot state makes the store ask the context
/// to filter or sort (`DataStoreError.preferInMemoryFilter`, `.preferInMemorySort`).
/// A fetch's text that comes again runs as a prepared statement (`PostgresStore+Prepared`),
/// and its rows come back as snapshots in column order, which the context reads
/// without hashing property names.
///
/// **History** is kept in table `osd_history` (`PostgresStore+History`):
/// `ModelContext.fetchHistory` and `deleteHistory` work as over the built-in store,
/// and `ModelContainer.historyTransactions(after:)` follows every process's saves,
/// woken by `NOTIFY` (`PostgresStore+Notifications`).
///
/// **Saves** run in one transaction. Its inserts go a few hundred rows a statement
/// (`PostgresStore+Inserts`). An insert whose unique key (any of its unique
/// constraints) a stored row holds updates that row, as the engine does; keys held
/// by two stored rows throw `SwiftDataError.uniqueConstraintViolation`. An update
/// writes the properties the context changed, merging with other writers' changes
/// property by property, and a change to a row another writer deleted is dropped, as
/// the embedded store does. Under `ModelContext.ConflictPolicy.failOnConflict`, an
/// update or delete of a row whose stored values differ from those the context read
/// (`DataStoreSaveChangesRequest.readSnapshots`) throws `SaveConflictError` and the
/// transaction changes nothing. Saves run in parallel: each locks the rows it
/// updates or deletes (`SELECT … FOR UPDATE`), and one that meets a deadlock, or a
/// unique key another save inserted meanwhile, runs again (`transaction(_:)`).
///
/// **Connections** come from a pool of at most `PostgresStoreConfiguration.poolSize`
/// (`PostgresStore+Pool`): the container calls the store from every context and
/// `@ModelActor` at once (it is a `ConcurrentDataStore`), and each call, or each
/// save's transaction, leases a connection of its own. Calls block their thread
/// while they wait for the server, so they must not run on one of NIO's event loops.
///
/// **Read replicas** (`PostgresStoreConfiguration.readReplicas`, `PostgresStore+Replicas`)
/// serve fetches that a hot standby has replayed far enough for; after each commit
/// one statement notifies the change feeds and notes the WAL position they compare.
public final class PostgresStore: ConcurrentDataStore {
    public typealias Configuration = PostgresStoreConfiguration
    public typealias Snapshot = DefaultSnapshot

    public let configuration: PostgresStoreConfiguration
    public let schema: Schema
    /// The database's store identifier (a UUID kept in table `osd_store`), so every
    /// process over one database makes the same identifiers.
    public let identifier: String

    let pool: PostgresConnectionPool
    /// The listening connection that wakes change feeds (`PostgresStore+Notifications`).
    let changes: PostgresChangeListener
    /// The read replicas' connections and what they have replayed (`PostgresStore+Replicas`).
    let replicas: PostgresReplicas
    private var logger: Logger { configuration.logger }
    let compiler: StoreQueryCompiler
    /// By entity index, `snapshotNames(of:)` and `selectList(_:)`.
    private let snapshotNames: [[String]]
    private let selectLists: [String]
    /// By entity index, the table's quoted name.
    private let quotedNames: [String]
    /// Fetch conditions made of predicate templates, kept per template.
    private let conditions = PostgresConditions()
    /// Each entity's identifiers of row keys (one made a fetched row), by entity name.
    private let rowIdentifiers: [String: RowIdentifiers]
    /// History queries run through the compiler's container (`PostgresStore+History`).
    var historyQueries: StoreQueryCompiler { compiler }
    var entities: [EntityDescription] { compiler.schema.entities }

    /// A row of a table: ids are per table.
    struct RowName: Hashable {
        let table: String
        let id: Int64
    }

    public init(_ configuration: PostgresStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        guard let schema = configuration.schema else { throw PostgresStoreError.missingSchema }
        try configuration.validate()
        try Self.checkIdentifiers(of: schema)
        self.configuration = configuration
        self.schema = schema
        // The server it tried, so messages say which (never the password).
        let server = "\(configuration.username)@\(configuration.host):\(configuration.port)/\(configuration.database)"
        let tls = try Self.tls(for: configuration.tls, server: server)
        // Opening runs on a connection of its own, so a server that cannot be reached,
        // or whose TLS fails, is told at once with its reason, as the pool would not.
        let setup: PostgresConnection
        let settings = PostgresConnection.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.username,
            password: configuration.password, database: configuration.database,
            tls: tls.connection)
        do {
            setup = try PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.any(), configuration: settings, id: 0, logger: configuration.logger
            ).wait()
        } catch let error as PostgresStoreError {
            throw error
        } catch {
            if let failure = Self.tlsFailure(in: error) { throw PostgresStoreError.tls("\(server): \(failure)") }
            throw PostgresStoreError.connection("\(server): \(error)")
        }
        defer { try? setup.close().wait() }
        let storeID = try Self.storeIdentifier(on: setup, logger: configuration.logger)
        identifier = storeID.uuidString
        compiler = try StoreQueryCompiler(schema: schema, storeIdentifier: storeID)
        snapshotNames = compiler.schema.entities.map { $0.attributes.map(\.name) + $0.relationships.map(\.name) }
        selectLists = compiler.schema.entities.map(Self.makeSelectList)
        quotedNames = compiler.schema.entities.map { quoted($0.name) }
        rowIdentifiers = try Dictionary(uniqueKeysWithValues: compiler.schema.entities.map {
            ($0.name, try RowIdentifiers(storeIdentifier: storeID.uuidString, entityName: $0.name))
        })
        var client = PostgresClient.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.username,
            password: configuration.password, database: configuration.database, tls: tls.client)
        client.options.maximumConnections = configuration.poolSize
        pool = PostgresConnectionPool(client, logger: configuration.logger)
        changes = PostgresChangeListener(settings: settings, logger: configuration.logger, executor: pool.executor)
        replicas = PostgresReplicas(configuration, tls: tls.client)
        try Self.$lease.withValue(Lease(store: ObjectIdentifier(self), connection: setup)) { try createTables() }
        raiseReplicaFloor()
    }

    deinit {
        changes.stop()
        pool.shutdown()
        replicas.shutdown()
    }

    /// A TLS mode as postgres-nio takes it: for one connection (with its context
    /// made) and for the pool (which makes its own from the same settings).
    private struct TLSSettings {
        var connection: PostgresConnection.Configuration.TLS
        var client: PostgresClient.Configuration.TLS
    }

    /// postgres-nio's TLS setting for a mode. The CA file is read here, so a missing or
    /// unreadable one is a TLS error before any connection.
    private static func tls(for mode: PostgresStoreConfiguration.TLSMode, server: String) throws -> TLSSettings {
        var settings = TLSConfiguration.makeClientConfiguration()
        let caPath: String?
        switch mode {
        case .disable:
            return TLSSettings(connection: .disable, client: .disable)
        case .prefer, .require:
            settings.certificateVerification = .none
            caPath = nil
        case let .verifyCA(path):
            settings.certificateVerification = .noHostnameVerification
            caPath = path
        case let .verifyFull(path):
            settings.certificateVerification = .fullVerification
            caPath = path
        }
        do {
            if let caPath { settings.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caPath)) }
            let context = try NIOSSLContext(configuration: settings)
            return mode == .prefer
                ? TLSSettings(connection: .prefer(context), client: .prefer(settings))
                : TLSSettings(connection: .require(context), client: .require(settings))
        } catch {
            throw PostgresStoreError.tls("\(server): cannot use CA certificates \(caPath ?? "of the system"): \(error)")
        }
    }

    /// What went wrong with TLS, if that is what failed: postgres-nio wraps NIOSSL's
    /// errors (a certificate that did not verify) and says when the server offers no TLS.
    private static func tlsFailure(in error: any Error) -> String? {
        switch error {
        case let error as PSQLError:
            if error.code == .sslUnsupported { return "the server does not offer TLS (PostgreSQL's ssl = off)" }
            if error.code == .failedToAddSSLHandler { return "TLS could not start: \(error.underlying.map { String(describing: $0) } ?? "")" }
            return error.underlying.flatMap(Self.tlsFailure(in:))
        case is NIOSSLError, is NIOSSLExtraError, is BoringSSLError:
            return "the TLS handshake failed: \(error)"
        default:
            return nil
        }
    }

    /// Entities (tables), attributes and relationships (columns) are named as the
    /// models name them; PostgreSQL cuts identifiers past 63 bytes, silently, which
    /// would make two long names one table or column. Such a schema is refused when
    /// the container opens, naming the property. (Index names are generated, and
    /// shortened with a hash instead: `fittingIdentifier`.)
    private static func checkIdentifiers(of schema: Schema) throws {
        for entity in schema.entities {
            if entity.name.utf8.count > maximumIdentifierBytes { throw PostgresStoreError.identifierTooLong(entity.name) }
            let properties = entity.attributes.map(\.name) + entity.relationships.map(\.name)
            for name in properties.sorted() where name.utf8.count > maximumIdentifierBytes {
                throw PostgresStoreError.identifierTooLong("\(entity.name).\(name)")
            }
        }
    }

    // MARK: Statements

    /// The advisory lock that orders openings of one database ("OSD" and 1).
    static let schemaLockKey: Int64 = 0x4F53_4400_0001

    private static func storeIdentifier(on connection: PostgresConnection, logger: Logger) throws -> UUID {
        @discardableResult
        func run(_ sql: String) throws -> PostgresQueryResult {
            do {
                return try connection.query(PostgresQuery(unsafeSQL: sql), logger: logger).wait()
            } catch let error as PSQLError {
                throw PostgresStoreError.server(error.serverInfo?[.message] ?? String(describing: error.code))
            }
        }
        // Servers opening one database at once take turns, until their opening
        // connection closes (after `createTables`): PostgreSQL's `CREATE … IF NOT EXISTS`
        // is not safe against a concurrent create of the same name (the loser fails on
        // a catalog's unique index), so the second opener would fail on a new database.
        try run("SELECT pg_advisory_lock(\(schemaLockKey))")
        try run("CREATE TABLE IF NOT EXISTS osd_store (one int PRIMARY KEY CHECK (one = 1), identifier uuid NOT NULL)")
        try run("INSERT INTO osd_store (one, identifier) VALUES (1, '\(UUID().uuidString)') ON CONFLICT (one) DO NOTHING")
        guard let row = try run("SELECT identifier FROM osd_store WHERE one = 1").rows.first else {
            throw PostgresStoreError.server("osd_store holds no identifier")
        }
        return try row.makeRandomAccess()["identifier"].decode(UUID.self)
    }

    /// Creates the tables, columns and indexes the schema needs that are missing.
    private func createTables() throws {
        try setUpHistory()
        for entity in entities {
            let table = quoted(entity.name)
            try execute("CREATE TABLE IF NOT EXISTS \(table) (\"_id\" bigserial PRIMARY KEY, \"_version\" bigint NOT NULL DEFAULT 1)")
            for attribute in entity.attributes {
                try execute("ALTER TABLE \(table) ADD COLUMN IF NOT EXISTS \(quoted(attribute.name)) \(PostgresValues.columnType(attribute.type))")
            }
            for relationship in entity.relationships {
                try execute("ALTER TABLE \(table) ADD COLUMN IF NOT EXISTS \(quoted(relationship.name)) \(relationship.isToMany ? "bigint[]" : "bigint")")
            }
            // Indexes put nil first, as fetches sort, so a sorted, limited fetch reads the
            // index in order rather than sorting the table.
            for (i, slots) in entity.uniqueness.enumerated() {
                let columns = slots.map { quoted(entity.attributes[$0].name) + " NULLS FIRST" }.joined(separator: ", ")
                try execute("CREATE UNIQUE INDEX IF NOT EXISTS \(quoted(fittingIdentifier("\(entity.name)_unique_\(i)"))) ON \(table) (\(columns))")
            }
            for (i, slots) in entity.orderedIndexSlots.enumerated() where !entity.uniqueness.contains(slots) {
                let columns = slots.map { quoted(entity.attributes[$0].name) + " NULLS FIRST" }.joined(separator: ", ")
                try execute("CREATE INDEX IF NOT EXISTS \(quoted(fittingIdentifier("\(entity.name)_index_\(i)"))) ON \(table) (\(columns))")
            }
        }
    }

    // MARK: Rows and snapshots

    /// The columns a snapshot reads: `_id`, then the entity's in slot order (made once
    /// an entity: every fetch sends it). `_version` is not among them: no read wants it.
    func selectList(_ entity: EntityDescription) -> String {
        guard let index = compiler.schema.entityIndex(named: entity.name) else { return Self.makeSelectList(entity) }
        return selectLists[index]
    }

    private static func makeSelectList(_ entity: EntityDescription) -> String {
        (["\"_id\""] + entity.attributes.map { quoted($0.name) } + entity.relationships.map { quoted($0.name) })
            .joined(separator: ", ")
    }

    func persistentIdentifier(_ entity: String, _ id: Int64) throws -> PersistentIdentifier {
        guard let rows = rowIdentifiers[entity] else {
            return try PersistentIdentifier.identifier(for: identifier, entityName: entity, primaryKey: id)
        }
        return try rows.identifier(id)
    }

    /// The property names of `entity`'s snapshots in column order (attributes, then
    /// relationships), one array an entity: a fetch's snapshots share it, and the
    /// context reads them in that order without hashing a name.
    func snapshotNames(of entity: EntityDescription) throws -> [String] {
        snapshotNames[try entityIndex(entity)]
    }

    /// The snapshot of a row selected with `selectList` (columns after those are
    /// not read): its cells read in order. With `names` (`snapshotNames(of:)`), the
    /// snapshot holds its entries in that order, as a fetch's do; without, by name, as
    /// the save's own reads, which look entries up by name, want them. `identifiers`:
    /// `entity`'s (`rowIdentifiers`), looked up once a fetch rather than once a row.
    func snapshot(
        _ row: PostgresRow, of entity: EntityDescription, names: [String]? = nil, identifiers: RowIdentifiers? = nil
    ) throws -> DefaultSnapshot {
        var cells = row.makeIterator()
        func next() throws -> PostgresCell {
            guard let cell = cells.next() else { throw PostgresStoreError.server("a row of \(entity.name) lacks columns") }
            return cell
        }
        let id = try next().decode(Int64.self)
        var entries: [DefaultSnapshot.Entry] = []
        entries.reserveCapacity(entity.attributes.count + entity.relationships.count)
        for attribute in entity.attributes {
            entries.append(.value(try PostgresValues.value(next(), as: attribute.type)))
        }
        for relationship in entity.relationships {
            let cell = try next()
            if relationship.isToMany {
                let ids = try cell.decode([Int64]?.self) ?? []
                entries.append(.toMany(try ids.map { try persistentIdentifier(relationship.destination, $0) }))
            } else {
                entries.append(.toOne(try cell.decode(Int64?.self).map { try persistentIdentifier(relationship.destination, $0) }))
            }
        }
        let identifier = try identifiers?.identifier(id) ?? persistentIdentifier(entity.name, id)
        if let names {
            return DefaultSnapshot(persistentIdentifier: identifier, names: names, orderedEntries: entries)
        }
        return DefaultSnapshot(
            persistentIdentifier: identifier, entries: Dictionary(uniqueKeysWithValues: zip(try snapshotNames(of: entity), entries)))
    }

    // MARK: Fetching

    /// The SELECT's FROM, WHERE, ORDER BY and window for `descriptor`.
    private func statement<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, columns: (EntityDescription) -> String, window: Bool = true
    ) throws -> (sql: String, binds: PostgresBindings, kinds: String, entity: EntityDescription) {
        let index = try compiler.entityIndex(of: T.self)
        let entity = entities[index]
        var binds = PostgresBindings(), kinds = ""
        var sql = "SELECT \(columns(entity)) FROM \(quotedNames[index])"
        if let filter = descriptor.predicate {
            guard let (template, parameters, shape) = try compiler.compileTemplate(filter),
                  let condition = try conditions.condition(template, parameters: parameters, shape: shape, entity: entity, entityIndex: index)
            else {
                throw DataStoreError.preferInMemoryFilter
            }
            sql += " WHERE \(condition.sql)"
            (binds, kinds) = (condition.binds, condition.bindKinds)
        }
        if window {
            var order: [String] = []
            if !descriptor.sortBy.isEmpty {
                guard let keys = try compiler.sortKeys(descriptor.sortBy),
                      keys.allSatisfy({ PostgresValues.isScalar(entity.attributes[$0.slot].type) })
                else { throw DataStoreError.preferInMemorySort }
                for key in keys {
                    let attribute = entity.attributes[key.slot]
                    // nil sorts first, as the engine's order puts it (the indexes are built so).
                    order.append("\(quoted(attribute.name)) \(key.reverse ? "DESC NULLS LAST" : "ASC NULLS FIRST")")
                }
            }
            // Ties in insertion order, as the engine's stable sort leaves them.
            order.append("\"_id\"")
            sql += " ORDER BY " + order.joined(separator: ", ")
            if let limit = descriptor.fetchLimit, limit > 0 { sql += " LIMIT \(limit)" }
            if let offset = descriptor.fetchOffset, offset > 0 { sql += " OFFSET \(offset)" }
        }
        return (sql, binds, kinds, entity)
    }

    /// - Complexity: one statement; the server's plan (unique and ordered indexes
    ///   serve lookups, ranges and sorts).
    public func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchResult<T, DefaultSnapshot> {
        let (sql, binds, kinds, entity) = try statement(request.descriptor, columns: selectList)
        let names = try snapshotNames(of: entity), identifiers = rowIdentifiers[entity.name]
        let snapshots = try read(sql, binds, kinds: kinds, for: request.editingState) { [self] in
            try snapshot($0, of: entity, names: names, identifiers: identifiers)
        }
        return DataStoreFetchResult(descriptor: request.descriptor, fetchedSnapshots: snapshots)
    }

    public func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Int {
        let (sql, binds, kinds, _) = try statement(request.descriptor, columns: { _ in "count(*)" }, window: false)
        guard let total = try read(sql, binds, kinds: kinds, for: request.editingState, each: { row in
            Int(try row.makeRandomAccess()[0].decode(Int64.self))
        }).first else { return 0 }
        let range = (request.descriptor.fetchOffset ?? 0, request.descriptor.fetchLimit ?? 0)
        let afterOffset = Swift.max(0, total - Swift.max(0, range.0))
        return range.1 > 0 ? Swift.min(afterOffset, range.1) : afterOffset
    }

    public func fetchIdentifiers<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> [PersistentIdentifier] {
        let (sql, binds, kinds, entity) = try statement(request.descriptor, columns: { _ in "\"_id\"" })
        return try read(sql, binds, kinds: kinds, for: request.editingState) { [self] in
            try persistentIdentifier(entity.name, try $0.makeRandomAccess()[0].decode(Int64.self))
        }
    }

    // MARK: Saving

    /// Writes the request in one transaction (see the type's documentation).
    public func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        let result = try transaction { try write(request) }
        // Before the wake-up: a feed's reader that fetches what changed must find it.
        announceSave(by: request.editingState)
        // This store's feeds need not wait for the notification to come back.
        changes.wake()
        return result
    }

    func entity(of id: PersistentIdentifier) throws -> EntityDescription {
        guard let index = compiler.schema.entityIndex(named: id.entityName) else {
            throw SwiftDataError.unknownModelType
        }
        return entities[index]
    }

    /// The row key of a stored model's identifier.
    func rowKey(_ id: PersistentIdentifier) throws -> Int64 {
        guard id.storeIdentifier == identifier, let key = id.integerPrimaryKey else {
            throw PostgresStoreError.server("\(id) is not an identifier of this store")
        }
        return key
    }

    private func write(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        let strict = request.conflictPolicy == .failOnConflict
        // Conflicts are gathered, so the error names them all; the transaction rolls back.
        var conflicts = (changed: [PersistentIdentifier](), deleted: [PersistentIdentifier]())
        // Updated rows: the context's models take them as stored (other writers'
        // changes to other properties, merged lists), which is what they read now.
        var updatedRows: [(EntityDescription, Int64)] = []
        var changes: [StoredChange] = []
        // Inserts first: updates may name the new models (`PostgresStore+Inserts`).
        let inserts = try insert(request.inserted)
        let remapped = inserts.remapped, upserted = inserts.upserted
        changes += inserts.changes
        for snapshot in request.updated {
            let entity = try entity(of: snapshot.persistentIdentifier)
            let id = try rowKey(snapshot.persistentIdentifier)
            let writing = { (name: String) in request.changed(name, of: snapshot.persistentIdentifier) }
            let read = request.readSnapshots[snapshot.persistentIdentifier]
            let stored = try storedSnapshot(entity, id)
            if strict {
                switch check(entity, stored: stored, against: read) {
                case .asRead: break
                case .changedSince: conflicts.changed.append(snapshot.persistentIdentifier); continue
                case .gone: conflicts.deleted.append(snapshot.persistentIdentifier); continue
                }
            }
            // A row another writer deleted stays deleted: the delete wins.
            guard let stored else { continue }
            let new = snapshot.copy(persistentIdentifier: snapshot.persistentIdentifier, remappedIdentifiers: remapped)
            let effective = mergingLists(new, read: read, stored: stored, of: entity, writing: writing)
            updatedRows.append((entity, id))
            let slots = writtenSlots(effective, of: entity).filter {
                let name = entity.name(ofSlot: $0)
                return writing(name) && stored.entries[name] != effective.entries[name]
            }
            try update(entity, id: id, snapshot: effective, remapped: [:], attributes: true, skipEmpty: false, writing: writing)
            if !slots.isEmpty { changes.append(.updated(entity: try entityIndex(entity), id: RowID(id), slots: slots)) }
        }
        for snapshot in request.deleted {
            let entity = try entity(of: snapshot.persistentIdentifier)
            let id = try rowKey(snapshot.persistentIdentifier)
            let index = try entityIndex(entity)
            // Gone already is what was asked; changed since is a conflict.
            if strict, try check(entity, stored: storedSnapshot(entity, id), against: request.readSnapshots[snapshot.persistentIdentifier])
                == .changedSince {
                conflicts.changed.append(snapshot.persistentIdentifier)
                continue
            }
            if let preserved = try delete(entity, index: index, row: id) {
                changes.append(.deleted(entity: index, id: RowID(id), preserved: preserved))
            }
        }
        guard conflicts.changed.isEmpty, conflicts.deleted.isEmpty else {
            throw SaveConflictError(changed: conflicts.changed, deleted: conflicts.deleted)
        }
        // An upsert moved links of a stored row: the rows on the other side follow.
        let repaired = try repairInverses(ofUpserted: upserted.map { ($0.1, $0.2) }, changes: &changes)
        try recordHistory(changes, author: request.editingState.author)
        // Upserted rows merged values: the context's models take the stored ones, and
        // so do the rows whose inverses were repaired.
        var reregister: [PersistentIdentifier: DefaultSnapshot] = [:]
        for (entity, id) in repaired + updatedRows {
            var binds = PostgresBindings()
            binds.append(id)
            guard let row = try execute("SELECT \(selectList(entity)) FROM \(quoted(entity.name)) WHERE \"_id\" = $1", binds).rows.first else { continue }
            reregister[try persistentIdentifier(entity.name, id)] = try snapshot(row, of: entity)
        }
        for (temporary, entity, id) in upserted {
            var binds = PostgresBindings()
            binds.append(id)
            guard let row = try execute("SELECT \(selectList(entity)) FROM \(quoted(entity.name)) WHERE \"_id\" = $1", binds).rows.first else { continue }
            reregister[temporary] = try snapshot(row, of: entity)
        }
        return DataStoreSaveChangesResult(
            for: identifier, remappedIdentifiers: remapped, snapshotsToReregister: reregister,
            upsertedIdentifiers: Set(upserted.map(\.0)))
    }

    /// The longest string or data value an indexed attribute (unique constraints
    /// and `#Index`es) takes here: PostgreSQL's B-tree entries hold about 2,700
    /// bytes, and a longer value would fail inside the server.
    static let maximumIndexedBytes = 2_000

    /// Refuses, before anything is written, values (by slot) too long together for
    /// an index that holds them: the bytes of its text and binary columns, summed.
    func checkIndexable(_ values: [Int: Value], of entity: EntityDescription) throws {
        func length(_ value: Value?) -> Int {
            switch value {
            case let .string(string)?: string.utf8.count
            case let .data(data)?, let .codable(data)?: data.count
            case let .url(url)?: url.absoluteString.utf8.count
            default: 0
            }
        }
        for index in entity.orderedIndexSlots where index.contains(where: { values[$0] != nil }) {
            let total = index.reduce(0) { $0 + length(values[$1]) }
            guard total > Self.maximumIndexedBytes else { continue }
            let names = index.map { "\(entity.name).\(entity.name(ofSlot: $0))" }.joined(separator: ", ")
            throw PostgresStoreError.unsupportedValue(
                "\(total) bytes of \(names), which is indexed (at most \(Self.maximumIndexedBytes) bytes an index entry)")
        }
    }

    /// The stored row an insert of `snapshot` upserts onto: the one row holding one
    /// of its unique keys, locked until the save ends. Two rows holding two of its keys
    /// is a violation. (A row another save inserts meanwhile makes the insert fail on
    /// the unique index, and the save runs again: `transaction(_:)`.)
    func storedRow(sharingAUniqueKeyWith snapshot: DefaultSnapshot, of entity: EntityDescription) throws -> Int64? {
        var binds = PostgresBindings()
        var alternatives: [String] = []
        for constraint in entity.uniqueness {
            var terms: [String] = []
            for slot in constraint {
                let attribute = entity.attributes[slot]
                guard case let .value(value)? = snapshot.entries[attribute.name], !value.isNull else { break }
                try PostgresValues.append(value, to: &binds)
                terms.append("\(quoted(attribute.name)) = $\(binds.count)")
            }
            // A key with a nil part matches nothing (SQL's unique indexes agree).
            if terms.count == constraint.count { alternatives.append("(" + terms.joined(separator: " AND ") + ")") }
        }
        guard !alternatives.isEmpty else { return nil }
        let rows = try execute(
            "SELECT \"_id\", \(Self.writtenByANewerTransaction) FROM \(quoted(entity.name)) WHERE \(alternatives.joined(separator: " OR ")) "
                + "LIMIT 2 FOR UPDATE", binds).rows
        guard rows.count < 2 else {
            // (A new model with the keys of two stored ones can replace only one.)
            throw SwiftDataError.uniqueConstraintViolation
        }
        guard let row = rows.first?.makeRandomAccess() else { return nil }
        try checkHistoryOrder(row[1])
        return try row[0].decode(Int64.self)
    }

    func entityIndex(_ entity: EntityDescription) throws -> Int {
        guard let index = compiler.schema.entityIndex(named: entity.name) else { throw SwiftDataError.unknownModelType }
        return index
    }

    /// The slots a snapshot holds values for, ascending.
    func writtenSlots(_ snapshot: DefaultSnapshot, of entity: EntityDescription) -> [Int] {
        (0..<entity.slotCount).filter { snapshot.entries[entity.name(ofSlot: $0)] != nil }
    }

    /// Row `id` of `entity` as stored, or nil when there is none; locked until the
    /// save ends, so what the save decides on it (a merge, a conflict) still holds
    /// when it writes.
    private func storedSnapshot(_ entity: EntityDescription, _ id: Int64) throws -> DefaultSnapshot? {
        var binds = PostgresBindings()
        binds.append(id)
        let sql = "SELECT \(selectList(entity)), \(Self.writtenByANewerTransaction) FROM \(quoted(entity.name)) WHERE \"_id\" = $1 FOR UPDATE"
        guard let row = try execute(sql, binds).rows.first else { return nil }
        try checkHistoryOrder(row.makeRandomAccess()[1 + entity.slotCount])
        return try snapshot(row, of: entity)
    }

    /// `new` with each changed to-many list (those `writing` names) made what the
    /// context added to and removed from its reading (`read`), applied to the stored
    /// list, so another writer's changes to the list since stay, as the engine merges
    /// them.
    private func mergingLists(
        _ new: DefaultSnapshot, read: DefaultSnapshot?, stored: DefaultSnapshot, of entity: EntityDescription,
        writing: (String) -> Bool
    ) -> DefaultSnapshot {
        guard let read else { return new }
        var effective = new
        for relationship in entity.relationships where relationship.isToMany && writing(relationship.name) {
            guard case let .toMany(old)? = read.entries[relationship.name], case let .toMany(mine)? = new.entries[relationship.name],
                  case let .toMany(now)? = stored.entries[relationship.name] else { continue }
            let list = mergedList(read: old, mine: mine, stored: now)
            if list != mine { effective.entries[relationship.name] = .toMany(list) }
        }
        return effective
    }

    /// How a stored row compares with the context's reading of it.
    private enum ReadCheck {
        case asRead
        /// Another writer saved it since: some property holds another value.
        case changedSince
        /// No such row (another writer deleted it).
        case gone
    }

    /// `failOnConflict`: whether a row as `stored` (nil: gone) still holds what the
    /// context read (`read`; a row the request has no reading of is taken as read). To-many relationships
    /// compare as sets: their order is not the model's.
    /// (The row is locked, `storedSnapshot`, so nothing changes it between this check
    /// and the write.)
    private func check(_ entity: EntityDescription, stored: DefaultSnapshot?, against read: DefaultSnapshot?) -> ReadCheck {
        guard let now = stored else { return .gone }
        guard let read else { return .asRead }
        for attribute in entity.attributes {
            guard let expected = read.entries[attribute.name] else { continue }
            switch (now.entries[attribute.name], expected) {
            case let (.value(a)?, .value(b)): if !a.matches(b) { return .changedSince }
            case let (a, b): if a != b { return .changedSince }
            }
        }
        for relationship in entity.relationships {
            switch (read.entries[relationship.name], now.entries[relationship.name]) {
            case (nil, _): continue
            case let (.toMany(old)?, .toMany(new)?): if Set(old) != Set(new) { return .changedSince }
            case let (old?, new): if old != new { return .changedSince }
            }
        }
        return .asRead
    }

    /// Deletes row `row`; returns its `.preserveValueOnDeletion` values, for its
    /// deletion's tombstone, or nil when there was no such row.
    private func delete(_ entity: EntityDescription, index: Int, row: Int64) throws -> [Int: Value]? {
        let slots = compiler.preservedSlots[index]
        var binds = PostgresBindings()
        binds.append(row)
        let columns = (slots.map { quoted(entity.attributes[$0].name) } + [Self.writtenByANewerTransaction]).joined(separator: ", ")
        let sql = "DELETE FROM \(quoted(entity.name)) WHERE \"_id\" = $1 RETURNING \(columns)"
        guard let deleted = try execute(sql, binds).rows.first else { return nil }
        let cells = deleted.makeRandomAccess()
        try checkHistoryOrder(cells[slots.count])
        var values: [Int: Value] = [:]
        for (k, slot) in slots.enumerated() {
            let value = try PostgresValues.value(cells[k], as: entity.attributes[slot].type)
            if !value.isNull { values[slot] = value }
        }
        return values
    }

    /// Writes a snapshot's attributes (when `attributes`) and relationships, those
    /// `writing` names, to row `id` (if there is one).
    func update(
        _ entity: EntityDescription, id: Int64, snapshot: DefaultSnapshot, remapped: [PersistentIdentifier: PersistentIdentifier],
        attributes: Bool, skipEmpty: Bool, writing: (String) -> Bool
    ) throws {
        var binds = PostgresBindings()
        var assignments: [String] = []
        func assign(_ column: String, _ value: Value) throws {
            try PostgresValues.append(value, to: &binds)
            assignments.append("\(quoted(column)) = $\(assignments.count + 1)")
        }
        if attributes {
            var written: [Int: Value] = [:]
            for (slot, attribute) in entity.attributes.enumerated() where writing(attribute.name) {
                guard case let .value(value)? = snapshot.entries[attribute.name] else { continue }
                written[slot] = value
                try assign(attribute.name, value)
            }
            try checkIndexable(written, of: entity)
        }
        for relationship in entity.relationships where writing(relationship.name) {
            let entry = snapshot.entries[relationship.name]
            if skipEmpty, entry == .toOne(nil) || entry == .toMany([]) { continue }
            guard let value = try relationshipValue(relationship, entry, remapped: remapped) else { continue }
            try assign(relationship.name, value)
        }
        guard !assignments.isEmpty else { return }
        binds.append(id)
        let sql = "UPDATE \(quoted(entity.name)) SET \(assignments.joined(separator: ", ")), \"_version\" = \"_version\" + 1 WHERE \"_id\" = $\(assignments.count + 1)"
        try execute(sql, binds)
    }

    /// The column value of a relationship's snapshot entry, its models named by row
    /// key (new ones by `remapped`), or nil when the snapshot has no entry for it.
    func relationshipValue(
        _ relationship: RelationshipDescription, _ entry: DefaultSnapshot.Entry?, remapped: [PersistentIdentifier: PersistentIdentifier]
    ) throws -> Value? {
        let ids: [PersistentIdentifier]
        switch entry {
        case let .toOne(id)?: ids = id.map { [$0] } ?? []
        case let .toMany(list)?: ids = list
        default: return nil
        }
        // A to-many never lists a row twice: an upserted model and the one it
        // replaced are one row (the engine dedupes the same way).
        var seen = Set<Int64>()
        let keys = try ids.map { try rowKey(remapped[$0] ?? $0) }.filter { seen.insert($0).inserted }
        return relationship.isToMany ? .references(keys.map(RowID.init)) : keys.first.map { .reference(RowID($0)) } ?? .null
    }

    // MARK: Contexts and erasing

    /// (The store keeps nothing per context but, with read replicas, its last save's
    /// position in the WAL: a `failOnConflict` save brings what its context read.)
    public func initializeState(for editingState: EditingState) {}

    public func invalidateState(for editingState: EditingState) {
        replicas.forget(editingState.id)
    }

    /// Removes every model (the tables stay, emptied; identifiers are not reused).
    public func erase() throws {
        guard !entities.isEmpty else { return }
        try execute("TRUNCATE " + entities.map { quoted($0.name) }.joined(separator: ", "))
        raiseReplicaFloor()
    }
}
