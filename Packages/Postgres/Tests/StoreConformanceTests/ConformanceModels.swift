import Foundation
import SwiftData

@Model
final class Voyage {
    @Attribute(.unique, .preserveValueOnDeletion) var code: String
    var destination: String
    var startDate: Date
    var price: Double
    var seats: Int
    var isFavorite: Bool
    var note: String?
    var tags: [String] = []
    @Relationship(deleteRule: .cascade, inverse: \Leg.voyage)
    var legs: [Leg] = []
    @Relationship(deleteRule: .nullify, inverse: \Traveller.voyages)
    var travellers: [Traveller] = []

    init(code: String, destination: String, startDate: Date, price: Double, seats: Int, isFavorite: Bool = false) {
        self.code = code
        self.destination = destination
        self.startDate = startDate
        self.price = price
        self.seats = seats
        self.isFavorite = isFavorite
    }
}

@Model
final class Leg {
    var title: String
    var order: Int
    var voyage: Voyage?

    init(title: String, order: Int) {
        self.title = title
        self.order = order
    }
}

@Model
final class Traveller {
    var name: String
    var voyages: [Voyage] = []

    init(name: String) {
        self.name = name
    }
}

/// Two unique attributes: an insert may match a stored row on either.
@Model
final class Member {
    @Attribute(.unique) var email: String
    @Attribute(.unique) var handle: String
    var name: String

    init(email: String, handle: String, name: String) {
        self.email = email
        self.handle = handle
        self.name = name
    }
}
