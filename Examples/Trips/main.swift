// Trips: creates trips, queries them and saves them in a document with OpenSwiftData.
//
//   swift run Trips                 the walkthrough (document in the temporary folder)
//   swift run Trips --document PATH the walkthrough, saving to PATH
//   swift run -c release Trips --scale 1000000
//                                   a unique-key insert + save of N trips, then
//                                   fetches by unique key, with timings
import Foundation
import SwiftData

let arguments = CommandLine.arguments
if let flag = arguments.firstIndex(of: "--scale"), flag + 1 < arguments.count, let n = Int(arguments[flag + 1]) {
    try scale(n)
} else if let flag = arguments.firstIndex(of: "--document"), flag + 1 < arguments.count {
    try walkthrough(document: URL(fileURLWithPath: arguments[flag + 1]))
} else {
    try walkthrough(document: FileManager.default.temporaryDirectory.appendingPathComponent("OpenSwiftData-Trips/Trips.store"))
}

func walkthrough(document url: URL) throws {
    // Start from a fresh document each run.
    try? FileManager.default.removeItem(at: url)
    try? FileManager.default.removeItem(at: url.appendingPathExtension("blobs"))
    try edit(document: url)

    // Every save went to the document: a new container reads it all back.
    let reopened = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: url))
    let context = ModelContext(reopened)
    let size = (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
    print("Reopened \(url.path) (\(size) bytes): \(try context.fetchCount(FetchDescriptor<Trip>())) trips, \(try context.fetchCount(FetchDescriptor<BucketListItem>())) bucket-list items.")
    print("Inspect it with: swift run osd info \(url.path)")
}

func edit(document url: URL) throws {
    let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: url))
    let context = ModelContext(container)
    let day: TimeInterval = 86_400
    let start = Date(timeIntervalSince1970: 1_780_000_000)
    let plans: [(String, String, Double, Double, [String])] = [
        ("Spring in Kyoto", "Kyoto", 10, 2_400, ["Fushimi Inari at dawn", "Tea in Gion"]),
        ("Lisbon weekend", "Lisbon", 40, 650, ["Tram 28", "Pastéis de Belém"]),
        ("Fjords by train", "Bergen", 75, 1_800, ["Flåm railway"]),
        ("Paris in autumn", "Paris", 120, 980, ["Musée d'Orsay", "Canal Saint-Martin", "Montmartre"]),
    ]
    for (name, destination, offset, price, items) in plans {
        let trip = Trip(
            name: name, destination: destination,
            startDate: start + offset * day, endDate: start + (offset + 5) * day, price: price)
        trip.bucketList = items.map(BucketListItem.init(title:))
        context.insert(trip)
    }
    try context.save()
    print("Saved \(try context.fetchCount(FetchDescriptor<Trip>())) trips.")

    // Mark two favourites from another context: contexts share the store.
    let other = ModelContext(container)
    for trip in try other.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.price < 1_000 })) {
        trip.isFavorite = true
    }
    try other.save()

    let favourites = FetchDescriptor<Trip>(
        predicate: #Predicate { $0.isFavorite },
        sortBy: [SortDescriptor(\.startDate)])
    print("Favourite trips, soonest first:")
    for trip in try context.fetch(favourites) {
        let items = trip.bucketList.map(\.title).sorted().joined(separator: ", ")
        print("  \(trip.name) — \(trip.destination), \(trip.startDate.formatted(date: .abbreviated, time: .omitted)), $\(Int(trip.price)): \(items)")
    }

    let expensive = try context.fetch(FetchDescriptor<Trip>(
        predicate: #Predicate { $0.destination.localizedStandardContains("KYO") }))
    print("Trips matching \"kyo\": \(expensive.map(\.name))")

    // Inserting a trip whose unique name exists updates it (upsert).
    context.insert(Trip(name: "Lisbon weekend", destination: "Lisbon", startDate: start, endDate: start + 2 * day, price: 590))
    try context.save()
    let lisbon = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "Lisbon weekend" }))
    print("Lisbon weekend now costs $\(Int(lisbon[0].price)); trips in store: \(try context.fetchCount(FetchDescriptor<Trip>()))")

    // Deleting a trip cascades to its bucket list.
    context.delete(lisbon[0])
    try context.save()
    print("After deleting it: \(try context.fetchCount(FetchDescriptor<Trip>())) trips, \(try context.fetchCount(FetchDescriptor<BucketListItem>())) bucket-list items.")
}

func scale(_ n: Int) throws {
    let clock = ContinuousClock()
    let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    let context = ModelContext(container)
    let base = Date(timeIntervalSince1970: 1_700_000_000)
    let insert = try clock.measure {
        for i in 0..<n {
            context.insert(Trip(
                name: "trip-\(i)", destination: "city-\(i % 2_000)",
                startDate: base + Double(i % 3_650) * 86_400, endDate: base + Double(i % 3_650 + 7) * 86_400,
                price: Double(i % 5_000)))
        }
        try context.save()
    }
    print("insert + save of \(n) unique-keyed trips: \(insert)")
    let reader = ModelContext(container)
    let lookups = min(n, 10_000)
    var found = 0
    let lookup = try clock.measure {
        for i in 0..<lookups {
            let key = "trip-\((i * 7_919) % n)"
            var descriptor = FetchDescriptor<Trip>(predicate: #Predicate { $0.name == key })
            descriptor.fetchLimit = 1
            found += try reader.fetch(descriptor).count
        }
    }
    print("\(lookups) fetches by unique key: \(lookup) (\(lookup / lookups) each), found \(found)")
    // A second insert of an existing key is an upsert, checked through the unique index.
    let upsert = try clock.measure {
        context.insert(Trip(name: "trip-0", destination: "updated", startDate: base, endDate: base, price: 1))
        try context.save()
    }
    print("upsert of one existing key into \(n) trips: \(upsert); count now \(try reader.fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "trip-0" })))")
}
