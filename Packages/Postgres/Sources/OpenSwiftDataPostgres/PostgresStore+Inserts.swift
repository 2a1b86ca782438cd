import Foundation
@_spi(DataStores) import OpenSwiftData
import OpenSwiftDataStore
import PostgresNIO

/// A save's inserts, many rows a statement.
///
/// Each statement is a round trip to the server, and a save of 5,000 new models
/// made 10,000 of them (a look-up of each unique key, then the row's INSERT), which
/// cost 4–5 times hand-written postgres-nio's time (README, #43). Now a save asks
/// the sequences for every new row's key at once, so rows can name each other, and
/// writes the rows of an entity a few hundred a statement, relationships included.
/// `ON CONFLICT DO NOTHING` leaves out a row whose unique key a stored row holds (or
/// one inserted before it in the save); only those rows take the one-by-one path,
/// and upsert onto the row holding their key, as before.
extension PostgresStore {
    /// What the inserts of a save did, for the rest of the save.
    struct InsertOutcome {
        /// Each new model's permanent identifier: its own row's, or, when upserted,
        /// the row it landed on.
        var remapped: [PersistentIdentifier: PersistentIdentifier] = [:]
        /// Models that upserted onto a stored row: (model, entity, row key).
        var upserted: [(PersistentIdentifier, EntityDescription, Int64)] = []
        /// History's records of the inserts and upserts, in the request's order.
        var changes: [StoredChange] = []
    }

    /// The most parameters one statement carries (the protocol counts them in 16 bits).
    static let maximumBinds = Int(UInt16.max)
    /// The most rows one INSERT carries: beyond a few hundred, a bigger statement
    /// saves no time, and its text and parameters cost memory on both sides.
    static let insertBatchRows = 500

    /// Writes `inserted` (in order; their relationships may name each other and stored
    /// rows); returns their identifiers, upserts and history.
    func insert(_ inserted: [DefaultSnapshot]) throws -> InsertOutcome {
        var outcome = InsertOutcome()
        guard !inserted.isEmpty else { return outcome }
        // By entity, each in the request's order.
        // Each snapshot's entity and its index, looked up once.
        let entities = try inserted.map { snapshot in
            let entity = try entity(of: snapshot.persistentIdentifier)
            return (entity, try entityIndex(entity))
        }
        var groups: [(entity: EntityDescription, snapshots: [DefaultSnapshot])] = []
        var groupOfEntity: [String: Int] = [:]
        for (snapshot, (entity, _)) in zip(inserted, entities) {
            if let g = groupOfEntity[entity.name] {
                groups[g].snapshots.append(snapshot)
            } else {
                groupOfEntity[entity.name] = groups.count
                groups.append((entity, [snapshot]))
            }
        }
        // Every row's key first, so a row's relationships can be written with it.
        var keys: [PersistentIdentifier: Int64] = [:]
        for (entity, snapshots) in groups {
            for (snapshot, key) in zip(snapshots, try reserveKeys(snapshots.count, of: entity)) {
                keys[snapshot.persistentIdentifier] = key
                outcome.remapped[snapshot.persistentIdentifier] = try persistentIdentifier(entity.name, key)
            }
        }
        // Rows a unique key kept out, in the request's order within their entity.
        var keptOut: [(DefaultSnapshot, EntityDescription)] = []
        for (entity, snapshots) in groups {
            let width = 1 + entity.attributes.count + entity.relationships.count
            let rows = Swift.max(1, Swift.min(Self.insertBatchRows, Self.maximumBinds / width))
            var start = 0
            while start < snapshots.count {
                let batch = snapshots[start..<Swift.min(start + rows, snapshots.count)]
                let written = try insertRows(batch, of: entity, keys: keys, remapped: outcome.remapped)
                keptOut += batch.filter { !written.contains(keys[$0.persistentIdentifier]!) }.map { ($0, entity) }
                start += rows
            }
        }
        for (snapshot, entity) in keptOut {
            try upsert(snapshot, of: entity, key: keys[snapshot.persistentIdentifier]!, outcome: &outcome)
        }
        if !outcome.upserted.isEmpty {
            // The rows were written naming the upserted models' unused keys; now that
            // those are known, every new row's relationships are written again, in
            // order. An upsert keeps the stored relationships the new model left empty.
            let upsertedKeys = Set(outcome.upserted.map(\.2))
            for (snapshot, (entity, _)) in zip(inserted, entities) {
                let id = try rowKey(outcome.remapped[snapshot.persistentIdentifier]!)
                try update(
                    entity, id: id, snapshot: snapshot, remapped: outcome.remapped, attributes: false,
                    skipEmpty: upsertedKeys.contains(id), writing: { _ in true })
            }
        }
        // History, in the request's order, a record a row (`CodedChange` names one).
        let upsertedModels = Set(outcome.upserted.map(\.0))
        for (snapshot, (entity, index)) in zip(inserted, entities) {
            let id = try rowKey(outcome.remapped[snapshot.persistentIdentifier]!)
            if upsertedModels.contains(snapshot.persistentIdentifier) {
                // The values it replaced are gone: every slot it wrote counts as changed.
                outcome.changes.append(.updated(entity: index, id: RowID(id), slots: writtenSlots(snapshot, of: entity)))
            } else {
                outcome.changes.append(.inserted(entity: index, first: RowID(id), count: 1))
            }
        }
        return outcome
    }

    /// `count` new row keys of `entity`'s table, from its `_id` sequence.
    private func reserveKeys(_ count: Int, of entity: EntityDescription) throws -> [Int64] {
        var binds = PostgresBindings()
        binds.append(quoted(entity.name))
        binds.append(count)
        let rows = try execute("SELECT nextval(pg_get_serial_sequence($1, '_id')) FROM generate_series(1, $2)", binds).rows
        let keys = try rows.map { try $0.makeRandomAccess()[0].decode(Int64.self) }
        guard keys.count == count else { throw PostgresStoreError.server("asked for \(count) row keys, had \(keys.count)") }
        return keys
    }

    /// Inserts `batch` in one statement, each row with its reserved key; returns the
    /// keys of the rows written. A row whose unique key is taken is left out.
    private func insertRows(
        _ batch: ArraySlice<DefaultSnapshot>, of entity: EntityDescription, keys: [PersistentIdentifier: Int64],
        remapped: [PersistentIdentifier: PersistentIdentifier]
    ) throws -> Set<Int64> {
        var binds = PostgresBindings()
        var rows: [String] = []
        rows.reserveCapacity(batch.count)
        for snapshot in batch {
            var written: [Int: Value] = [:]
            var cells: [String] = []
            cells.reserveCapacity(1 + entity.attributes.count + entity.relationships.count)
            binds.append(keys[snapshot.persistentIdentifier]!)
            cells.append("$\(binds.count)")
            for (slot, attribute) in entity.attributes.enumerated() {
                guard case let .value(value)? = snapshot.entries[attribute.name] else {
                    cells.append("DEFAULT")
                    continue
                }
                written[slot] = value
                try PostgresValues.append(value, to: &binds)
                cells.append("$\(binds.count)")
            }
            try checkIndexable(written, of: entity)
            for relationship in entity.relationships {
                guard let value = try relationshipValue(relationship, snapshot.entries[relationship.name], remapped: remapped) else {
                    cells.append("DEFAULT")
                    continue
                }
                try PostgresValues.append(value, to: &binds)
                cells.append("$\(binds.count)")
            }
            rows.append("(" + cells.joined(separator: ", ") + ")")
        }
        let columns = (["\"_id\""] + entity.attributes.map { quoted($0.name) } + entity.relationships.map { quoted($0.name) })
            .joined(separator: ", ")
        var sql = "INSERT INTO \(quoted(entity.name)) (\(columns)) VALUES \(rows.joined(separator: ", "))"
        guard !entity.uniqueness.isEmpty else {
            // Nothing but the reserved key could be taken, and no one else has it.
            try execute(sql, binds)
            return Set(batch.map { keys[$0.persistentIdentifier]! })
        }
        sql += " ON CONFLICT DO NOTHING RETURNING \"_id\""
        return Set(try execute(sql, binds).rows.map { try $0.makeRandomAccess()[0].decode(Int64.self) })
    }

    /// Upserts `snapshot`, a new model whose unique key a row holds, onto that row:
    /// its attributes are written there and the model takes that row's identifier,
    /// on whichever unique constraint matched (as the engine does).
    /// - Throws: `SwiftDataError.uniqueConstraintViolation` when two rows hold its
    ///   keys, or when the row holding one went away before this look: the save runs
    ///   again (`transaction(_:)`) and inserts it.
    private func upsert(_ snapshot: DefaultSnapshot, of entity: EntityDescription, key: Int64, outcome: inout InsertOutcome) throws {
        guard let existing = try storedRow(sharingAUniqueKeyWith: snapshot, of: entity) else {
            throw SwiftDataError.uniqueConstraintViolation
        }
        // Its attributes only: its relationships are written once every new model's
        // row is known (`insert(_:)`).
        let attributes = Set(entity.attributes.map(\.name))
        try update(
            entity, id: existing, snapshot: snapshot, remapped: [:], attributes: true, skipEmpty: false,
            writing: { attributes.contains($0) })
        outcome.remapped[snapshot.persistentIdentifier] = try persistentIdentifier(entity.name, existing)
        outcome.upserted.append((snapshot.persistentIdentifier, entity, existing))
    }
}
