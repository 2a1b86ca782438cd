import Foundation
import OpenSwiftDataPostgres
import SwiftData
import Testing

/// What only PostgresStore does: several processes (here, containers) on one
/// database and their concurrency, SQL translation and its limits, configuration.
@Suite(.enabled(if: PostgresServer.url != nil, "no PostgreSQL server: PostgresStore's own tests are skipped"))
struct PostgresStoreTests {
    private let schema = Schema([Voyage.self, Leg.self, Traveller.self])

    private func voyage(_ code: String, price: Double = 10) -> Voyage {
        Voyage(code: code, destination: "Lisbon", startDate: StoreConformanceTests.start, price: price, seats: 2)
    }

    @Test func twoServersOnOneDatabaseMergeByPropertyOrAreTold() throws {
        let url = try PostgresServer.makeDatabase()
        // Two containers stand for two server processes.
        let one = try ModelContainer(for: schema, configurations: [try PostgresStoreConfiguration(url: url)])
        let two = try ModelContainer(for: schema, configurations: [try PostgresStoreConfiguration(url: url)])
        let a = ModelContext(one)
        a.insert(voyage("SHARED"))
        try a.save()
        let b = ModelContext(two)
        let theirs = try #require(try b.fetch(FetchDescriptor<Voyage>()).first)
        #expect(theirs.persistentModelID == (try a.fetch(FetchDescriptor<Voyage>()).first?.persistentModelID))

        // Both read, both change other properties: by default both changes stand.
        let mine = try #require(try a.fetch(FetchDescriptor<Voyage>()).first)
        mine.price = 11
        theirs.seats = 9
        try a.save()
        try b.save()
        var check = try #require(try ModelContext(one).fetch(FetchDescriptor<Voyage>()).first)
        #expect(check.price == 11 && check.seats == 9)

        // Optimistic: the second writer is told, and changes nothing until it reads again.
        // (B saved last: its model holds the row as stored, A's price included, so the
        // conflict below is A's next save, not a stale reading.)
        #expect(theirs.price == 11)
        b.conflictPolicy = .failOnConflict
        mine.price = 12
        theirs.seats = 10
        try a.save()
        #expect(throws: SaveConflictError.self) { try b.save() }
        b.rollback()
        let again = try #require(try b.fetch(FetchDescriptor<Voyage>()).first)
        #expect(again.price == 12)
        again.seats = 10
        try b.save()
        check = try #require(try ModelContext(one).fetch(FetchDescriptor<Voyage>()).first)
        #expect(check.price == 12 && check.seats == 10)
    }

    @Test func aConflictStaysAConflictUntilTheContextReadsAgain() throws {
        let url = try PostgresServer.makeDatabase()
        let one = try ModelContainer(for: schema, configurations: [try PostgresStoreConfiguration(url: url)])
        let two = try ModelContainer(for: schema, configurations: [try PostgresStoreConfiguration(url: url)])
        let a = ModelContext(one)
        a.insert(voyage("C1", price: 1))
        try a.save()
        let b = ModelContext(two)
        b.conflictPolicy = .failOnConflict
        let theirs = try #require(try b.fetch(FetchDescriptor<Voyage>()).first)
        theirs.destination = "Faro"
        // A writes after B read and changed: B's fetch keeps B's change, and the reading it was made on.
        let mine = try #require(try a.fetch(FetchDescriptor<Voyage>()).first)
        mine.price = 2
        try a.save()
        _ = try b.fetch(FetchDescriptor<Voyage>())
        #expect(throws: SaveConflictError.self) { try b.save() }
        // Saving again without reading again is refused again: A's price is not overwritten.
        #expect(throws: SaveConflictError.self) { try b.save() }
        let check = try #require(try ModelContext(one).fetch(FetchDescriptor<Voyage>()).first)
        #expect(check.price == 2)
        #expect(check.destination == "Lisbon")
    }

    @Test func valuesOfEveryKindRoundTrip() throws {
        let url = try PostgresServer.makeDatabase()
        let container = try ModelContainer(for: Gauge.self, configurations: PostgresStoreConfiguration(url: url))
        let context = ModelContext(container)
        let gauge = Gauge()
        context.insert(gauge)
        try context.save()
        let read = try #require(try ModelContext(container).fetch(FetchDescriptor<Gauge>()).first)
        #expect(read.big == UInt64.max)
        #expect(read.amount == Decimal(string: "12345678901234567890.123456789"))
        #expect(read.bytes == Data([0, 255, 1, 254]))
        #expect(read.link == URL(string: "https://example.com/a%20b?c=d"))
        #expect(read.token == gauge.token)
        #expect(read.readings.count == 3 && read.readings[0] == .infinity && read.readings[1].isNaN && read.readings[2] == -0.5)
        #expect(read.when == gauge.when)
        #expect(read.label == "café")
        // Swift calls the composed and decomposed forms equal; so does the store.
        let decomposed = "cafe\u{301}"
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Gauge>(predicate: #Predicate { $0.label == decomposed })) == 1)
        // A NaN Decimal is refused with a typed error, not a crash.
        gauge.amount = .nan
        #expect(throws: PostgresStoreError.unsupportedValue("Decimal.nan")) { try context.save() }
    }

    @Test func concurrentWritersFromManyTasksAllLand() async throws {
        let url = try PostgresServer.makeDatabase()
        let containers = try (0..<2).map { _ in try ModelContainer(for: schema, configurations: [try PostgresStoreConfiguration(url: url)]) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                let container = containers[writer % 2]
                group.addTask {
                    let context = ModelContext(container)
                    for i in 0..<25 {
                        context.insert(Voyage(
                            code: "W\(writer)-\(i)", destination: "Porto", startDate: StoreConformanceTests.start, price: Double(i),
                            seats: writer))
                        try context.save()
                    }
                }
            }
            try await group.waitForAll()
        }
        let context = ModelContext(containers[0])
        #expect(try context.fetchCount(FetchDescriptor<Voyage>()) == 200)
        #expect(try context.fetchCount(FetchDescriptor<Voyage>(predicate: #Predicate { $0.seats == 3 })) == 25)
    }

    @Test func identifiersAreTheDatabasesAcrossOpens() throws {
        let url = try PostgresServer.makeDatabase()
        let first = try ModelContainer(for: schema, configurations: [try PostgresStoreConfiguration(url: url)])
        let context = ModelContext(first)
        let model = voyage("ID")
        context.insert(model)
        try context.save()
        let id = model.persistentModelID
        let data = try JSONEncoder().encode(id)
        let second = try ModelContainer(for: schema, configurations: [try PostgresStoreConfiguration(url: url)])
        let decoded = try JSONDecoder().decode(PersistentIdentifier.self, from: data)
        #expect((ModelContext(second).model(for: decoded) as? Voyage)?.code == "ID")
        #expect(id.storeIdentifier == decoded.storeIdentifier)
    }

    @Test func theStoreTranslatesWhatSQLCanSayAndRefusesTheRest() throws {
        var configuration = try PostgresStoreConfiguration(url: try PostgresServer.makeDatabase())
        configuration.schema = schema
        let store = try PostgresStore(configuration, migrationPlan: nil)
        let state = EditingState()
        func fetch(_ descriptor: FetchDescriptor<Voyage>) throws -> Int {
            try store.fetch(DataStoreFetchRequest(descriptor: descriptor, editingState: state)).fetchedSnapshots.count
        }
        let codes = ["a", "b"]
        // Translated: no error.
        #expect(try fetch(FetchDescriptor(predicate: #Predicate { $0.price > 1 && ($0.note == nil || $0.seats != 2) })) == 0)
        #expect(try fetch(FetchDescriptor(predicate: #Predicate { codes.contains($0.code) }, sortBy: [SortDescriptor(\.startDate)])) == 0)
        #expect(try fetch(FetchDescriptor(predicate: #Predicate { $0.destination.starts(with: "L") && $0.destination.contains("is") })) == 0)
        // Not translated: the context is asked to filter or sort.
        #expect(throws: DataStoreError.preferInMemoryFilter) { try fetch(FetchDescriptor(predicate: #Predicate { $0.tags.contains("x") })) }
        #expect(throws: DataStoreError.preferInMemoryFilter) {
            try fetch(FetchDescriptor(predicate: #Predicate { $0.legs.contains { $0.order > 1 } }))
        }
        #expect(throws: DataStoreError.preferInMemorySort) { try fetch(FetchDescriptor(sortBy: [SortDescriptor(\.tags.count)])) }
    }

    @Test func badConfigurationsThrowTypedErrors() throws {
        #expect(throws: PostgresStoreError.invalidURL("mysql://x@y/z")) { try PostgresStoreConfiguration(url: "mysql://x@y/z") }
        #expect(throws: PostgresStoreError.invalidURL("postgres://host/db")) { try PostgresStoreConfiguration(url: "postgres://host/db") }
        let parsed = try PostgresStoreConfiguration(url: "postgres://app:secret@db.example:6543/trips")
        #expect(parsed.host == "db.example")
        #expect(parsed.port == 6543)
        #expect(parsed.username == "app")
        #expect(parsed.password == "secret")
        #expect(parsed.database == "trips")
        // Nothing listens on port 1.
        let nowhere = PostgresStoreConfiguration(port: 1, username: "osd", database: "postgres")
        #expect {
            try ModelContainer(for: schema, configurations: [nowhere])
        } throws: { error in
            if case .connection = error as? PostgresStoreError { return true }
            return false
        }
    }
}

@Model
final class Gauge {
    var big: UInt64 = UInt64.max
    var amount: Decimal = Decimal(string: "12345678901234567890.123456789")!
    var bytes = Data([0, 255, 1, 254])
    var link = URL(string: "https://example.com/a%20b?c=d")!
    var token = UUID()
    var readings: [Double] = [.infinity, .nan, -0.5]
    var when = Date(timeIntervalSinceReferenceDate: 123_456_789.123_456_7)
    var label = "café"

    init() {}
}

/// Moving an app's document into PostgreSQL.
@Suite(.enabled(if: PostgresServer.url != nil, "no PostgreSQL server: the import test is skipped"))
struct PostgresImportTests {
    @Test func aDocumentMovesIntoPostgreSQL() throws {
        let schema = Schema([Voyage.self, Leg.self, Traveller.self])
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("osd-import-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("app.store")
        do {
            let context = ModelContext(try ModelContainer(for: schema, configurations: [ModelConfiguration(url: url)]))
            for i in 0..<5 {
                let voyage = Voyage(code: "D\(i)", destination: "Douro", startDate: StoreConformanceTests.start, price: Double(i), seats: i)
                context.insert(voyage)
                voyage.legs = [Leg(title: "D\(i) quay", order: 0)]
            }
            let eva = Traveller(name: "Eva")
            context.insert(eva)
            eva.voyages = try context.fetch(FetchDescriptor<Voyage>(predicate: #Predicate { $0.seats < 2 }))
            try context.save()
        }
        var target = try PostgresStoreConfiguration(url: try PostgresServer.makeDatabase())
        target.schema = schema
        let store = try PostgresStore(target, migrationPlan: nil)
        let source = try DefaultStore(ModelConfiguration(schema: schema, url: url))
        #expect(try store.importModels(from: source, types: [Voyage.self, Leg.self, Traveller.self]) == 11)
        // Again: unique keys update, so the voyages are not doubled.
        _ = try store.importModels(from: source, types: [Voyage.self])

        let context = ModelContext(try ModelContainer(for: schema, configurations: [target]))
        let voyages = try context.fetch(FetchDescriptor<Voyage>(sortBy: [SortDescriptor(\.code)]))
        #expect(voyages.map(\.code) == ["D0", "D1", "D2", "D3", "D4"])
        #expect(voyages.allSatisfy { $0.legs.map(\.title) == ["\($0.code) quay"] })
        let eva = try #require(try context.fetch(FetchDescriptor<Traveller>()).first)
        #expect(eva.voyages.map(\.code).sorted() == ["D0", "D1"])
    }
}
