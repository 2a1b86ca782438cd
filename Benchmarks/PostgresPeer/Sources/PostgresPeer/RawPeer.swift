import Foundation
import Logging
import PostgresNIO

/// The hand-written side: postgres-nio's `PostgresClient` and named prepared
/// statements (parsed once per connection), rows decoded by hand into `TripRow`s,
/// on the table PostgresStore made (same columns, same indexes). Dates are seconds
/// since 2001 in `double precision`, as PostgresStore keeps them.
struct RawPeer {
    let client: PostgresClient
    let logger: Logger

    /// One trip, returning its key, as an app that keeps the row's id would write it.
    struct Insert: PostgresPreparedStatement {
        static let sql = """
            INSERT INTO "Trip" ("name", "destination", "startDate", "price", "latitude", "longitude", "notes")
            VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING "_id"
            """
        typealias Row = Int64
        let trip: TripRow

        func makeBindings() throws -> PostgresBindings {
            var binds = PostgresBindings()
            binds.append(trip.name)
            binds.append(trip.destination)
            binds.append(trip.startDate.timeIntervalSinceReferenceDate)
            binds.append(trip.price)
            binds.append(trip.latitude)
            binds.append(trip.longitude)
            if let notes = trip.notes { binds.append(notes) } else { binds.appendNull() }
            return binds
        }

        func decodeRow(_ row: PostgresRow) throws -> Int64 { try row.decode(Int64.self) }
    }

    /// The trip of a name (unique).
    struct ByName: PostgresPreparedStatement {
        static let sql = """
            SELECT "_id", "name", "destination", "startDate", "price", "latitude", "longitude", "notes"
            FROM "Trip" WHERE "name" = $1 LIMIT 1
            """
        typealias Row = TripRow
        let name: String

        func makeBindings() throws -> PostgresBindings {
            var binds = PostgresBindings()
            binds.append(name)
            return binds
        }

        func decodeRow(_ row: PostgresRow) throws -> TripRow { try RawPeer.trip(row) }
    }

    /// Trips priced in `low...high`, cheapest first (ties by key, as PostgresStore
    /// orders them, so both sides return the same trips), at most 100.
    struct PriceRange: PostgresPreparedStatement {
        static let sql = """
            SELECT "_id", "name", "destination", "startDate", "price", "latitude", "longitude", "notes"
            FROM "Trip" WHERE "price" >= $1 AND "price" <= $2 ORDER BY "price" NULLS FIRST, "_id" LIMIT 100
            """
        typealias Row = TripRow
        let low: Double
        let high: Double

        func makeBindings() throws -> PostgresBindings {
            var binds = PostgresBindings()
            binds.append(low)
            binds.append(high)
            return binds
        }

        func decodeRow(_ row: PostgresRow) throws -> TripRow { try RawPeer.trip(row) }
    }

    static func trip(_ row: PostgresRow) throws -> TripRow {
        let (_, name, destination, start, price, latitude, longitude, notes) =
            try row.decode((Int64, String, String, Double, Double, Double, Double, String?).self)
        return TripRow(
            name: name, destination: destination, startDate: Date(timeIntervalSinceReferenceDate: start), price: price,
            latitude: latitude, longitude: longitude, notes: notes)
    }

    /// Named prepared statements (parsed and planned once per connection), or the same
    /// SQL as unnamed statements, parsed and planned on every call: the difference is
    /// what preparing is worth. (PostgresStore prepares a fetch the second time it
    /// comes, and runs a save's statements unnamed.)
    let prepared: Bool

    /// Inserts `trips` in one transaction, one INSERT each; their keys.
    func insert(_ trips: [TripRow]) async throws -> [Int64] {
        try await client.withTransaction(logger: logger) { connection in
            var keys: [Int64] = []
            keys.reserveCapacity(trips.count)
            for trip in trips {
                let statement = Insert(trip: trip)
                if prepared {
                    for try await key in try await connection.execute(statement, logger: logger) { keys.append(key) }
                } else {
                    let rows = try await connection.query(PostgresQuery(unsafeSQL: Insert.sql, binds: statement.makeBindings()), logger: logger)
                    for try await row in rows { keys.append(try statement.decodeRow(row)) }
                }
            }
            return keys
        }
    }

    func trip(named name: String) async throws -> TripRow? {
        try await rows(ByName(name: name)).first
    }

    func trips(pricedFrom low: Double, to high: Double) async throws -> [TripRow] {
        try await rows(PriceRange(low: low, high: high))
    }

    private func rows<S: PostgresPreparedStatement>(_ statement: S) async throws -> [TripRow] where S.Row == TripRow {
        var trips: [TripRow] = []
        if prepared {
            for try await trip in try await client.execute(statement, logger: logger) { trips.append(trip) }
        } else {
            for try await row in try await client.query(PostgresQuery(unsafeSQL: S.sql, binds: statement.makeBindings()), logger: logger) {
                trips.append(try statement.decodeRow(row))
            }
        }
        return trips
    }
}
