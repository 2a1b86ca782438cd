import Foundation
import SwiftData

/// The model both sides measure: PostgresStore makes table "Trip" from it (a unique
/// index on `name`, an index on `price`), and the hand-written side reads and writes
/// that same table.
@Model
final class Trip {
    #Index<Trip>(.binary([\.price]))

    @Attribute(.unique) var name: String
    var destination: String
    var startDate: Date
    var price: Double
    var latitude: Double
    var longitude: Double
    var notes: String?

    init(_ row: TripRow) {
        name = row.name
        destination = row.destination
        startDate = row.startDate
        price = row.price
        latitude = row.latitude
        longitude = row.longitude
        notes = row.notes
    }
}
