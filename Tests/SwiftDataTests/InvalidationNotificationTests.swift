import Foundation
import SwiftData
import Testing

/// Issue #14, point 5: `deleteAllData()` and `erase()` tell observers which
/// identifiers no longer name anything.
@Suite struct InvalidationNotificationTests {
    /// The `invalidatedAllIdentifiers` of the `didSave` notifications a container posts.
    private final class Observed: @unchecked Sendable {
        private let lock = NSLock()
        private var batches: [[PersistentIdentifier]] = []
        private var token: NSObjectProtocol?

        init(_ container: ModelContainer) {
            token = NotificationCenter.default.addObserver(forName: ModelContext.didSave, object: container, queue: nil) {
                [self] notification in
                let key = ModelContext.NotificationKey.invalidatedAllIdentifiers.rawValue
                guard let ids = notification.userInfo?[key] as? [PersistentIdentifier] else { return }
                lock.withLock { batches.append(ids) }
            }
        }

        var received: [[PersistentIdentifier]] { lock.withLock { batches } }

        func stop() { token.map(NotificationCenter.default.removeObserver) }
    }

    private func saveFlights(_ refs: [String], in container: ModelContainer) throws -> [PersistentIdentifier] {
        let context = ModelContext(container)
        let flights = refs.map { Flight(airlineBookingRef: $0, destination: "Oslo", flightTime: 60) }
        flights.forEach(context.insert)
        try context.save()
        return flights.map(\.persistentModelID)
    }

    @Test func deleteAllDataPostsEveryRemovedIdentifier() throws {
        let container = try ModelContainer(for: Flight.self, Leg.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let ids = try saveFlights(["A", "B", "C"], in: container)
        let observed = Observed(container)
        defer { observed.stop() }
        container.deleteAllData()
        #expect(observed.received.count == 1)
        #expect(Set(observed.received.first ?? []) == Set(ids))
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Flight>()) == 0)
    }

    @Test func eraseDoesTooAndASaveDoesNot() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let container = try ModelContainer(
            for: Flight.self, Leg.self, configurations: ModelConfiguration(url: folder.file("flights.store")))
        let observed = Observed(container)
        defer { observed.stop() }
        let ids = try saveFlights(["A", "B"], in: container)
        #expect(observed.received.isEmpty, "a save invalidates nothing")
        try container.erase()
        #expect(observed.received.map { Set($0) } == [Set(ids)])
    }
}
