import Fluent
import FluentPostgresDriver
import Foundation
import Vapor

/// A trip as a Fluent app declares it: the columns of the server example's `@Model`.
final class Trip: Model, @unchecked Sendable {
    static let schema = "trips"

    @ID(custom: "id", generatedBy: .database) var id: Int?
    @Field(key: "name") var name: String
    @Field(key: "destination") var destination: String
    @Field(key: "start_date") var startDate: Date
    @Field(key: "price") var price: Double
    @Field(key: "latitude") var latitude: Double
    @Field(key: "longitude") var longitude: Double
    @OptionalField(key: "notes") var notes: String?

    init() {}

    /// Sets every field from `body` (a replaced trip takes the body whole, as the
    /// example's upsert does).
    func take(_ body: TripBody) {
        name = body.name
        destination = body.destination
        startDate = body.startDate
        price = body.price
        latitude = body.latitude
        longitude = body.longitude
        notes = body.notes
    }
}

/// The trip as the API reads and writes it: the example's JSON.
struct TripBody: Content {
    var name: String
    var destination: String
    var startDate: Date
    var price: Double
    var latitude: Double
    var longitude: Double
    var notes: String?

    init(_ trip: Trip) {
        name = trip.name
        destination = trip.destination
        startDate = trip.startDate
        price = trip.price
        latitude = trip.latitude
        longitude = trip.longitude
        notes = trip.notes
    }
}

/// The table and the example's indexes: the unique name, destination, price.
struct CreateTrips: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(Trip.schema)
            .field("id", .int64, .identifier(auto: true))
            .field("name", .string, .required)
            .field("destination", .string, .required)
            .field("start_date", .datetime, .required)
            .field("price", .double, .required)
            .field("latitude", .double, .required)
            .field("longitude", .double, .required)
            .field("notes", .string)
            .unique(on: "name")
            .ignoreExisting()
            .create()
        guard let sql = database as? any SQLDatabase else { return }
        try await sql.raw("CREATE INDEX IF NOT EXISTS trips_destination ON trips (destination)").run()
        try await sql.raw("CREATE INDEX IF NOT EXISTS trips_price ON trips (price)").run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(Trip.schema).delete()
    }
}
