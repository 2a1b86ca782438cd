import Foundation

extension StoreVersion {
    /// Applies a save another writer of the document recorded (its journal frame):
    /// the rows it wrote, whole, and those it deleted, with their index entries,
    /// its identifier reservations and its history. The result is the version that
    /// writer published, when this one was the version before it.
    /// - Complexity: O(rows in the record × indexes × log n)
    public mutating func replay(_ record: CommitRecord) {
        for put in record.puts {
            if row(put.id, of: put.entity) != nil {
                write(put.row, at: put.id, of: put.entity)
            } else {
                tables[put.entity].put(put.id, put.row)
                for i in orderedIndexes[put.entity].indices { orderedIndexes[put.entity][i].add(put.row, at: put.id) }
                for i in spatialIndexes[put.entity].indices { spatialIndexes[put.entity][i].add(put.row, at: put.id) }
            }
        }
        var keyed: [Int: [Int]] = [:]
        for delete in record.deletes {
            let slots = keyed[delete.entity] ?? indexedSlots(of: delete.entity)
            keyed[delete.entity] = slots
            _ = remove(delete.id, of: delete.entity, keyed: slots)
        }
        for (e, next) in record.nextRawIDs { tables[e].reserveIdentifiers(below: next) }
        if let pruning = record.pruning {
            _ = history.remove(generations: Set(pruning.generations))
            history.horizon = max(history.horizon, pruning.horizon)
        }
        if let transaction = record.transaction { history.append(transaction) }
        generation = record.generation
    }
}
