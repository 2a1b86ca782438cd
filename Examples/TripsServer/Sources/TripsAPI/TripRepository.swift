import Foundation
import SwiftData

/// The trips of one request: an actor with its own context, as SwiftData apps use
/// `@ModelActor` off the main actor. Each request makes one, so requests run in
/// parallel and each sees what earlier requests saved.
@ModelActor
actor TripRepository {
    /// What a search asks for.
    struct Search: Sendable {
        var destination: String?
        var minimumPrice: Double?
        var maximumPrice: Double?
        var startsAfter: Date?
        /// `price`, `-price`, `startDate`, `-startDate`, `name` (the default).
        var sort = "name"
        static let sorts = ["name", "price", "-price", "startDate", "-startDate"]
        var limit = 50
        var offset = 0
    }

    func trips(matching search: Search) throws -> [TripBody] {
        let destination = search.destination
        let low = search.minimumPrice ?? -Double.greatestFiniteMagnitude
        let high = search.maximumPrice ?? Double.greatestFiniteMagnitude
        let after = search.startsAfter ?? .distantPast
        var descriptor: FetchDescriptor<Trip>
        if let destination {
            descriptor = FetchDescriptor(predicate: #Predicate {
                $0.destination == destination && $0.price >= low && $0.price <= high && $0.startDate > after
            })
        } else {
            descriptor = FetchDescriptor(predicate: #Predicate { $0.price >= low && $0.price <= high && $0.startDate > after })
        }
        descriptor.sortBy = switch search.sort {
        case "price": [SortDescriptor(\.price), SortDescriptor(\.name)]
        case "-price": [SortDescriptor(\.price, order: .reverse), SortDescriptor(\.name)]
        case "startDate": [SortDescriptor(\.startDate), SortDescriptor(\.name)]
        case "-startDate": [SortDescriptor(\.startDate, order: .reverse), SortDescriptor(\.name)]
        default: [SortDescriptor(\.name)]
        }
        descriptor.fetchLimit = max(1, min(search.limit, 500))
        descriptor.fetchOffset = max(0, search.offset)
        return try modelContext.fetch(descriptor).map(TripBody.init)
    }

    func trip(named name: String) throws -> TripBody? {
        try find(name).map(TripBody.init)
    }

    /// Inserts the trip, or replaces every field of the one of its name (its name is
    /// unique, so the insert upserts; a field the body leaves out, `notes`, becomes nil).
    /// `created` says which: the save lists a new trip as inserted and a replaced one
    /// as updated (`lastSavedChanges`, what its `didSave` lists), so telling them
    /// apart costs no look-up. (Observing `didSave` for it made every request register
    /// with `NotificationCenter`, whose one lock then held up every save: writes went
    /// from about 3,000 to 4,000 a second without it, #42.)
    func save(_ body: TripBody) throws -> (trip: TripBody, created: Bool) {
        let trip = Trip(
            name: body.name, destination: body.destination, startDate: body.startDate, price: body.price,
            latitude: body.latitude, longitude: body.longitude)
        trip.notes = body.notes
        modelContext.insert(trip)
        try modelContext.save()
        let updated = modelContext.lastSavedChanges?.updatedIdentifiers ?? []
        return (TripBody(trip), !updated.contains(trip.persistentModelID))
    }

    /// Changes the trip's fields the change names. Optimistic: if another request
    /// (or server) saved the trip between this read and this save, nothing is written
    /// and `SaveConflictError` says so, rather than a change acknowledged and lost.
    /// With `ifMatch`, a trip that is no longer the version the client read (its tag
    /// differs) is left alone and `TripPreconditionFailed` says so: the client's own
    /// read-modify-write is checked, not only the server's.
    func change(_ name: String, _ change: TripChange, ifMatch: IfMatch? = nil) throws -> TripBody? {
        modelContext.conflictPolicy = .failOnConflict
        guard let trip = try find(name) else { return nil }
        try check(trip, ifMatch)
        if let destination = change.destination { trip.destination = destination }
        if let startDate = change.startDate { trip.startDate = startDate }
        if let price = change.price { trip.price = price }
        if let notes = change.notes { trip.notes = notes }
        try modelContext.save()
        return TripBody(trip)
    }

    /// Deletes the trip, unless another request saved it since this one read it
    /// (`SaveConflictError`).
    func delete(_ name: String, ifMatch: IfMatch? = nil) throws -> Bool {
        modelContext.conflictPolicy = .failOnConflict
        guard let trip = try find(name) else { return false }
        try check(trip, ifMatch)
        modelContext.delete(trip)
        try modelContext.save()
        return true
    }

    func count() throws -> Int {
        try modelContext.fetchCount(FetchDescriptor<Trip>())
    }

    /// Trips within `metres` of a point, nearest first (the embedded store's R-tree;
    /// PostgreSQL answers `DataStoreError.unsupportedFeature`).
    func nearby(latitude: Double, longitude: Double, metres: Double, limit: Int) throws -> [TripBody] {
        try modelContext.fetch(NearbyDescriptor<Trip>(
            near: Coordinate(latitude: latitude, longitude: longitude), latitude: \.latitude, longitude: \.longitude,
            within: metres, limit: max(1, min(limit, 500)))
        ).map(TripBody.init)
    }

    /// The changes saved after `token` (all when nil), oldest first, as history keeps them.
    func changes(after token: DefaultHistoryToken?, limit: Int) throws -> (changes: [ChangeBody], last: DefaultHistoryToken?) {
        var descriptor = HistoryDescriptor<DefaultHistoryTransaction>(predicate: token.map { token in
            #Predicate<DefaultHistoryTransaction> { $0.token > token }
        })
        descriptor.fetchLimit = UInt64(max(1, min(limit, 1_000)))
        let transactions = try modelContext.fetchHistory(descriptor)
        return (transactions.flatMap(ChangeBody.changes(in:)), transactions.last?.token)
    }

    /// Throws `TripPreconditionFailed` when `ifMatch` does not allow the trip as stored.
    private func check(_ trip: Trip, _ ifMatch: IfMatch?) throws {
        guard let ifMatch else { return }
        let tag = TripETag(TripBody(trip))
        guard ifMatch.allows(tag) else { throw TripPreconditionFailed(current: tag) }
    }

    private func find(_ name: String) throws -> Trip? {
        var descriptor = FetchDescriptor<Trip>(predicate: #Predicate { $0.name == name })
        descriptor.fetchLimit = 1
        return try modelContext.fetch(descriptor).first
    }
}

/// One change of the change feed.
struct ChangeBody: Codable, Sendable {
    var kind: String
    var id: String

    /// The changes of a transaction, in its order.
    static func changes(in transaction: DefaultHistoryTransaction) -> [ChangeBody] {
        transaction.changes.compactMap { change in
            switch change {
            case let .insert(insert): ChangeBody(kind: "insert", id: "\(insert.changedPersistentIdentifier)")
            case let .update(update): ChangeBody(kind: "update", id: "\(update.changedPersistentIdentifier)")
            case let .delete(delete): ChangeBody(kind: "delete", id: "\(delete.changedPersistentIdentifier)")
            @unknown default: nil
            }
        }
    }
}
