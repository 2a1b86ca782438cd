import Foundation
import GRDB
import TripData

/// The SQLite peer (GRDB 7.10.0 over the system SQLite), set up at its best: REAL dates,
/// prepared statements, explicit transactions, hand-written row mapping (no `Codable`),
/// and the indexes the model declares (unique `name`, `destination`, `startDate`).
enum SQLitePeer {
    static let columns = "name, destination, startDate, endDate, price, latitude, longitude, isFavorite, notes"

    /// The schema. `items` adds the bucket-list table with a foreign key (ON DELETE
    /// CASCADE, indexed); `rtree` the R*Tree virtual table over (latitude, longitude).
    static func createSchema(_ db: Database, items: Bool = false, rtree: Bool = false) throws {
        try db.execute(sql: """
            CREATE TABLE trip (
                id INTEGER PRIMARY KEY,
                name TEXT NOT NULL UNIQUE,
                destination TEXT NOT NULL,
                startDate REAL NOT NULL,
                endDate REAL NOT NULL,
                price REAL NOT NULL,
                latitude REAL NOT NULL,
                longitude REAL NOT NULL,
                isFavorite INTEGER NOT NULL,
                notes TEXT);
            CREATE INDEX trip_destination ON trip(destination);
            CREATE INDEX trip_startDate ON trip(startDate);
            """)
        if items {
            try db.execute(sql: """
                CREATE TABLE item (
                    id INTEGER PRIMARY KEY,
                    tripId INTEGER NOT NULL REFERENCES trip(id) ON DELETE CASCADE,
                    title TEXT NOT NULL,
                    done INTEGER NOT NULL);
                CREATE INDEX item_tripId ON item(tripId);
                """)
        }
        if rtree {
            try db.execute(sql: "CREATE VIRTUAL TABLE trip_point USING rtree(id, minLat, maxLat, minLon, maxLon)")
        }
    }

    /// An in-memory database with the schema (GRDB turns foreign keys on by default).
    static func memory(items: Bool = false, rtree: Bool = false) throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { try createSchema($0, items: items, rtree: rtree) }
        return queue
    }

    /// Fills the R*Tree table with every trip's point, a box of zero size (W5). The R*Tree
    /// stores 32-bit floats, rounded outwards, so it finds candidates: a query checks the
    /// trip's own REAL coordinates too.
    static func fillRTree(_ db: Database) throws {
        try db.execute(sql: """
            INSERT INTO trip_point (id, minLat, maxLat, minLon, maxLon)
            SELECT id, latitude, latitude, longitude, longitude FROM trip
            """)
    }

    /// Inserts `rows` (ids `firstID...`) with one prepared INSERT; the caller owns the transaction.
    static func insert(_ rows: some Collection<TripRow>, firstID: Int = 1, into db: Database, items: Bool = false) throws {
        let trip = try db.makeStatement(sql: "INSERT INTO trip (id, \(columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        let item = items ? try db.makeStatement(sql: "INSERT INTO item (tripId, title, done) VALUES (?, ?, ?)") : nil
        var id = firstID
        for row in rows {
            trip.setUncheckedArguments([
                id, row.name, row.destination, row.startDate.timeIntervalSinceReferenceDate,
                row.endDate.timeIntervalSinceReferenceDate, row.price, row.latitude, row.longitude,
                row.isFavorite, row.notes,
            ])
            try trip.execute()
            if let item {
                for entry in row.bucketList {
                    item.setUncheckedArguments([id, entry.title, entry.done])
                    try item.execute()
                }
            }
            id += 1
        }
    }

    /// An in-memory database holding `rows`, inserted in one transaction (with `rtree`,
    /// the R*Tree table too, filled in the same transaction).
    static func loaded(_ rows: [TripRow], items: Bool = false, rtree: Bool = false) throws -> DatabaseQueue {
        let queue = try memory(items: items, rtree: rtree)
        try queue.write { db in
            try insert(rows, into: db, items: items)
            if rtree { try fillRTree(db) }
        }
        return queue
    }

    /// Hand-written mapping of the `columns` (from column `offset`) to a `TripRow`.
    @inline(__always)
    static func trip(_ row: Row, offset: Int = 0) -> TripRow {
        TripRow(
            name: row[offset], destination: row[offset + 1],
            startDate: Date(timeIntervalSinceReferenceDate: row[offset + 2]),
            endDate: Date(timeIntervalSinceReferenceDate: row[offset + 3]),
            price: row[offset + 4], latitude: row[offset + 5], longitude: row[offset + 6],
            isFavorite: row[offset + 7], notes: row[offset + 8], bucketList: [])
    }
}
