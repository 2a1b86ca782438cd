import SwiftData
import TripData

// The model of BENCHMARKS.md, as an app would declare it.
@Model
final class Trip {
    #Index<Trip>(.binary([\.destination]), .binary([\.startDate]), .rtree([\.latitude, \.longitude]))
    @Attribute(.unique) var name: String
    var destination: String
    var startDate: Date
    var endDate: Date
    var price: Double
    var latitude: Double
    var longitude: Double
    var isFavorite: Bool = false
    var notes: String?
    @Relationship(deleteRule: .cascade, inverse: \BucketListItem.trip)
    var bucketList: [BucketListItem] = []

    init(
        name: String, destination: String, startDate: Date, endDate: Date, price: Double,
        latitude: Double, longitude: Double, isFavorite: Bool, notes: String?
    ) {
        self.name = name
        self.destination = destination
        self.startDate = startDate
        self.endDate = endDate
        self.price = price
        self.latitude = latitude
        self.longitude = longitude
        self.isFavorite = isFavorite
        self.notes = notes
    }

    convenience init(_ row: TripRow) {
        self.init(
            name: row.name, destination: row.destination, startDate: row.startDate, endDate: row.endDate,
            price: row.price, latitude: row.latitude, longitude: row.longitude, isFavorite: row.isFavorite,
            notes: row.notes)
    }
}

@Model
final class BucketListItem {
    var title: String
    var done: Bool = false
    var trip: Trip?

    init(title: String, done: Bool) {
        self.title = title
        self.done = done
    }
}

/// OpenSwiftData, used as an app would: an in-memory container, one context, one save.
enum Ours {
    static func container() throws -> ModelContainer {
        try ModelContainer(
            for: Trip.self, BucketListItem.self,
            configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    }

    /// Inserts `rows` (with their bucket lists when `items`) into `context`; no save.
    static func insert(_ rows: some Collection<TripRow>, into context: ModelContext, items: Bool = false) {
        for row in rows {
            let trip = Trip(row)
            if items, !row.bucketList.isEmpty {
                trip.bucketList = row.bucketList.map { BucketListItem(title: $0.title, done: $0.done) }
            }
            context.insert(trip)
        }
    }

    /// A container holding `rows`, saved.
    static func loaded(_ rows: [TripRow], items: Bool = false) throws -> ModelContainer {
        let container = try container()
        let context = ModelContext(container)
        insert(rows, into: context, items: items)
        try context.save()
        return container
    }
}

/// A writer actor for W10: its own context, saves every `batch` inserts.
@ModelActor
actor TripWriter {
    func insert(_ rows: [TripRow], batch: Int) throws {
        var pending = 0
        for row in rows {
            modelContext.insert(Trip(row))
            pending += 1
            if pending == batch {
                try modelContext.save()
                pending = 0
            }
        }
        if pending > 0 { try modelContext.save() }
    }
}
