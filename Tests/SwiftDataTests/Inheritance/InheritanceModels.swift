import Foundation
import SwiftData

// The hierarchy of Apple's "Adopting inheritance in SwiftData", trimmed.

@Model class Journey {
    @Attribute(.unique) var name: String
    var destination: String
    var startDate: Date
    @Relationship(deleteRule: .cascade, inverse: \Stopover.journey)
    var stopovers: [Stopover] = []

    init(name: String, destination: String, startDate: Date) {
        self.name = name
        self.destination = destination
        self.startDate = startDate
    }
}

@Model class BusinessJourney: Journey {
    var expenseCode: String
    var perDiemRate: Double = 0
    @Relationship(deleteRule: .cascade, inverse: \Meal.journey)
    var meals: [Meal] = []

    init(name: String, destination: String, startDate: Date, expenseCode: String) {
        self.expenseCode = expenseCode
        super.init(name: name, destination: destination, startDate: startDate)
    }
}

@Model class PersonalJourney: Journey {
    enum Reason: String, Codable, CaseIterable { case family, reunion, wellness }
    var reason: Reason
    var companions: [Companion] = []

    init(name: String, destination: String, startDate: Date, reason: Reason) {
        self.reason = reason
        super.init(name: name, destination: destination, startDate: startDate)
    }
}

/// Three levels deep.
@Model class ConferenceJourney: BusinessJourney {
    var conference: String = ""

    init(name: String, destination: String, startDate: Date, conference: String) {
        self.conference = conference
        super.init(name: name, destination: destination, startDate: startDate, expenseCode: "CONF")
    }
}

@Model final class Stopover {
    var place: String
    var journey: Journey?
    init(place: String) { self.place = place }
}

@Model final class Meal {
    var cost: Double
    var journey: BusinessJourney?
    init(cost: Double) { self.cost = cost }
}

@Model final class Companion {
    var name: String
    init(name: String) { self.name = name }
}

/// Siblings that each declare `size`: one engine entity cannot hold both.
@Model class Figure {
    var name: String
    init(name: String) { self.name = name }
}

@Model class Circle: Figure {
    var size: Double = 0
    override init(name: String) { super.init(name: name) }
}

@Model class Square: Figure {
    var size: Int = 0
    override init(name: String) { super.init(name: name) }
}

/// A base class whose relationship's inverse is inferred (one relationship each way).
@Model class Vehicle {
    var plate: String
    var depot: Depot?
    init(plate: String) { self.plate = plate }
}

/// A subclass with a relationship count rule of its own.
@Model class Truck: Vehicle {
    @Relationship(deleteRule: .cascade, minimumModelCount: 1) var axles: [Axle] = []
    override init(plate: String) { super.init(plate: plate) }
}

@Model final class Depot {
    var city: String
    var vehicles: [Vehicle] = []
    init(city: String) { self.city = city }
}

@Model final class Axle {
    var load: Double
    init(load: Double) { self.load = load }
}
