// Models for the query-equivalence property test (QueryEquivalenceTests.swift):
// every attribute kind the generator draws predicates over, an optional to-one
// and a cascading to-many relationship, a unique key and plain indexes.
import Foundation
import SwiftData

@Model
final class QItem {
    #Index<QItem>([\.category], [\.price], [\.category, \.price])

    @Attribute(.unique) var code: String
    var category: String
    var price: Double
    var qty: Int
    var flag: Bool
    var note: String?
    var tags: [String]
    var date: Date
    var rank: Int?
    @Relationship(inverse: \QOwner.items) var owner: QOwner?
    @Relationship(deleteRule: .cascade, inverse: \QPart.item) var parts: [QPart] = []

    init(
        code: String, category: String, price: Double, qty: Int, flag: Bool,
        note: String?, tags: [String], date: Date, rank: Int?
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
    }
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
