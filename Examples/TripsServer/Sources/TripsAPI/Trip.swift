import Foundation
import SwiftData

/// A trip, as an app would declare it (the same class compiles on Apple platforms).
@Model
final class Trip {
    #Index<Trip>(.binary([\.destination]), .binary([\.price]), .rtree([\.latitude, \.longitude]))

    @Attribute(.unique) var name: String
    var destination: String
    var startDate: Date
    var price: Double
    var latitude: Double
    var longitude: Double
    var notes: String?

    init(name: String, destination: String, startDate: Date, price: Double, latitude: Double, longitude: Double) {
        self.name = name
        self.destination = destination
        self.startDate = startDate
        self.price = price
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// A trip as the API reads and writes it.
struct TripBody: Codable, Sendable {
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

/// A partial update: the fields present change.
struct TripChange: Codable, Sendable {
    var destination: String?
    var startDate: Date?
    var price: Double?
    var notes: String?
}
