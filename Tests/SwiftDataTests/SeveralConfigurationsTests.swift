import Foundation
import OpenSwiftDataStore
import SwiftData
import Testing

// Two groups of types with no relationship between them, as in Apple's WWDC23
// sample (trips in one store, people in another).
@Model final class CTrip {
    @Attribute(.unique) var name: String
    @Relationship(deleteRule: .cascade, inverse: \CStop.trip) var stops: [CStop] = []
    init(name: String) { self.name = name }
}

@Model final class CStop {
    var place: String
    var trip: CTrip?
    init(place: String) { self.place = place }
}

@Model final class CPerson {
    @Attribute(.unique) var name: String
    @Attribute(.externalStorage) var photo: Data?
    init(name: String, photo: Data? = nil) {
        self.name = name
        self.photo = photo
    }
}

@Model final class CCacheEntry {
    var key: String
    init(key: String) { self.key = key }
}

/// A person with a trip: a relationship that would cross two stores.
@Model final class CTraveller {
    var name: String
    var trip: CTrip?
    init(name: String) { self.name = name }
}

/// Several `ModelConfiguration`s in one container: each keeps its own entities in
/// its own file (Docs/Decisions.md, "Configuration").
@Suite struct SeveralConfigurationsTests {
    let folder: TemporaryFolder
    init() throws { folder = try TemporaryFolder("osd-configs") }

    var tripsURL: URL { folder.file("trips.store") }
    var peopleURL: URL { folder.file("people.store") }
    static let schema = Schema([CTrip.self, CStop.self, CPerson.self])

    func container(peopleAllowSave: Bool = true) throws -> ModelContainer {
        let trips = ModelConfiguration("trips", schema: Schema([CTrip.self, CStop.self]), url: tripsURL)
        let people = ModelConfiguration("people", schema: Schema([CPerson.self]), url: peopleURL, allowsSave: peopleAllowSave)
        return try ModelContainer(for: Self.schema, configurations: trips, people)
    }

    /// The names of the entities stored in the file at `url`, read as `osd` reads it.
    func storedEntities(_ url: URL) throws -> [String: Int] {
        let contents = try DocumentReader.read(path: url.path)
        var counts: [String: Int] = [:]
        for (e, entity) in contents.schema.entities.enumerated() { counts[entity.name] = contents.version.tables[e].count }
        return counts
    }

    func fill(_ context: ModelContext) throws {
        let lisbon = CTrip(name: "Lisbon")
        context.insert(lisbon)
        for place in ["Alfama", "Belém"] {
            let stop = CStop(place: place)
            context.insert(stop)
            stop.trip = lisbon
        }
        context.insert(CPerson(name: "Ann", photo: Data(repeating: 7, count: 20_000)))
        context.insert(CPerson(name: "Bo"))
        try context.save()
    }

    @Test func eachConfigurationKeepsItsEntitiesInItsOwnFile() throws {
        defer { folder.remove() }
        do {
            let container = try container()
            try fill(ModelContext(container))
        }
        #expect(try storedEntities(tripsURL) == ["CTrip": 1, "CStop": 2])
        #expect(try storedEntities(peopleURL) == ["CPerson": 2])
        // Each file opened alone holds exactly its entities, blobs included.
        let people = try ModelContainer(for: CPerson.self, configurations: ModelConfiguration(url: peopleURL))
        let found = try ModelContext(people).fetch(FetchDescriptor<CPerson>(sortBy: [SortDescriptor(\.name)]))
        #expect(found.map(\.name) == ["Ann", "Bo"])
        #expect(found.first?.photo == Data(repeating: 7, count: 20_000))
        let trips = try ModelContainer(
            for: CTrip.self, CStop.self, configurations: ModelConfiguration(url: tripsURL))
        let tripsContext = ModelContext(trips)
        let lisbon = try tripsContext.fetch(FetchDescriptor<CTrip>()).first
        #expect(lisbon?.stops.map(\.place).sorted() == ["Alfama", "Belém"])
    }

    @Test func editsDeletesAndCascadesSurviveReopen() throws {
        defer { folder.remove() }
        do {
            let container = try container()
            let context = ModelContext(container)
            try fill(context)
            let bo = try context.fetch(FetchDescriptor<CPerson>(predicate: #Predicate { $0.name == "Bo" })).first!
            bo.photo = Data([1, 2, 3])
            let lisbon = try context.fetch(FetchDescriptor<CTrip>()).first!
            lisbon.stops.first { $0.place == "Alfama" }.map(context.delete)
            context.insert(CTrip(name: "Oslo"))
            try context.save()
            // An upsert by unique key in the second file.
            context.insert(CPerson(name: "Ann"))
            try context.save()
        }
        for _ in 0..<2 {
            let container = try container()
            let context = ModelContext(container)
            let people = try context.fetch(FetchDescriptor<CPerson>(sortBy: [SortDescriptor(\.name)]))
            #expect(people.map(\.name) == ["Ann", "Bo"])
            #expect(people.map(\.photo) == [nil, Data([1, 2, 3])])
            let trips = try context.fetch(FetchDescriptor<CTrip>(sortBy: [SortDescriptor(\.name)]))
            #expect(trips.map(\.name) == ["Lisbon", "Oslo"])
            #expect(trips.first?.stops.map(\.place) == ["Belém"])
            // A cascade delete stays within its file.
            if trips.count == 2 {
                context.delete(trips[0])
                try context.save()
                #expect(try context.fetchCount(FetchDescriptor<CStop>()) == 0)
                context.insert(CTrip(name: "Lisbon"))
                context.insert(CStop(place: "Belém"))
                let again = try context.fetch(FetchDescriptor<CTrip>(predicate: #Predicate { $0.name == "Lisbon" })).first!
                again.stops = try context.fetch(FetchDescriptor<CStop>())
                try container.compactDocument()
                try context.save()
            }
        }
        #expect(try storedEntities(tripsURL) == ["CTrip": 2, "CStop": 1])
        #expect(try storedEntities(peopleURL) == ["CPerson": 2])
    }

    @Test func identifiersNameTheStoreOfTheirFile() throws {
        defer { folder.remove() }
        let (tripID, personID): (PersistentIdentifier, PersistentIdentifier)
        do {
            let container = try container()
            let context = ModelContext(container)
            try fill(context)
            tripID = try context.fetch(FetchDescriptor<CTrip>()).first!.persistentModelID
            personID = try context.fetch(FetchDescriptor<CPerson>()).first!.persistentModelID
            #expect(tripID.storeIdentifier != personID.storeIdentifier)
        }
        do {
            let container = try container()
            let context = ModelContext(container)
            #expect((context.model(for: tripID) as? CTrip)?.name == "Lisbon")
            #expect((context.model(for: personID) as? CPerson)?.name == "Ann")
            let byID = try context.fetch(FetchDescriptor<CPerson>(predicate: #Predicate { $0.persistentModelID == personID }))
            #expect(byID.map(\.name) == ["Ann"])
        }
        // The identifier of the file opened alone is the same.
        let people = try ModelContainer(for: CPerson.self, configurations: ModelConfiguration(url: peopleURL))
        let peopleContext = ModelContext(people)
        #expect((peopleContext.model(for: personID) as? CPerson)?.name == "Ann")
    }

    @Test func historyJoinsTheFilesAndItsTokensOutliveAReopen() throws {
        defer { folder.remove() }
        let token: DefaultHistoryToken
        do {
            let container = try container()
            let context = ModelContext(container)
            try fill(context)
            let transactions = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
            // One save that wrote both files is one transaction.
            #expect(transactions.count == 1)
            #expect(Set(transactions.first?.changes.map(\.changedPersistentIdentifier.entityName) ?? []) == ["CTrip", "CStop", "CPerson"])
            token = try #require(transactions.last?.token)
            context.insert(CPerson(name: "Cy"))
            try context.save()
        }
        let container = try container()
        let context = ModelContext(container)
        let all = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        #expect(all.count == 2)
        #expect(all.last?.changes.map(\.changedPersistentIdentifier.entityName) == ["CPerson"])
        var after = HistoryDescriptor<DefaultHistoryTransaction>()
        after.predicate = #Predicate { $0.token > token }
        let later = try context.fetchHistory(after)
        #expect(later.count == 1)
        context.insert(CTrip(name: "Rome"))
        try context.save()
        #expect(try context.fetchHistory(after).count == 2)
        // Deleting history reaches every file.
        try context.deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        #expect(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).isEmpty)
    }

    @Test func deletedHistoryStaysDeletedAfterCompactionAndReopen() throws {
        defer { folder.remove() }
        do {
            let container = try container()
            let context = ModelContext(container)
            try fill(context)
            context.insert(CPerson(name: "Cy"))
            try context.save()
            var first = HistoryDescriptor<DefaultHistoryTransaction>()
            first.fetchLimit = 1
            try context.deleteHistory(first)
            #expect(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).count == 1)
        }
        do {
            let container = try container()
            #expect(try ModelContext(container).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).count == 1)
            try container.compactDocument()
        }
        let history = try ModelContext(try container()).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        #expect(history.map { $0.changes.map(\.changedPersistentIdentifier.entityName) } == [["CPerson"]])
    }

    @Test func entitiesOfAnInMemoryConfigurationAreNotWritten() throws {
        defer { folder.remove() }
        func open() throws -> ModelContainer {
            try ModelContainer(
                for: Schema([CTrip.self, CStop.self, CCacheEntry.self]),
                configurations: ModelConfiguration("cache", schema: Schema([CCacheEntry.self]), isStoredInMemoryOnly: true),
                ModelConfiguration("trips", url: tripsURL))
        }
        do {
            let context = ModelContext(try open())
            context.insert(CCacheEntry(key: "k"))
            context.insert(CTrip(name: "Lisbon"))
            try context.save()
            #expect(try context.fetchCount(FetchDescriptor<CCacheEntry>()) == 1)
        }
        #expect(try storedEntities(tripsURL) == ["CTrip": 1, "CStop": 0])
        let context = ModelContext(try open())
        #expect(try context.fetchCount(FetchDescriptor<CCacheEntry>()) == 0)
        #expect(try context.fetchCount(FetchDescriptor<CTrip>()) == 1)
    }

    @Test func aReadOnlyConfigurationRefusesOnlyItsOwnEntities() throws {
        defer { folder.remove() }
        do { try fill(ModelContext(try container())) }
        do {
            let container = try container(peopleAllowSave: false)
            let context = ModelContext(container)
            context.insert(CTrip(name: "Oslo"))
            try context.save()
            context.insert(CPerson(name: "Cy"))
            context.insert(CTrip(name: "Rome"))
            // Nothing of the save is written: not Rome either.
            #expect(throws: DocumentError.readOnly(path: peopleURL.standardizedFileURL.path)) { try context.save() }
            context.rollback()
        }
        let reopened = ModelContext(try self.container())
        #expect(try reopened.fetch(FetchDescriptor<CTrip>(sortBy: [SortDescriptor(\.name)])).map(\.name) == ["Lisbon", "Oslo"])
        #expect(try reopened.fetchCount(FetchDescriptor<CPerson>()) == 2)
    }

    @Test func aRelationshipAcrossStoresIsRefusedWhenTheContainerOpens() throws {
        defer { folder.remove() }
        let error = #expect(throws: SwiftDataError.self) {
            try ModelContainer(
                for: Schema([CTrip.self, CStop.self, CTraveller.self]),
                configurations: ModelConfiguration("trips", schema: Schema([CTrip.self, CStop.self]), url: tripsURL),
                ModelConfiguration("people", schema: Schema([CTraveller.self]), url: peopleURL))
        }
        #expect(error == SwiftDataError.loadIssueModelContainer)
        #expect(error?.description.contains("CTraveller.trip") == true)
        #expect(!FileManager.default.fileExists(atPath: tripsURL.path))
    }

    @Test func configurationsNamingOneFileShareIt() throws {
        defer { folder.remove() }
        func open() throws -> ModelContainer {
            try ModelContainer(
                for: Self.schema,
                configurations: ModelConfiguration("a", schema: Schema([CTrip.self, CStop.self]), url: tripsURL),
                ModelConfiguration("b", schema: Schema([CPerson.self]), url: tripsURL))
        }
        do { try fill(ModelContext(try open())) }
        #expect(try storedEntities(tripsURL) == ["CTrip": 1, "CStop": 2, "CPerson": 2])
        #expect(try ModelContext(try open()).fetchCount(FetchDescriptor<CPerson>()) == 2)
    }

    @Test func anEntityStoredInAnotherFileIsReportedNotHidden() throws {
        defer { folder.remove() }
        // A store from a build that kept every entity in the first file.
        do { try fill(ModelContext(try ModelContainer(for: Self.schema, configurations: ModelConfiguration(url: tripsURL)))) }
        let error = #expect(throws: SwiftDataError.self) { try container() }
        #expect(error?.description.contains("CPerson") == true)
        // Nothing was modified: the file still opens alone with every entity.
        #expect(try storedEntities(tripsURL) == ["CTrip": 1, "CStop": 2, "CPerson": 2])
    }

    @Test func deleteAllDataWithAReadOnlyFileRemovesNothing() throws {
        defer { folder.remove() }
        do { try fill(ModelContext(try container())) }
        do {
            let container = try container(peopleAllowSave: false)
            container.deleteAllData()
            #expect(try ModelContext(container).fetchCount(FetchDescriptor<CTrip>()) == 1)
            #expect(throws: DocumentError.readOnly(path: peopleURL.standardizedFileURL.path)) { try container.erase() }
        }
        #expect(try storedEntities(tripsURL) == ["CTrip": 1, "CStop": 2])
        #expect(try storedEntities(peopleURL) == ["CPerson": 2])
    }

    @Test func deleteAllDataEmptiesEveryFile() throws {
        defer { folder.remove() }
        do {
            let container = try container()
            try fill(ModelContext(container))
            container.deleteAllData()
            #expect(try storedEntities(tripsURL) == ["CTrip": 0, "CStop": 0])
            #expect(try storedEntities(peopleURL) == ["CPerson": 0])
        }
        let context = ModelContext(try self.container())
        context.insert(CPerson(name: "Dee"))
        try context.save()
        #expect(try storedEntities(peopleURL) == ["CPerson": 1])
    }
}
