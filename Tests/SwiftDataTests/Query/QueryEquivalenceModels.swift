// Models for the query-equivalence property test (QueryEquivalenceTests.swift):
// every attribute kind the generator draws predicates over, an optional to-one
// and a cascading to-many relationship, a unique key, plain indexes and an R-tree, and Codable
// composite attributes (one optional) whose members predicates read.
import Foundation
import SwiftData

@Model
final class QItem {
    #Index<QItem>(.binary([\.category]), .binary([\.price]), .binary([\.category, \.price]), .rtree([\.price, \.qty]))

    @Attribute(.unique) var code: String
    var category: String
    var price: Double
    var qty: Int
    var flag: Bool
    var note: String?
    var tags: [String]
    var date: Date
    var rank: Int?
    var place: QPlace
    var home: QPlace?
    @Relationship(inverse: \QOwner.items) var owner: QOwner?
    @Relationship(deleteRule: .cascade, inverse: \QPart.item) var parts: [QPart] = []

    init(
        code: String, category: String, price: Double, qty: Int, flag: Bool,
        note: String?, tags: [String], date: Date, rank: Int?, place: QPlace, home: QPlace?
    ) {
        self.code = code
        self.category = category
        self.price = price
        self.qty = qty
        self.flag = flag
        self.note = note
        self.tags = tags
        self.date = date
        self.rank = rank
        self.place = place
        self.home = home
    }
}

/// A composite attribute with its own coding keys (so JSON keys are not property
/// names), an optional member left out of the JSON when nil, two Booleans, a date,
/// a nested struct and an enum.
struct QPlace: Codable, Hashable, Sendable {
    var city: String
    var zip: Int?
    var visited: Bool
    var rated: Bool
    var since: Date
    var geo: QGeo
    var kind: QPlaceKind

    enum CodingKeys: String, CodingKey {
        case city = "c", zip, visited = "v", rated, since = "s", geo = "g", kind
    }
}

struct QGeo: Codable, Hashable, Sendable {
    var lat: Double
    var lon: Double
}

enum QPlaceKind: String, Codable, CaseIterable, Sendable {
    case home, work, other
}

@Model
final class QOwner {
    var name: String
    var age: Int
    var items: [QItem] = []

    init(name: String, age: Int) {
        self.name = name
        self.age = age
    }
}

@Model
final class QPart {
    var label: String
    var weight: Int
    var item: QItem?

    init(label: String, weight: Int) {
        self.label = label
        self.weight = weight
    }
}
