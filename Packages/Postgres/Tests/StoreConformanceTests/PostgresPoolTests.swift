import Foundation
import OpenSwiftDataPostgres
import SwiftData
import Testing

/// One container's contexts and `@ModelActor`s saving at once over its pool of
/// connections: nothing lost, races on unique keys settled as one save at a time
/// would settle them, violations typed, and the connections closed with the container.
@Suite(.enabled(if: PostgresServer.url != nil, "no PostgreSQL server: PostgresStore's pool tests are skipped"))
struct PostgresPoolTests {
    private let schema = Schema([Voyage.self, Leg.self, Traveller.self])

    private func container(_ url: String, poolSize: Int = PostgresStoreConfiguration.defaultPoolSize) throws -> ModelContainer {
        var configuration = try PostgresStoreConfiguration(url: url)
        configuration.poolSize = poolSize
        return try ModelContainer(for: schema, configurations: [configuration])
    }

    /// Connections open to database `url` (other than psql's own).
    private func connections(to url: String) throws -> Int {
        let name = String(url[url.index(after: url.lastIndex(of: "/")!)...])
        return Int(try PostgresServer.query(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = '\(name)' AND pid <> pg_backend_pid()")) ?? -1
    }

    @Test func manyActorsSaveAtOnceAndNothingIsLost() async throws {
        let url = try PostgresServer.makeDatabase()
        let container = try container(url, poolSize: 3)
        let desks = (0..<16).map { _ in VoyageDesk(modelContainer: container) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (writer, desk) in desks.enumerated() {
                group.addTask { try await desk.book((0..<10).map { "P\(writer)-\($0)" }, seats: writer) }
            }
            try await group.waitForAll()
        }
        let context = ModelContext(container)
        let codes = Set(try context.fetch(FetchDescriptor<Voyage>()).map(\.code))
        #expect(codes.count == 160)
        #expect(codes == Set((0..<16).flatMap { writer in (0..<10).map { "P\(writer)-\($0)" } }))
        #expect(try context.fetchCount(FetchDescriptor<Voyage>(predicate: #Predicate { $0.seats == 7 })) == 10)
        // The pool kept to its size (the connection that opened the store is closed).
        #expect(try connections(to: url) <= 3)
    }

    /// Inserts of one unique key at once upsert onto one row, as they would one after
    /// another: the insert that loses the race on the unique index runs again and
    /// finds the winner's row.
    @Test func insertsOfOneUniqueKeyAtOnceUpsertOntoOneRow() async throws {
        let url = try PostgresServer.makeDatabase()
        let container = try container(url)
        let desks = (0..<12).map { _ in VoyageDesk(modelContainer: container) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (writer, desk) in desks.enumerated() {
                group.addTask { try await desk.book(["SAME"], seats: writer) }
            }
            try await group.waitForAll()
        }
        let voyages = try ModelContext(container).fetch(FetchDescriptor<Voyage>())
        #expect(voyages.count == 1)
        #expect(voyages.first?.code == "SAME")
    }

    /// Renames onto one key at once: one lands, every other save fails with
    /// SwiftData's typed error and changes nothing.
    @Test func renamesOntoOneKeyAtOnceFailWithTheTypedError() async throws {
        let url = try PostgresServer.makeDatabase()
        let container = try container(url)
        let seed = ModelContext(container)
        for i in 0..<8 {
            seed.insert(Voyage(code: "R\(i)", destination: "Porto", startDate: StoreConformanceTests.start, price: 1, seats: i))
        }
        try seed.save()
        let desks = (0..<8).map { _ in VoyageDesk(modelContainer: container) }
        let outcomes = try await withThrowingTaskGroup(of: VoyageDesk.Outcome.self) { group in
            for (i, desk) in desks.enumerated() {
                group.addTask { try await desk.rename("R\(i)", to: "TAKEN") }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 == .saved }.count == 1)
        #expect(outcomes.filter { $0 == .uniqueConstraintViolation }.count == 7)
        let codes = try ModelContext(container).fetch(FetchDescriptor<Voyage>()).map(\.code)
        #expect(codes.count == 8)
        #expect(codes.filter { $0 == "TAKEN" }.count == 1)
    }

    @Test func releasingTheContainerClosesItsConnections() async throws {
        let url = try PostgresServer.makeDatabase()
        do {
            let container = try container(url)
            let desks = (0..<4).map { _ in VoyageDesk(modelContainer: container) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (writer, desk) in desks.enumerated() {
                    group.addTask { try await desk.book(["C\(writer)"], seats: writer) }
                }
                try await group.waitForAll()
            }
            #expect(try connections(to: url) >= 1)
        }
        // The pool's task closes them once the store is gone (not waited for).
        let deadline = Date().addingTimeInterval(10)
        var open = try connections(to: url)
        while open > 0, Date() < deadline {
            try await Task.sleep(for: .milliseconds(50))
            open = try connections(to: url)
        }
        #expect(open == 0)
    }

    @Test func aPoolOfNoConnectionsIsRefused() throws {
        var configuration = try PostgresStoreConfiguration(url: "postgres://osd@127.0.0.1:1/none")
        configuration.poolSize = 0
        #expect(throws: PostgresStoreError.invalidConfiguration("poolSize is 0: at least 1 connection")) {
            try ModelContainer(for: schema, configurations: [configuration])
        }
    }
}

/// A writer on an actor of its own, as an app's background work saves.
@ModelActor
actor VoyageDesk {
    enum Outcome: Sendable, Equatable {
        case saved
        case uniqueConstraintViolation
        case failed(String)
    }

    /// Inserts a voyage of each code, one save each.
    func book(_ codes: [String], seats: Int) throws {
        for code in codes {
            modelContext.insert(Voyage(code: code, destination: "Porto", startDate: StoreConformanceTests.start, price: 1, seats: seats))
            try modelContext.save()
        }
    }

    /// Gives voyage `code` the code `new`, and says how its save ended.
    func rename(_ code: String, to new: String) throws -> Outcome {
        let voyage = try #require(try modelContext.fetch(FetchDescriptor<Voyage>(predicate: #Predicate { $0.code == code })).first)
        voyage.code = new
        do {
            try modelContext.save()
            return .saved
        } catch let error as SwiftDataError where error == .uniqueConstraintViolation {
            modelContext.rollback()
            return .uniqueConstraintViolation
        } catch {
            return .failed("\(error)")
        }
    }
}
