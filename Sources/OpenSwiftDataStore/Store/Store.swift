import Foundation

/// The in-memory store: the published version readers see, and the one serial
/// path every commit takes.
///
/// Readers call `current` and get a consistent version at once: a commit in
/// progress neither blocks them nor shows them half of itself, because a commit
/// builds its new version aside and publishes it with one pointer swap.
public final class Store: Sendable {
    public let schema: StoreSchema
    /// Where every commit is recorded before it is published: a document, or a
    /// group of them; nil for a store in memory only.
    public let persistence: (any StorePersistence)?
    /// The store's document, when it has one (and not a group).
    public var document: Document? { persistence as? Document }
    private let published: Locked<StoreVersion>
    /// Serializes commits; readers never take it.
    private let commitPath = NSLock()
    /// The version commits build on, and the last commit of this store whose record
    /// may not be durable yet (group commit): `head` runs ahead of `published` while
    /// it waits. The head changes only with `commitPath` held too.
    private let tip: Locked<Tip>

    struct Tip {
        var head: StoreVersion
        var waiting: Document.PendingSync?
    }
    /// Per entity, the slots a deletion's tombstone keeps in history
    /// (`.preserveValueOnDeletion`): the application's to say, not the document's.
    private let tombstoneSlots = Locked<[[Int]]>([])
    /// Wakes the tasks waiting for a commit (`waitForCommit(after:)`).
    private let commitSignal = CommitSignal()
    /// Whether other writers share the store's document (`catchUp`).
    private let followsOtherWriters: Bool

    public init(schema: StoreSchema) {
        self.schema = schema
        self.persistence = nil
        self.followsOtherWriters = false
        self.published = Locked(StoreVersion(schema: schema))
        self.tip = Locked(Tip(head: StoreVersion(schema: schema)))
    }

    /// A store in memory starting from `version` (read from a document by a
    /// caller that saves it on its own terms).
    public init(schema: StoreSchema, version: StoreVersion) {
        self.schema = schema
        self.persistence = nil
        self.followsOtherWriters = false
        var version = version
        version.history.ownTail()
        self.published = Locked(version)
        self.tip = Locked(Tip(head: version))
    }

    /// A store over an opened document (or group), starting from the version read from it.
    public init(document: any StorePersistence, version: StoreVersion) {
        self.schema = version.schema
        self.persistence = document
        self.followsOtherWriters = document.followsOtherWriters
        var version = version
        version.history.ownTail()
        self.published = Locked(version)
        self.tip = Locked(Tip(head: version))
    }

    /// The latest published version.
    /// - Complexity: O(1)
    public var current: StoreVersion {
        published.withLock { $0 }
    }

    /// Entity `entity`'s table in the latest published version, and that version's
    /// generation: what faults over it need, without a copy of the whole version
    /// (about 600 instructions of retains and releases per relationship resolved).
    /// - Complexity: O(1)
    public func currentTable(of entity: Int) -> (table: Table, generation: UInt64) {
        published.withLock { ($0.tables[entity], $0.generation) }
    }

    /// Sets, per entity, the attribute slots whose values a deletion keeps in
    /// history (`.preserveValueOnDeletion`).
    public func preserveOnDeletion(_ slots: [[Int]]) {
        tombstoneSlots.withLock { $0 = slots }
    }

    /// Applies `changes` atomically and publishes the result as a new version.
    ///
    /// Order: deletes, then inserts held in columns (`ChangeSet.ColumnInsert`, stored in
    /// bulk or as rows ahead of the others), then inserts (an insert whose unique key
    /// exists updates that row instead: an upsert), then updates (a unique key clash throws), then every
    /// reference to a temporary row is rewritten to its permanent identifier.
    /// With a document, the commit is appended to its journal and made durable as its
    /// durability says before it is published. With `.full`, the commit path is left
    /// before the fsync: the next commit appends while this one waits, and one fsync
    /// acknowledges both (group commit, `Document+GroupCommit.swift`). When it
    /// throws, nothing is published.
    /// - Complexity: O(changes), plus O(rows / chunk size) to copy chunk tables.
    public func commit(_ changes: ChangeSet) throws(StoreError) -> CommitResult {
        commitPath.lock()
        var onPath = true
        defer { if onPath { commitPath.unlock() } }
        try beginTurn()
        var inTurn = true
        defer { if inTurn { persistence?.endTurn() } }
        let old = head
        var version = old
        // The journal's rows are gathered as the commit writes them (`JournalRows`).
        var journal = persistence == nil ? nil : JournalRows(capacity: changes.inserts.count + changes.updates.count)
        var result = try Self.apply(changes, to: &version, journal: &journal)
        let timestamp = Date()
        let transaction = StoredTransaction.recording(
            from: old, to: version, inserted: result.inserted, written: result.written, deleted: result.deleted,
            author: changes.author, preserved: tombstoneSlots.withLock { $0 }, timestamp: timestamp)
        if let transaction { version.history.append(transaction) }
        let pending = try record(version, inTurn: &inTurn, record: CommitRecord(
            from: old, to: version, gathered: journal ?? JournalRows(capacity: 0), deleted: result.deleted,
            author: changes.author, timestamp: timestamp, transaction: transaction))
        result.version = version
        if let pending {
            commitPath.unlock()
            onPath = false
            try publishWhenDurable(version, pending)
        }
        return result
    }

    /// Journals `record` (when there is a document) and makes `version` the head;
    /// publishes it unless its record waits for an fsync, whose pending sync it
    /// returns for the caller to wait on outside the commit path
    /// (`publishWhenDurable`). The caller holds the commit path, and the turn
    /// (`inTurn`), which this ends.
    private func record(
        _ version: StoreVersion, inTurn: inout Bool, record: @autoclosure () -> CommitRecord
    ) throws(StoreError) -> Document.PendingSync? {
        var pending: Document.PendingSync?
        if let persistence {
            do {
                pending = try persistence.append(record(), schema: schema)
            } catch {
                throw .document(error)
            }
            // A failed compaction leaves the journal as it was, and the document waits
            // for more growth before trying again. (It begins in the turn: it collects
            // blobs.)
            persistence.compactIfWanted(version)
            persistence.endTurn()
            inTurn = false
        }
        advance(to: version, waiting: pending)
        return pending
    }

    /// Makes `version` the head, and publishes it when nothing of this store's waits
    /// to be durable (`waiting` is the pending sync of its own record, if any). The
    /// caller holds the commit path.
    private func advance(to version: StoreVersion, waiting pending: Document.PendingSync?) {
        let publish = tip.withLock { tip -> Bool in
            tip.head = version
            if let pending { tip.waiting = pending }
            if let waiting = tip.waiting {
                guard persistence?.isDurable(waiting) ?? true else { return false }
                tip.waiting = nil
            }
            published.withLock { $0 = version }
            return true
        }
        if publish { commitSignal.signal() }
    }

    /// Waits until the record of `version` is durable, then publishes it, or the head
    /// when every record of this store up to the head is durable too (the head may
    /// hold other writers' saves taken meanwhile). A later version never gives way
    /// to an earlier one. When the fsync fails, the head goes back to what was
    /// published: saves have stopped, and nothing that failed is ever published.
    private func publishWhenDurable(_ version: StoreVersion, _ pending: Document.PendingSync) throws(StoreError) {
        guard let persistence else { return }
        do {
            try persistence.waitUntilDurable(pending)
        } catch {
            commitPath.withLock {
                tip.withLock { tip in
                    tip.head = current
                    tip.waiting = nil
                }
            }
            throw .document(error)
        }
        tip.withLock { tip in
            var newest = version
            if let waiting = tip.waiting, persistence.isDurable(waiting) {
                tip.waiting = nil
            }
            // The head, when nothing of it waits and it is newer (after a failed sync
            // it went back to what was published, behind this durable version).
            if tip.waiting == nil, tip.head.generation > newest.generation { newest = tip.head }
            published.withLock { if newest.generation > $0.generation { $0 = newest } }
        }
        commitSignal.signal()
    }

    /// The published and head generations and what the head waits for, with the
    /// document's own view (`Document._followState`): the probes' view when a
    /// follower seems stuck. Not for applications.
    public var _followState: String {
        let (headGeneration, waiting) = tip.withLock { tip in
            (tip.head.generation, tip.waiting.map { persistence?.isDurable($0) == true ? "durable" : "not durable" } ?? "none")
        }
        return "published \(current.generation), head \(headGeneration), waiting \(waiting); "
            + ((persistence as? Document)?._followState ?? "")
    }

    /// The version commits build on: the last one committed, which may wait for its
    /// fsync still. The caller holds the commit path.
    private var head: StoreVersion {
        tip.withLock { $0.head }
    }

    /// Deletes the history transactions of `generations` (those still present),
    /// as a commit of its own that changes no row: the journal records it, so the
    /// deletion survives a reopen. Tokens before the latest deleted generation
    /// expire. Returns the generations deleted.
    /// - Complexity: O(history)
    @discardableResult
    public func deleteHistory(_ generations: Set<UInt64>) throws(StoreError) -> [UInt64] {
        commitPath.lock()
        var onPath = true
        defer { if onPath { commitPath.unlock() } }
        guard !generations.isEmpty else { return [] }
        try beginTurn()
        var inTurn = true
        defer { if inTurn { persistence?.endTurn() } }
        let old = head
        var version = old
        let removed = version.history.remove(generations: generations)
        guard !removed.isEmpty else { return [] }
        version.generation += 1
        let pruning = (horizon: version.history.horizon, generations: removed)
        let pending = try record(version, inTurn: &inTurn, record: CommitRecord(
            generation: version.generation, timestamp: Date(), author: nil, nextRawIDs: [], puts: [], deletes: [],
            pruning: pruning))
        if let pending {
            commitPath.unlock()
            onPath = false
            try publishWhenDurable(version, pending)
        }
        return removed
    }

    // MARK: Other writers

    /// Brings the published version up to what other writers of the document saved
    /// (a shared document, `Document+Sharing.swift`): what a fetch asks first. One
    /// `fstat` when nothing changed; otherwise it waits for a commit of this store
    /// in progress, then replays their frames (or takes the file they replaced it
    /// with) and publishes the result.
    public func catchUp() {
        guard followsOtherWriters, let persistence, persistence.hasOtherSaves else { return }
        commitPath.lock()
        defer { commitPath.unlock() }
        if let saves = persistence.takeOtherSaves() { publishOtherSaves(saves) }
    }

    /// Takes the writer's turn on a shared document, and publishes what other
    /// writers saved before it. The caller holds the commit path and ends the turn.
    private func beginTurn() throws(StoreError) {
        guard let persistence else { return }
        do {
            try persistence.beginTurn()
        } catch {
            throw .document(error)
        }
        if followsOtherWriters, let saves = persistence.takeOtherSaves() { publishOtherSaves(saves) }
    }

    /// Publishes the version other writers' saves lead to. The caller holds the commit path.
    /// While a save of this store waits for its fsync, the head takes them and the
    /// save publishes them with its own (`publishWhenDurable`).
    private func publishOtherSaves(_ saves: OtherSaves) {
        var version: StoreVersion
        switch saves {
        case let .saves(records):
            version = head
            for record in records { version.replay(record) }
        case let .replaced(replacement):
            version = replacement
            version.history.ownTail()
        }
        advance(to: version, waiting: nil)
    }

    /// Suspends until a version after generation `generation` is published, or the
    /// task is cancelled.
    ///
    /// Other writers of a shared document signal nothing in this process: while it
    /// waits, the store looks at the file every `followInterval` (`catchUp`).
    public func waitForCommit(after generation: UInt64) async {
        guard followsOtherWriters else {
            await commitSignal.wait(until: { [self] in current.generation > generation })
            return
        }
        while !Task.isCancelled {
            catchUp()
            if current.generation > generation { return }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.commitSignal.wait(until: { [self] in current.generation > generation }) }
                group.addTask { try? await Task.sleep(nanoseconds: Self.followInterval) }
                await group.next()
                group.cancelAll()
            }
        }
    }

    /// How often a task waiting for a commit (`waitForCommit`) looks for other
    /// writers' saves: 20 ms, in nanoseconds.
    static let followInterval: UInt64 = 20_000_000

    /// Removes every row of every entity, as one commit; a document is rewritten
    /// empty. Row identifiers are not reused afterwards. History goes too: every
    /// token given out before expires.
    /// Returns the version it emptied.
    @discardableResult
    public func removeAll() throws(StoreError) -> StoreVersion {
        commitPath.lock()
        defer { commitPath.unlock() }
        persistence?.settle()
        try beginTurn()
        defer { persistence?.endTurn() }
        let old = head
        let version = emptied(old)
        do {
            try persistence?.empty(to: version, from: old)
        } catch {
            throw .document(error)
        }
        advance(to: version, waiting: nil)
        return old
    }

    /// Deletes the document and its blobs, and empties the store. The document is
    /// closed: later commits throw. Returns the version it emptied.
    @discardableResult
    public func erase() throws(StoreError) -> StoreVersion {
        commitPath.lock()
        defer { commitPath.unlock() }
        persistence?.settle()
        try beginTurn()
        defer { persistence?.endTurn() }
        let old = head
        let version = emptied(old)
        do {
            try persistence?.erase()
        } catch {
            throw .document(error)
        }
        advance(to: version, waiting: nil)
        return old
    }

    /// The version after removing every row of `old`: the next generation, with
    /// no row identifier handed out again.
    private func emptied(_ old: StoreVersion) -> StoreVersion {
        var version = StoreVersion(schema: schema)
        version.generation = old.generation + 1
        for e in version.tables.indices { version.tables[e].reserveIdentifiers(below: old.tables[e].nextRawID) }
        version.history.horizon = old.generation
        return version
    }

    /// Writes a fresh snapshot of the current version over the document's journal.
    public func compact() throws(StoreError) {
        commitPath.lock()
        defer { commitPath.unlock() }
        persistence?.settle()
        try beginTurn()
        defer { persistence?.endTurn() }
        do {
            try persistence?.compact(head)
        } catch {
            throw .document(error)
        }
    }

    /// Per entity, the bulk insert of `changes`' rows of it into `version`, where one
    /// applies (`StoreVersion.bulkInsert`); nil for the others. `census` counts the
    /// row inserts: the rows of every entity that takes one are gathered in one walk.
    /// - Complexity: O(inserts), plus the planning of each bulk insert
    private static func bulkInserts(
        of changes: ChangeSet, counted census: ChangeCensus, into version: StoreVersion
    ) -> [StoreVersion.BulkInsert?] {
        var plans = [StoreVersion.BulkInsert?](repeating: nil, count: version.schema.entities.count)
        guard changes.inserts.count >= StoreVersion.bulkInsertMinimum else { return plans }
        let bulky = census.rowInserts.map { $0 >= StoreVersion.bulkInsertMinimum }
        guard bulky.contains(true) else { return plans }
        var rows = census.rowInserts.indices.map { e -> [Row] in
            var rows: [Row] = []
            if bulky[e] { rows.reserveCapacity(census.rowInserts[e]) }
            return rows
        }
        for insert in changes.inserts where bulky[insert.entity] { rows[insert.entity].append(insert.row) }
        for e in rows.indices where bulky[e] {
            var taken: [Row] = []
            swap(&taken, &rows[e])
            plans[e] = version.bulkInsert(of: .init(storage: .rows(taken)), into: e)
        }
        return plans
    }

    /// Applies `changes` to `version`; with `journal`, gathers the rows written for
    /// the commit's journal record as it writes them.
    private static func apply(
        _ changes: ChangeSet, to version: inout StoreVersion, journal: inout JournalRows?
    ) throws(StoreError) -> CommitResult {
        let schema = version.schema
        // (One pass counts the change set by entity and checks its entity numbers.)
        var census = try ChangeCensus(changes, schema: schema)
        for insert in changes.columnInserts where ColumnKind.kinds(of: schema.entities[insert.entity]) != insert.table.kinds {
            throw .unknownEntity("#\(insert.entity) (its inserted columns are not the entity's)")
        }
        try checkIdentifierLimit(of: census, in: version)
        try checkExpectations(of: changes, in: version)
        version.prepareSpatialIndexes(for: changes, counted: census)
        var deleted: [EntityRow] = []
        var keyed: [[Int]?] = Array(repeating: nil, count: changes.deletes.isEmpty ? 0 : schema.entities.count)
        for delete in changes.deletes {
            let slots = keyed[delete.entity] ?? version.indexedSlots(of: delete.entity)
            keyed[delete.entity] = slots
            if version.remove(delete.id, of: delete.entity, keyed: slots) {
                deleted.append(EntityRow(entity: delete.entity, id: delete.id))
            }
        }

        // (Runs of rows: a bulk insert's are a handful, however many rows it holds.)
        var assigned = AssignedRows()
        var upserted: Set<EntityRow> = []
        var replacedRows: [EntityRow: Row] = [:]
        var inserted = EntityRows()
        var updated: [EntityRow] = []
        var written = EntityRows()
        // The written rows that refer to rows inserted by this commit (temporary ids),
        // resolved once every insert has its row: most inserts refer to none, and
        // reading every written row back to find out cost a row copy each. With each,
        // where the journal holds it when it is a new row.
        var unresolved: [(key: EntityRow, put: Int?)] = []
        // Inserts held in columns: stored in bulk, their segments taken whole, where a
        // bulk insert applies and no row insert of their entity comes with them; else
        // inserted as rows, before the others.
        var changes = changes
        if !changes.columnInserts.isEmpty {
            var asRows: [ChangeSet.Insert] = []
            var taken = Set<Int>()
            for insert in changes.columnInserts {
                let rows = StoreVersion.BulkRows(storage: .table(insert.table))
                if taken.insert(insert.entity).inserted, !changes.inserts.contains(where: { $0.entity == insert.entity }),
                   let plan = version.bulkInsert(of: rows, into: insert.entity) {
                    version.storeRows(of: plan, into: insert.entity)
                    var temporaries = insert.temporaryRows.makeIterator()
                    insert.table.forEachID { id in
                        let row = EntityRow(entity: insert.entity, id: RowID(plan.firstID + id.rawValue - 1))
                        assigned.append(temporaries.next()!, row.id)
                        inserted.append(row)
                        written.append(row)
                        journal?.wroteNew(row)
                    }
                    version.finishBulkInsert(into: insert.entity, plan: consume plan)
                } else {
                    census.insertAsRows(insert.table.count, of: insert.entity)
                    var temporaries = insert.temporaryRows.makeIterator()
                    insert.table.forEach { _, row in
                        asRows.append(.init(entity: insert.entity, temporaryID: temporaries.next()!.id, row: row))
                    }
                }
            }
            changes.inserts = asRows + changes.inserts
            changes.columnInserts = []
        }
        var bulk = bulkInserts(of: changes, counted: census, into: version)
        // A bulk insert's rows are stored first, all at once; each insert then takes the
        // next of their identifiers, in order.
        var nextBulkID = [Int64](repeating: 0, count: bulk.count)
        for (e, plan) in bulk.enumerated() {
            guard let plan else { continue }
            version.storeRows(of: plan, into: e)
            nextBulkID[e] = plan.firstID
        }
        for insert in changes.inserts {
            let temporary = EntityRow(entity: insert.entity, id: insert.temporaryID)
            let id: RowID
            // Whether `insert.row` is what the commit stored, as a new row.
            var isNew = true
            var needsResolving = false
            if bulk[insert.entity] != nil {
                // Checked up front: no unique key clashes, so no upsert.
                id = RowID(nextBulkID[insert.entity])
                nextBulkID[insert.entity] += 1
                inserted.append(EntityRow(entity: insert.entity, id: id))
                needsResolving = hasTemporaryReferences(insert.row, of: schema.entities[insert.entity])
            } else if let clash = version.conflict(for: insert.row, entity: insert.entity, excluding: nil) {
                // Upsert: the new model takes over the row that holds its key.
                id = clash.row
                if let other = version.conflict(for: insert.row, entity: insert.entity, excluding: id) {
                    throw violation(schema.entities[insert.entity], other.constraint, other.key)
                }
                // In a class hierarchy's entity, a key held by a row of another class is a
                // violation, not an upsert: the row cannot change class under other models.
                if let d = schema.entities[insert.entity].attributes.firstIndex(where: { $0.name == EntityDescription.discriminatorName }),
                   version.row(id, of: insert.entity)?[d] != insert.row[d] {
                    throw violation(schema.entities[insert.entity], clash.constraint, clash.key)
                }
                if changes.keepsReplacedRows, let old = version.row(id, of: insert.entity) { replacedRows[temporary] = old }
                let merged = mergeUpsert(insert.row, onto: id, of: insert.entity, in: &version, written: &written, journal: &journal)
                version.write(merged, at: id, of: insert.entity)
                isNew = false
                needsResolving = hasTemporaryReferences(merged, of: schema.entities[insert.entity])
                upserted.insert(temporary)
                updated.append(EntityRow(entity: insert.entity, id: id))
            } else {
                id = version.insert(insert.row, of: insert.entity)
                inserted.append(EntityRow(entity: insert.entity, id: id))
                needsResolving = hasTemporaryReferences(insert.row, of: schema.entities[insert.entity])
            }
            assigned.append(temporary, id)
            let key = EntityRow(entity: insert.entity, id: id)
            written.append(key)
            var put: Int?
            if isNew {
                put = journal?.wroteNew(key, as: insert.row)
            } else {
                journal?.rewrote(key)
            }
            if needsResolving { unresolved.append((key, put)) }
        }
        for e in bulk.indices {
            // (Moved out, so the entries it holds go as each index takes them.)
            guard let plan = bulk[e] else { continue }
            bulk[e] = nil
            version.finishBulkInsert(into: e, plan: consume plan)
        }
        assigned.seal()

        for update in changes.updates {
            let id = update.id.isTemporary ? assigned[EntityRow(entity: update.entity, id: update.id)] ?? update.id : update.id
            // A row another context deleted meanwhile stays deleted: the delete wins.
            guard var row = version.row(id, of: update.entity) else { continue }
            for (slot, value) in update.values { row[slot] = value }
            for (slot, change) in update.listChanges { row[slot] = change.applied(to: row[slot]) }
            if let clash = version.conflict(for: row, entity: update.entity, excluding: id) {
                throw violation(schema.entities[update.entity], clash.constraint, clash.key)
            }
            version.write(row, at: id, of: update.entity)
            let key = EntityRow(entity: update.entity, id: id)
            updated.append(key)
            written.append(key)
            journal?.rewrote(key)
            if hasTemporaryReferences(row, of: schema.entities[update.entity]) { unresolved.append((key, nil)) }
        }

        if !assigned.isEmpty {
            for (key, put) in unresolved {
                guard let row = version.row(key.id, of: key.entity) else { continue }
                let resolved = resolve(row, of: schema.entities[key.entity], schema: schema, assigned: assigned)
                if resolved != row { version.tables[key.entity].update(key.id, to: resolved) }
                if let put { journal?.resolved(at: put, to: resolved) }
            }
        }

        version.generation += 1
        var result = CommitResult(
            generation: version.generation, assigned: assigned, upserted: upserted,
            inserted: inserted, updated: updated, deleted: deleted, written: written)
        result.replacedRows = replacedRows
        return result
    }

    /// Optimistic concurrency: every row the saver expects as it read it is still so,
    /// or the commit throws before anything changes, naming each row that moved.
    /// - Complexity: O(expected rows × slots)
    private static func checkExpectations(of changes: ChangeSet, in version: StoreVersion) throws(StoreError) {
        guard !changes.expectations.isEmpty else { return }
        var changed: [EntityRow] = [], deleted: [EntityRow] = []
        for expected in changes.expectations {
            let key = EntityRow(entity: expected.entity, id: expected.id)
            guard let row = version.row(expected.id, of: expected.entity) else {
                if expected.goneIsConflict { deleted.append(key) }
                continue
            }
            if row.count != expected.row.count || !zip(row, expected.row).allSatisfy({ $0.matches($1) }) { changed.append(key) }
        }
        guard changed.isEmpty, deleted.isEmpty else { throw .conflict(changed: changed, deleted: deleted) }
    }

    /// Identifiers are never reused, and the document format (its reader) and the
    /// indexes hold 2^32 per entity: a commit whose inserts could pass that throws
    /// before anything changes, rather than trap or leave a document that never
    /// opens again. (Counted before upserts are known, so at the very limit an
    /// insert that would have upserted is refused too.)
    /// - Complexity: O(entities)
    private static func checkIdentifierLimit(of census: ChangeCensus, in version: StoreVersion) throws(StoreError) {
        for e in census.rowInserts.indices {
            let count = Int64(census.inserts(of: e))
            guard count > 0 else { continue }
            guard version.tables[e].nextRawID - 1 + count <= DocumentFormat.maximumRowID else {
                throw .limitExceeded(
                    "the row identifiers of \(version.schema.entities[e].name) are used up (\(DocumentFormat.maximumRowID) over the document's life; \(count) more asked for)")
            }
        }
    }

    /// The row an upsert writes: the inserted attribute values; for relationships,
    /// the inserted ones where set, else the stored ones. Rows that a replaced
    /// relationship no longer reaches drop their inverse reference to the row.
    private static func mergeUpsert(
        _ row: Row, onto id: RowID, of entity: Int, in version: inout StoreVersion, written: inout EntityRows,
        journal: inout JournalRows?
    ) -> Row {
        guard let old = version.row(id, of: entity) else { return row }
        let description = version.schema.entities[entity]
        var merged = row
        for (j, relationship) in description.relationships.enumerated() {
            let slot = description.slot(ofRelationship: j)
            let new = merged[slot].referencedRows
            if new.isEmpty {
                merged[slot] = old[slot]
                continue
            }
            guard let inverse = relationship.inverse,
                  let destination = version.schema.entityIndex(named: relationship.destination),
                  let inverseSlot = version.schema.entities[destination].slot(named: inverse)
            else { continue }
            for target in old[slot].referencedRows where !new.contains(target) {
                guard var other = version.row(target, of: destination) else { continue }
                switch other[inverseSlot] {
                case .reference(id): other[inverseSlot] = .null
                case let .references(ids): other[inverseSlot] = .references(ids.filter { $0 != id })
                default: continue
                }
                version.write(other, at: target, of: destination)
                written.append(EntityRow(entity: destination, id: target))
                journal?.rewrote(EntityRow(entity: destination, id: target))
            }
        }
        return merged
    }

    /// Whether a relationship slot of `row` names a row by temporary id.
    @inline(__always)
    private static func hasTemporaryReferences(_ row: Row, of entity: EntityDescription) -> Bool {
        for j in entity.relationships.indices {
            switch row[entity.slot(ofRelationship: j)] {
            case let .reference(id) where id.isTemporary: return true
            case let .references(ids) where ids.contains(where: \.isTemporary): return true
            default: continue
            }
        }
        return false
    }

    /// Rewrites references to temporary rows; a temporary row that was never
    /// inserted becomes no reference at all.
    private static func resolve(_ row: Row, of entity: EntityDescription, schema: StoreSchema, assigned: AssignedRows) -> Row {
        var row = row
        for (j, relationship) in entity.relationships.enumerated() {
            let slot = entity.slot(ofRelationship: j)
            guard let destination = schema.entityIndex(named: relationship.destination) else { continue }
            func permanent(_ id: RowID) -> RowID? {
                id.isTemporary ? assigned[EntityRow(entity: destination, id: id)] : id
            }
            switch row[slot] {
            case let .reference(id) where id.isTemporary:
                row[slot] = permanent(id).map(Value.reference) ?? .null
            case let .references(ids) where ids.contains(where: \.isTemporary):
                // An upsert's model takes over a row the list may name already (a feed
                // reloaded under a stored owner): a to-many holds a row once, as Apple's
                // sets do, so the second mention goes.
                var seen = Set<RowID>()
                row[slot] = .references(ids.compactMap(permanent).filter { seen.insert($0).inserted })
            default:
                break
            }
        }
        return row
    }

    private static func violation(_ entity: EntityDescription, _ constraint: Int, _ key: [Value]) -> StoreError {
        .uniqueConstraintViolation(
            entity: entity.name,
            attributes: entity.uniqueness[constraint].map { entity.attributes[$0].name },
            key: key)
    }
}
