import Foundation
import OpenSwiftDataPostgres
import SwiftData

/// Our side, as an app writes it: a `ModelContainer` over `PostgresStore`, a
/// `ModelContext`, `insert` and `save()`, `FetchDescriptor`s with `#Predicate`s.
/// Its calls block their thread, so they run on a thread of their own (never one of
/// NIO's event loops, nor the cooperative pool's).
struct StoreSide {
    let container: ModelContainer

    init(url: String) throws {
        container = try ModelContainer(for: Trip.self, configurations: try PostgresStoreConfiguration(url: url))
    }

    /// Inserts `trips` with one `save()`: one transaction.
    func insert(_ trips: [TripRow]) throws {
        let context = ModelContext(container)
        for trip in trips { context.insert(Trip(trip)) }
        try context.save()
    }

    /// Each name's trip, looked up by its unique name; their prices' sum (so each is read).
    func lookUp(_ names: [String]) throws -> Double {
        let context = ModelContext(container)
        var sum = 0.0
        for name in names {
            var descriptor = FetchDescriptor<Trip>(predicate: #Predicate { $0.name == name })
            descriptor.fetchLimit = 1
            guard let trip = try context.fetch(descriptor).first else { throw BenchmarkFailure("no trip named \(name)") }
            sum += trip.price
        }
        return sum
    }

    /// Each range's trips, cheapest first, at most 100; the names of each (read from the models).
    func ranges(_ ranges: [ClosedRange<Double>]) throws -> [[String]] {
        let context = ModelContext(container)
        return try ranges.map { range in
            let low = range.lowerBound, high = range.upperBound
            var descriptor = FetchDescriptor<Trip>(
                predicate: #Predicate { $0.price >= low && $0.price <= high }, sortBy: [SortDescriptor(\.price)])
            descriptor.fetchLimit = 100
            return try context.fetch(descriptor).map(\.name)
        }
    }
}

/// A result that is not what both sides must return.
struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
