import Foundation
import OpenSwiftDataPostgres
import SwiftData
import Testing

/// Fetches that come again run as prepared statements (`PostgresStore+Prepared`).
@Suite(.enabled(if: PostgresServer.url != nil, "no PostgreSQL server: PostgresStore's own tests are skipped"))
struct PostgresPreparedTests {
    /// Each kind of parameter a predicate binds, fetched three times: the first
    /// runs unnamed, the others prepared, and all three return what the rows say.
    /// The server's log (statements of this database only) shows the prepared runs.
    @Test func aFetchThatComesAgainRunsPreparedAndReturnsTheSame() throws {
        let url = try PostgresServer.makeDatabase()
        let database = String(url[url.index(after: url.lastIndex(of: "/")!)...])
        // New sessions of this database log their statements, prepared ones by name.
        _ = try PostgresServer.query("ALTER DATABASE \(database) SET log_statement = 'all'")
        let container = try ModelContainer(
            for: Voyage.self, Leg.self, Traveller.self, configurations: try PostgresStoreConfiguration(url: url))
        let start = StoreConformanceTests.start
        let context = ModelContext(container)
        for i in 0..<30 {
            let voyage = Voyage(
                code: "P\(i)", destination: ["Lisbon", "Porto", "Faro"][i % 3], startDate: start.addingTimeInterval(Double(i) * 3_600),
                price: Double(i) * 2.5, seats: i % 5, isFavorite: i % 2 == 0)
            voyage.note = i % 4 == 0 ? nil : "note \(i % 4)"
            context.insert(voyage)
        }
        try context.save()

        func codes(_ predicate: Predicate<Voyage>, limit: Int? = nil) throws -> [[String]] {
            try (0..<3).map { _ in
                var descriptor = FetchDescriptor(predicate: predicate, sortBy: [SortDescriptor(\.code)])
                descriptor.fetchLimit = limit
                // A fresh context each time: the rows come from the server.
                return try ModelContext(container).fetch(descriptor).map(\.code)
            }
        }
        func expectThrice(_ got: [[String]], _ want: [String], sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(got == [want, want, want], sourceLocation: sourceLocation)
        }
        let all = (0..<30).map { "P\($0)" }.sorted()
        let key = "P7"
        expectThrice(try codes(#Predicate { $0.code == key }), ["P7"])
        let from = start.addingTimeInterval(10 * 3_600), to = start.addingTimeInterval(12 * 3_600)
        expectThrice(try codes(#Predicate { $0.startDate >= from && $0.startDate <= to }), ["P10", "P11", "P12"])
        let low = 10.0, seats = 3
        expectThrice(
            try codes(#Predicate { $0.price > low && $0.seats == seats }),
            (0..<30).filter { Double($0) * 2.5 > low && $0 % 5 == seats }.map { "P\($0)" }.sorted())
        let wanted = ["P1", "P2", "P29", "none"]
        expectThrice(try codes(#Predicate { wanted.contains($0.code) }), ["P1", "P2", "P29"])
        let favorite = true
        expectThrice(try codes(#Predicate { $0.isFavorite == favorite }, limit: 4), all.filter { Int($0.dropFirst())! % 2 == 0 }.prefix(4).map { $0 })
        let note: String? = nil
        expectThrice(try codes(#Predicate { $0.note == note }), all.filter { Int($0.dropFirst())! % 4 == 0 })
        let someNote: String? = "note 1"
        expectThrice(try codes(#Predicate { $0.note == someNote }), all.filter { Int($0.dropFirst())! % 4 == 1 })
        #expect(try ModelContext(container).fetchCount(FetchDescriptor(predicate: #Predicate<Voyage> { $0.code == key })) == 1)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor(predicate: #Predicate<Voyage> { $0.code == key })) == 1)

        // The server's log, when the tests started the server (not with OSD_POSTGRES_URL).
        guard let folder = try PostgresServer.shared.get().folder else { return }
        let log = try String(contentsOfFile: folder + "/server.log", encoding: .utf8)
        #expect(log.contains("execute osd_fetch_"))
    }
}
