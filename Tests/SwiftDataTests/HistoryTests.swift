import Foundation
import SwiftData
import Testing

@Model
final class Flight {
    @Attribute(.preserveValueOnDeletion)
    var airlineBookingRef: String
    var destination: String
    var flightTime: Int
    @Relationship(deleteRule: .cascade, inverse: \Leg.flight)
    var legs: [Leg] = []

    init(airlineBookingRef: String, destination: String, flightTime: Int) {
        self.airlineBookingRef = airlineBookingRef
        self.destination = destination
        self.flightTime = flightTime
    }
}

@Model
final class Leg {
    @Attribute(.unique) var code: String
    var flight: Flight?

    init(code: String) {
        self.code = code
    }
}

/// Issue #14, point 1 and 2: SwiftData's history, written as the history article
/// ("Fetching and filtering time-based model changes") uses it.
@Suite struct HistoryTests {
    private func container(at url: URL? = nil) throws -> ModelContainer {
        let configuration = url.map { ModelConfiguration(url: $0) } ?? ModelConfiguration(isStoredInMemoryOnly: true)
        return try ModelContainer(for: Flight.self, Leg.self, configurations: configuration)
    }

    private func insertFlight(_ ref: String, into context: ModelContext, author: String? = nil) throws -> Flight {
        context.author = author
        let flight = Flight(airlineBookingRef: ref, destination: "Oslo", flightTime: 90)
        context.insert(flight)
        try context.save()
        return flight
    }

    private func allHistory(_ context: ModelContext) throws -> [DefaultHistoryTransaction] {
        try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
    }

    @Test func eachSaveIsOneTransactionOfItsInserts() throws {
        let context = ModelContext(try container())
        let flights = [
            Flight(airlineBookingRef: "A1", destination: "Oslo", flightTime: 90),
            Flight(airlineBookingRef: "A2", destination: "Rome", flightTime: 150),
        ]
        flights.forEach(context.insert)
        try context.save()
        _ = try insertFlight("A3", into: context)

        let transactions = try allHistory(context)
        #expect(transactions.count == 2)
        let first = try #require(transactions.first)
        let inserted = first.changes.compactMap { change -> PersistentIdentifier? in
            guard case let .insert(insert) = change else { return nil }
            return insert.changedPersistentIdentifier
        }
        #expect(inserted == flights.map(\.persistentModelID))
        #expect(first.changes.allSatisfy { if case .insert(let i) = $0 { i is DefaultHistoryInsert<Flight> } else { false } })
        #expect(transactions[0].token < transactions[1].token)
        #expect(transactions[0].timestamp <= transactions[1].timestamp)
        #expect(first.storeIdentifier == flights[0].persistentModelID.storeIdentifier)
        #expect(first.author == nil)
    }

    @Test func theAuthorFilterReturnsOnlyThatAuthorsTransactions() throws {
        let context = ModelContext(try container())
        _ = try insertFlight("A1", into: context, author: "app")
        _ = try insertFlight("W1", into: context, author: "widget")
        _ = try insertFlight("A2", into: context, author: "app")
        _ = try insertFlight("W2", into: context, author: "widget")

        var descriptor = HistoryDescriptor<DefaultHistoryTransaction>()
        descriptor.predicate = #Predicate { $0.author == "widget" }
        let fromWidget = try context.fetchHistory(descriptor)
        #expect(fromWidget.map(\.author) == ["widget", "widget"])

        // Author and token together, as the article's first example combines them.
        let token = fromWidget[0].token
        descriptor.predicate = #Predicate { $0.token > token && $0.author == "widget" }
        #expect(try context.fetchHistory(descriptor).map(\.token) == [fromWidget[1].token])
    }

    @Test func aPredicateOutsideTheTokenAndAuthorTermsStillFilters() throws {
        let context = ModelContext(try container())
        _ = try insertFlight("A1", into: context, author: "app")
        let two = [Flight(airlineBookingRef: "B1", destination: "Oslo", flightTime: 1),
                   Flight(airlineBookingRef: "B2", destination: "Oslo", flightTime: 2)]
        two.forEach(context.insert)
        try context.save()

        let descriptor = HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.changes.count > 1 })
        let result = try context.fetchHistory(descriptor)
        #expect(result.count == 1)
        #expect(result.first?.changes.count == 2)
        #expect(result.first?.author == "app", "a context keeps its author for later saves")
    }

    @Test func updatesNameTheChangedAttributes() throws {
        let context = ModelContext(try container())
        let flight = try insertFlight("A1", into: context)
        let token = try #require(try allHistory(context).last?.token)

        flight.flightTime = 95
        try context.save()
        flight.destination = "Bergen"
        flight.flightTime = 60
        try context.save()

        let descriptor = HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > token })
        var updatedFlightTimeOnly: [PersistentIdentifier] = []
        var attributeCounts: [Int] = []
        for transaction in try context.fetchHistory(descriptor) {
            for case let .update(change) in transaction.changes {
                let update = try #require(change as? DefaultHistoryUpdate<Flight>)
                attributeCounts.append(update.updatedAttributes.count)
                guard update.updatedAttributes.count == 1, update.updatedAttributes.contains(\.flightTime) else { continue }
                updatedFlightTimeOnly.append(update.changedPersistentIdentifier)
            }
        }
        #expect(attributeCounts == [1, 2])
        #expect(updatedFlightTimeOnly == [flight.persistentModelID])
    }

    @Test func savingTheSameValueIsNoChange() throws {
        let context = ModelContext(try container())
        let flight = try insertFlight("A1", into: context)
        flight.flightTime = 90
        try context.save()
        #expect(try allHistory(context).count == 1)
    }

    @Test func relationshipChangesAndCascadesAreRecorded() throws {
        let context = ModelContext(try container())
        let flight = try insertFlight("A1", into: context)
        let leg = Leg(code: "OSL-BGO")
        context.insert(leg)
        leg.flight = flight
        try context.save()

        let linking = try #require(try allHistory(context).last)
        let inserts = linking.changes.filter { if case .insert = $0 { true } else { false } }
        #expect(inserts.map(\.changedPersistentIdentifier) == [leg.persistentModelID])
        let flightUpdate = linking.changes.compactMap { change -> DefaultHistoryUpdate<Flight>? in
            if case let .update(update) = change { return update as? DefaultHistoryUpdate<Flight> }
            return nil
        }
        #expect(flightUpdate.count == 1)
        #expect(flightUpdate.first?.updatedAttributes.contains(\.legs) == true)

        let legID = leg.persistentModelID
        context.delete(flight)
        try context.save()
        let deleting = try #require(try allHistory(context).last)
        let deleted = Set(deleting.changes.compactMap { change -> PersistentIdentifier? in
            if case let .delete(delete) = change { return delete.changedPersistentIdentifier }
            return nil
        })
        #expect(deleted == [flight.persistentModelID, legID])
    }

    @Test func aTombstoneKeepsThePreservedValuesOnly() throws {
        let context = ModelContext(try container())
        let flight = try insertFlight("XK-4411", into: context)
        let id = flight.persistentModelID
        context.delete(flight)
        try context.save()

        let deletion = try #require(try allHistory(context).last)
        var bookingRef: String?
        var preservedCount = 0
        for case let .delete(change) in deletion.changes {
            let delete = try #require(change as? DefaultHistoryDelete<Flight>)
            #expect(delete.changedPersistentIdentifier == id)
            bookingRef = delete.tombstone[\.airlineBookingRef] as? String
            #expect(delete.tombstone[\.destination] == nil)
            preservedCount = Array(delete.tombstone).count
        }
        #expect(bookingRef == "XK-4411")
        #expect(preservedCount == 1)
    }

    @Test func anUpsertIsAnUpdate() throws {
        let context = ModelContext(try container())
        context.insert(Leg(code: "OSL-BGO"))
        try context.save()
        context.insert(Leg(code: "OSL-BGO"))
        try context.save()
        let transactions = try allHistory(context)
        #expect(transactions.count == 1, "the second insert stored the same values: no change")

        let flight = try insertFlight("A1", into: context)
        let leg = Leg(code: "OSL-BGO")
        leg.flight = flight
        context.insert(leg)
        try context.save()
        let upsert = try #require(try allHistory(context).last)
        #expect(!upsert.changes.contains { if case .insert = $0 { true } else { false } })
        #expect(upsert.changes.contains { change in
            if case let .update(update) = change, let legUpdate = update as? DefaultHistoryUpdate<Leg> {
                return legUpdate.updatedAttributes.contains(\.flight)
            }
            return false
        })
    }

    @Test func fetchLimitAndSortApply() throws {
        let context = ModelContext(try container())
        for ref in ["A", "B", "C", "D"] { _ = try insertFlight(ref, into: context) }
        let all = try allHistory(context)

        var descriptor = HistoryDescriptor<DefaultHistoryTransaction>()
        descriptor.fetchLimit = 2
        #expect(try context.fetchHistory(descriptor).map(\.token) == Array(all.prefix(2).map(\.token)))

        descriptor.sortBy = [SortDescriptor(\.transactionIdentifier, order: .reverse)]
        #expect(try context.fetchHistory(descriptor).map(\.token) == [all[3].token, all[2].token])
    }

    @Test func tokensRangeBothWays() throws {
        let context = ModelContext(try container())
        for ref in ["A", "B", "C", "D"] { _ = try insertFlight(ref, into: context) }
        let tokens = try allHistory(context).map(\.token)
        let low = tokens[0], high = tokens[3], middle = tokens[2]

        func fetch(_ predicate: Predicate<DefaultHistoryTransaction>) throws -> [DefaultHistoryToken] {
            try context.fetchHistory(HistoryDescriptor(predicate: predicate)).map(\.token)
        }
        #expect(try fetch(#Predicate { $0.token > low && $0.token < high }) == [tokens[1], tokens[2]])
        #expect(try fetch(#Predicate { $0.token >= low && $0.token <= middle }) == Array(tokens[0...2]))
        #expect(try fetch(#Predicate { $0.token == middle }) == [middle])
        #expect(try fetch(#Predicate { low < $0.token }) == Array(tokens[1...]))
        #expect(try fetch(#Predicate { $0.token > high }) == [])
    }

    @Test func theTokenIsCodableAndHistorySurvivesReopeningAndCompaction() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = folder.file("flights.store")
        let tokenData: Data
        do {
            let context = ModelContext(try container(at: url))
            _ = try insertFlight("A1", into: context, author: "app")
            _ = try insertFlight("W1", into: context, author: "widget")
            let last = try #require(try allHistory(context).last)
            tokenData = try JSONEncoder().encode(last.token)
            _ = try insertFlight("A2", into: context, author: "app")
        }
        let token = try JSONDecoder().decode(History.DefaultToken.self, from: tokenData)
        let descriptor = HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > token })
        do {
            let container = try container(at: url)
            let context = ModelContext(container)
            let newer = try context.fetchHistory(descriptor)
            #expect(newer.map(\.author) == ["app"])
            #expect(try allHistory(context).map(\.author) == ["app", "widget", "app"])
            try container.compactDocument()
        }
        let context = ModelContext(try container(at: url))
        #expect(try allHistory(context).map(\.author) == ["app", "widget", "app"])
        let flights = try context.fetch(FetchDescriptor<Flight>(sortBy: [SortDescriptor(\.airlineBookingRef)]))
        let inserted = try context.fetchHistory(descriptor).flatMap(\.changes).map(\.changedPersistentIdentifier)
        #expect(flights.map(\.airlineBookingRef) == ["A1", "A2", "W1"])
        #expect(inserted == [flights[1].persistentModelID])
    }

    @Test func deletingHistoryExpiresOlderTokensDurably() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = folder.file("flights.store")
        let tokens: [DefaultHistoryToken]
        do {
            let context = ModelContext(try container(at: url))
            for ref in ["A", "B", "C"] { _ = try insertFlight(ref, into: context) }
            tokens = try allHistory(context).map(\.token)
            let cutoff = tokens[2]
            try context.deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token < cutoff }))
            #expect(try allHistory(context).map(\.token) == [tokens[2]])
        }
        // After reopening (replaying the journal) and after compaction alike.
        for compact in [false, true] {
            let container = try container(at: url)
            let context = ModelContext(container)
            #expect(try allHistory(context).map(\.token) == [tokens[2]])
            let stale = tokens[0]
            #expect(throws: SwiftDataError.historyTokenExpired) {
                try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > stale }))
            }
            // The token of the latest deleted transaction lost nothing after it.
            let latestDeleted = tokens[1]
            let after = try context.fetchHistory(
                HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > latestDeleted }))
            #expect(after.map(\.token) == [tokens[2]])
            if compact { try container.compactDocument() }
        }
        // The models themselves are untouched.
        let context = ModelContext(try container(at: url))
        #expect(try context.fetchCount(FetchDescriptor<Flight>()) == 3)
    }

    @Test func deletingByAuthorKeepsTheOthers() throws {
        let context = ModelContext(try container())
        _ = try insertFlight("A1", into: context, author: "app")
        _ = try insertFlight("W1", into: context, author: "widget")
        _ = try insertFlight("A2", into: context, author: "app")
        try context.deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.author == "widget" }))
        #expect(try allHistory(context).map(\.author) == ["app", "app"])
    }

    @Test func deleteAllDataExpiresEveryEarlierToken() throws {
        let container = try container()
        let context = ModelContext(container)
        _ = try insertFlight("A1", into: context)
        _ = try insertFlight("A2", into: context)
        let first = try #require(try allHistory(context).first?.token)
        container.deleteAllData()
        #expect(try allHistory(context).isEmpty)
        #expect(throws: SwiftDataError.historyTokenExpired) {
            try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > first }))
        }
    }

    @Test func aReadOnlyContainerCannotDeleteHistory() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = folder.file("flights.store")
        do {
            _ = try insertFlight("A1", into: ModelContext(try container(at: url)))
        }
        let readOnly = try ModelContainer(for: Flight.self, Leg.self, configurations: ModelConfiguration(url: url, allowsSave: false))
        let context = ModelContext(readOnly)
        #expect(try allHistory(context).count == 1)
        #expect(throws: SwiftDataError.readOnlyConfiguration) {
            try context.deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        }
    }

    @Test func historyFollowsALightweightMigration() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = folder.file("accounts.store")
        do {
            let context = ModelContext(try ModelContainer(for: AccountsV1.Account.self, configurations: ModelConfiguration(url: url)))
            let account = AccountsV1.Account(number: "1", owner: "Ann", balance: 10)
            context.insert(account)
            try context.save()
            account.owner = "Anne"
            try context.save()
            account.memo = "gone in V2"
            try context.save()
        }
        let context = ModelContext(try ModelContainer(
            for: AccountsV2.Account.self, AccountsV2.Budget.self, configurations: ModelConfiguration(url: url)))
        let transactions = try allHistory(context)
        // The memo's update went with the memo; the owner's is the holder's now.
        #expect(transactions.count == 2)
        let account = try #require(try context.fetch(FetchDescriptor<AccountsV2.Account>()).first)
        #expect(transactions.first?.changes.map(\.changedPersistentIdentifier) == [account.persistentModelID])
        let update = try #require(transactions.last?.changes.first)
        guard case let .update(change) = update, let accountUpdate = change as? DefaultHistoryUpdate<AccountsV2.Account> else {
            Issue.record("expected an update of an Account, got \(update)")
            return
        }
        #expect(accountUpdate.updatedAttributes.count == 1)
        #expect(accountUpdate.updatedAttributes.contains(\.holder))
    }

    @Test func termsUnderOrAndNotAreEvaluatedNotTakenAsBounds() throws {
        let context = ModelContext(try container())
        for ref in ["A", "B", "C", "D"] { _ = try insertFlight(ref, into: context) }
        let tokens = try allHistory(context).map(\.token)
        let second = tokens[1], third = tokens[2]
        func fetch(_ predicate: Predicate<DefaultHistoryTransaction>) throws -> [DefaultHistoryToken] {
            try context.fetchHistory(HistoryDescriptor(predicate: predicate)).map(\.token)
        }
        #expect(try fetch(#Predicate { $0.token < second || $0.token > third }) == [tokens[0], tokens[3]])
        #expect(try fetch(#Predicate { !($0.token > second) }) == [tokens[0], tokens[1]])
        #expect(try fetch(#Predicate { $0.token > second && ($0.author == nil || $0.author == "x") }) == [tokens[2], tokens[3]])
    }

    @Test func boundsAtTheEdgesOfTheTokenRange() throws {
        let context = ModelContext(try container())
        for ref in ["A", "B", "C"] { _ = try insertFlight(ref, into: context) }
        let tokens = try allHistory(context).map(\.token)
        let second = tokens[1]
        try context.deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token < second }))

        func fetch(_ predicate: Predicate<DefaultHistoryTransaction>) throws -> [DefaultHistoryToken] {
            try context.fetchHistory(HistoryDescriptor(predicate: predicate)).map(\.token)
        }
        // Asking from the very start, however it is written, asks for what was deleted.
        for start in [DefaultHistoryToken(id: -1), DefaultHistoryToken(id: 0)] {
            #expect(throws: SwiftDataError.historyTokenExpired) { try fetch(#Predicate { $0.token > start }) }
            #expect(throws: SwiftDataError.historyTokenExpired) { try fetch(#Predicate { $0.token >= start }) }
        }
        let last = DefaultHistoryToken(id: .max), negative = DefaultHistoryToken(id: -5)
        #expect(try fetch(#Predicate { $0.token > last }) == [])
        #expect(try fetch(#Predicate { $0.token <= negative }) == [])
        #expect(try fetch(#Predicate { $0.token < last }) == [tokens[1], tokens[2]])
        #expect(try allHistory(context).map(\.token) == [tokens[1], tokens[2]])
    }

    @Test func aTornLastSaveTakesItsTransactionWithIt() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = folder.file("flights.store")
        do {
            let context = ModelContext(try container(at: url))
            for ref in ["A", "B", "C"] { _ = try insertFlight(ref, into: context, author: ref) }
        }
        // Cut the last frame short, as a crash in the middle of the save would.
        let bytes = try Data(contentsOf: url)
        try bytes.prefix(bytes.count - 7).write(to: url)
        let context = ModelContext(try container(at: url))
        #expect(try allHistory(context).map(\.author) == ["A", "B"])
        #expect(try flights(context) == ["A", "B"])
        _ = try insertFlight("D", into: context, author: "D")
        #expect(try allHistory(context).map(\.author) == ["A", "B", "D"])
    }

    private func flights(_ context: ModelContext) throws -> [String] {
        try context.fetch(FetchDescriptor<Flight>(sortBy: [SortDescriptor(\.airlineBookingRef)])).map(\.airlineBookingRef)
    }
}
