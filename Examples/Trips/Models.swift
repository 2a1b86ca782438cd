import SwiftData

@Model
final class Trip {
    #Index<Trip>([\.destination], [\.startDate])
    @Attribute(.unique) var name: String
    var destination: String
    var startDate: Date
    var endDate: Date
    var price: Double
    var isFavorite: Bool = false
    var notes: String?
    @Relationship(deleteRule: .cascade, inverse: \BucketListItem.trip)
    var bucketList: [BucketListItem] = []

    init(name: String, destination: String, startDate: Date, endDate: Date, price: Double) {
        self.name = name
        self.destination = destination
        self.startDate = startDate
        self.endDate = endDate
        self.price = price
    }
}

@Model
final class BucketListItem {
    var title: String
    var done: Bool = false
    var trip: Trip?

    init(title: String) {
        self.title = title
    }
}
