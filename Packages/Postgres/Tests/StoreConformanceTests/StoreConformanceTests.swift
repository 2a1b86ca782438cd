import Foundation
import GraphModelTesting
import SwiftData
import Testing

/// The core API's conformance suite: every test runs over each available store kind
/// (the embedded document store, and PostgresStore when a server runs), through the
/// public API, as an app would use it.
@Suite struct StoreConformanceTests {
    static let start = Date(timeIntervalSinceReferenceDate: 790_000_000.125)

    /// Plain values of one voyage, to compute what fetches must return.
    struct Row {
        let code: String, destination: String, startDate: Date, price: Double, seats: Int, isFavorite: Bool, note: String?
    }

    static let rows: [Row] = (0..<40).map { i in
        Row(
            code: String(format: "V%03d", (i * 7) % 40), destination: ["Lisbon", "Porto", "Faro", "Évora", "Braga"][i % 5],
            startDate: start.addingTimeInterval(Double((i * 13) % 40) * 3_600.5), price: Double((i * 37) % 17) * 12.5,
            seats: (i * 3) % 11, isFavorite: i % 3 == 0, note: i % 4 == 0 ? nil : "note \(i % 6)")
    }

    private func seed(_ context: ModelContext) throws {
        for row in Self.rows {
            let voyage = Voyage(
                code: row.code, destination: row.destination, startDate: row.startDate, price: row.price, seats: row.seats,
                isFavorite: row.isFavorite)
            voyage.note = row.note
            voyage.tags = [row.destination.lowercased(), "seats\(row.seats)"]
            context.insert(voyage)
            voyage.legs = (0..<(row.seats % 3)).map { Leg(title: "\(row.code) leg \($0)", order: $0) }
        }
        try context.save()
    }

    /// Checks that `predicate` fetches and counts the voyages of `rows` that
    /// `expected` says pass, in `context`.
    private static func check(
        _ predicate: Predicate<Voyage>, _ expected: (Row) -> Bool, rows: [Row], in context: ModelContext,
        sourceLocation: SourceLocation
    ) throws {
        let want = rows.filter(expected).map(\.code).sorted()
        let got = try context.fetch(FetchDescriptor(predicate: predicate, sortBy: [SortDescriptor(\.code)])).map(\.code)
        #expect(got == want, sourceLocation: sourceLocation)
        #expect(try context.fetchCount(FetchDescriptor(predicate: predicate)) == want.count, sourceLocation: sourceLocation)
    }

    @Test(arguments: StoreKind.available)
    func savesAndReopens(_ kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let id: PersistentIdentifier
        do {
            let context = ModelContext(try location.container(Voyage.self, Leg.self, Traveller.self))
            let voyage = Voyage(code: "LIS", destination: "Lisbon", startDate: Self.start, price: 420.5, seats: 3, isFavorite: true)
            voyage.note = "tiles"
            voyage.tags = ["food", "tiles"]
            context.insert(voyage)
            voyage.legs = [Leg(title: "Alfama", order: 0), Leg(title: "Belém", order: 1)]
            let ana = Traveller(name: "Ana"), rui = Traveller(name: "Rui")
            voyage.travellers = [ana, rui]
            try context.save()
            id = voyage.persistentModelID
            #expect(!id.isTemporary)
            #expect(ana.voyages.map(\.code) == ["LIS"])
        }
        let context = ModelContext(try location.container(Voyage.self, Leg.self, Traveller.self))
        let voyage = try #require(context.model(for: id) as? Voyage)
        #expect(voyage.code == "LIS")
        #expect(voyage.destination == "Lisbon")
        #expect(voyage.startDate == Self.start)
        #expect(voyage.price == 420.5)
        #expect(voyage.seats == 3)
        #expect(voyage.isFavorite)
        #expect(voyage.note == "tiles")
        #expect(voyage.tags == ["food", "tiles"])
        #expect(voyage.legs.sorted { $0.order < $1.order }.map(\.title) == ["Alfama", "Belém"])
        #expect(voyage.legs.allSatisfy { $0.voyage === voyage })
        #expect(Set(voyage.travellers.map(\.name)) == ["Ana", "Rui"])
        #expect(voyage.travellers.allSatisfy { $0.voyages.first === voyage })
        #expect(try context.fetchCount(FetchDescriptor<Leg>()) == 2)
    }

    @Test(arguments: StoreKind.available)
    func predicatesSortsAndWindows(_ kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        try seed(ModelContext(try location.container(Voyage.self, Leg.self, Traveller.self)))
        let context = ModelContext(try location.container(Voyage.self, Leg.self, Traveller.self))
        let rows = Self.rows
        let day = Self.start.addingTimeInterval(10 * 3_600.5)
        func check(
            _ predicate: Predicate<Voyage>, _ expected: (Row) -> Bool, sourceLocation: SourceLocation = #_sourceLocation
        ) throws {
            try Self.check(predicate, expected, rows: rows, in: context, sourceLocation: sourceLocation)
        }

        try check(#Predicate { $0.code == "V007" }, { $0.code == "V007" })
        try check(#Predicate { $0.destination == "Porto" && $0.price >= 50 }, { $0.destination == "Porto" && $0.price >= 50 })
        try check(#Predicate { $0.price > 100 || $0.seats < 2 }, { $0.price > 100 || $0.seats < 2 })
        try check(#Predicate { !($0.destination == "Faro") }, { $0.destination != "Faro" })
        try check(#Predicate { $0.destination != "Faro" && $0.isFavorite }, { $0.destination != "Faro" && $0.isFavorite })
        try check(#Predicate { $0.startDate < day }, { $0.startDate < day })
        try check(#Predicate { $0.note == nil }, { $0.note == nil })
        try check(#Predicate { $0.note != nil && $0.note != "note 1" }, { $0.note != nil && $0.note != "note 1" })
        try check(#Predicate { !($0.note == "note 2") }, { $0.note != "note 2" })
        let wanted = ["Lisbon", "Évora"]
        try check(#Predicate { wanted.contains($0.destination) }, { wanted.contains($0.destination) })
        try check(#Predicate { $0.destination.contains("or") }, { $0.destination.contains("or") })
        try check(#Predicate { $0.destination.starts(with: "F") }, { $0.destination.hasPrefix("F") })
        try check(#Predicate { (10...20).contains($0.seats) || (3..<5).contains($0.seats) }, { (10...20).contains($0.seats) || (3..<5).contains($0.seats) })
        // Evaluated by the context where SQL cannot say it: a collection, case folding, arithmetic.
        try check(#Predicate { $0.tags.contains("faro") }, { $0.destination == "Faro" })
        try check(#Predicate { $0.destination.localizedStandardContains("ISB") }, { $0.destination.localizedStandardContains("ISB") })
        try check(#Predicate { $0.price * 2 > 300 }, { $0.price * 2 > 300 })

        // Sorts with ties (ties in insertion order), windows, identifiers.
        let sorted = rows.enumerated().sorted { a, b in
            (a.element.destination.unicodeScalars.lexicographicallyPrecedes(b.element.destination.unicodeScalars))
                || (a.element.destination == b.element.destination && (a.element.price > b.element.price
                    || (a.element.price == b.element.price && a.offset < b.offset)))
        }.map(\.element.code)
        var descriptor = FetchDescriptor<Voyage>(sortBy: [SortDescriptor(\.destination), SortDescriptor(\.price, order: .reverse)])
        #expect(try context.fetch(descriptor).map(\.code) == sorted)
        descriptor.fetchOffset = 5
        descriptor.fetchLimit = 7
        #expect(try context.fetch(descriptor).map(\.code) == Array(sorted[5..<12]))
        #expect(try context.fetchCount(descriptor) == 7)
        let ids = try context.fetchIdentifiers(descriptor)
        #expect(ids.compactMap { (context.model(for: $0) as? Voyage)?.code } == Array(sorted[5..<12]))
        let some = Array(ids.prefix(3))
        let byID = try context.fetch(FetchDescriptor<Voyage>(predicate: #Predicate { some.contains($0.persistentModelID) }))
        #expect(Set(byID.map(\.persistentModelID)) == Set(some))
        // A predicate through a relationship.
        let legs = try context.fetch(FetchDescriptor<Leg>(predicate: #Predicate { $0.voyage?.destination == "Braga" }))
        #expect(legs.count == rows.filter { $0.destination == "Braga" }.map { $0.seats % 3 }.reduce(0, +))
    }

    /// One predicate shape run again and again with other captured values, as a
    /// look-up in a loop runs: each run answers for its own values, whatever a store
    /// kept of the runs before (PostgreSQL keeps each shape's SQL). Stored NaN and
    /// infinite prices match as Swift compares them.
    @Test(arguments: StoreKind.available)
    func oneShapeWithOtherValues(_ kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        try seed(ModelContext(try location.container(Voyage.self, Leg.self, Traveller.self)))
        let odd = [("NAN", Double.nan), ("INF", .infinity), ("-INF", -.infinity)].map { code, price in
            Row(code: code, destination: "Nowhere", startDate: Self.start, price: price, seats: 0, isFavorite: false, note: nil)
        }
        do {
            let context = ModelContext(try location.container(Voyage.self, Leg.self, Traveller.self))
            for row in odd {
                context.insert(Voyage(code: row.code, destination: row.destination, startDate: row.startDate, price: row.price, seats: 0))
            }
            try context.save()
        }
        let context = ModelContext(try location.container(Voyage.self, Leg.self, Traveller.self))
        let rows = Self.rows + odd
        func check(
            _ predicate: Predicate<Voyage>, _ expected: (Row) -> Bool, sourceLocation: SourceLocation = #_sourceLocation
        ) throws {
            try Self.check(predicate, expected, rows: rows, in: context, sourceLocation: sourceLocation)
        }

        let bounds: [Double] = [-.infinity, 0, 50, 187.5, .nan, .infinity]
        for low in bounds {
            for high in bounds {
                try check(#Predicate { $0.price >= low && $0.price <= high }, { $0.price >= low && $0.price <= high })
                try check(#Predicate { $0.price > low || $0.price < high }, { $0.price > low || $0.price < high })
            }
            try check(#Predicate { $0.price == low }, { $0.price == low })
            try check(#Predicate { $0.price != low }, { $0.price != low })
            try check(#Predicate { low < $0.price }, { low < $0.price })
            try check(#Predicate { low >= $0.price }, { low >= $0.price })
        }
        for note in ["note 1", nil, "none such", nil] as [String?] {
            try check(#Predicate { $0.note == note }, { $0.note == note })
            try check(#Predicate { $0.note != note }, { $0.note != note })
        }
        for wanted in [["Lisbon"], [], ["Porto", "Faro", "nowhere"], []] {
            try check(#Predicate { wanted.contains($0.destination) }, { wanted.contains($0.destination) })
        }
        // NaN equals nothing, itself included, in a list as in a comparison of two
        // columns (PostgreSQL says NaN = NaN).
        for prices in [[Double.nan, 50], [.nan], [.infinity, 187.5], [], [.nan, -.infinity]] {
            try check(#Predicate { prices.contains($0.price) }, { prices.contains($0.price) })
        }
        try check(#Predicate { $0.price == $0.price }, { $0.price == $0.price })
        try check(#Predicate { $0.price != $0.price }, { $0.price != $0.price })
        try check(#Predicate { $0.price >= $0.price }, { $0.price >= $0.price })
        for favorite in [true, false, true] {
            try check(#Predicate { $0.isFavorite == favorite && $0.seats > 1 }, { $0.isFavorite == favorite && $0.seats > 1 })
        }
        for start in ["F", "", "Lis", "Z"] {
            try check(#Predicate { $0.destination.starts(with: start) }, { $0.destination.hasPrefix(start) })
        }
    }

    @Test(arguments: StoreKind.available)
    func uniqueKeysUpdateTheStoredModel(_ kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let container = try location.container(Voyage.self, Leg.self, Traveller.self)
        let context = ModelContext(container)
        let first = Voyage(code: "X1", destination: "Lisbon", startDate: Self.start, price: 1, seats: 1)
        context.insert(first)
        first.legs = [Leg(title: "kept", order: 0)]
        try context.save()
        let again = Voyage(code: "X1", destination: "Porto", startDate: Self.start, price: 2, seats: 2)
        context.insert(again)
        try context.save()
        #expect(again.persistentModelID == first.persistentModelID)
        let fresh = ModelContext(container)
        let stored = try fresh.fetch(FetchDescriptor<Voyage>())
        #expect(stored.count == 1)
        #expect(stored.first?.destination == "Porto")
        #expect(stored.first?.price == 2)
        // The upsert kept the relationship the new model left empty.
        #expect(stored.first?.legs.map(\.title) == ["kept"])
    }

    /// `didSave` tells an upsert from an insert, as Apple's does: the model that took
    /// over a stored row is listed as updated, a new one as inserted. An app answers
    /// "created" or "replaced" from it without a look-up of its own (the server
    /// example's POST does).
    @Test(arguments: StoreKind.available)
    func didSaveListsAnUpsertAsUpdated(_ kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let container = try location.container(Member.self)
        try {
            let context = ModelContext(container)
            context.insert(Member(email: "ann@example.com", handle: "ann", name: "Ann"))
            try context.save()
        }()
        // A context that holds no model of Ann's row: the upsert is known only to the store.
        let context = ModelContext(container)
        let again = Member(email: "ann@example.com", handle: "ann2", name: "Ann B")
        let new = Member(email: "bo@example.com", handle: "bo", name: "Bo")
        context.insert(again)
        context.insert(new)
        let saved = DidSaveLog(context)
        try context.save()
        #expect(saved.updated == [again.persistentModelID])
        #expect(saved.inserted == [new.persistentModelID])
    }

    /// Two unique attributes (#45, point 4): an insert matching a stored row on
    /// either key upserts onto it; one matching two stored rows is a violation and
    /// changes nothing. The same on every store.
    @Test(arguments: StoreKind.available)
    func anInsertUpsertsOnWhicheverUniqueKeyItMatches(_ kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let container = try location.container(Member.self)
        let context = ModelContext(container)
        context.insert(Member(email: "ann@example.com", handle: "ann", name: "Ann"))
        context.insert(Member(email: "cy@example.com", handle: "cy", name: "Cy"))
        try context.save()
        // The second key only: Ann's row takes the new email.
        context.insert(Member(email: "ann@new.example.com", handle: "ann", name: "Ann B"))
        try context.save()
        // Cy's email and Ann's handle: two rows, one model.
        context.insert(Member(email: "cy@example.com", handle: "ann", name: "Both"))
        #expect(throws: SwiftDataError.uniqueConstraintViolation) { try context.save() }
        context.rollback()
        let stored = try ModelContext(container).fetch(FetchDescriptor<Member>(sortBy: [SortDescriptor(\.handle)]))
        #expect(stored.map(\.email) == ["ann@new.example.com", "cy@example.com"])
        #expect(stored.map(\.name) == ["Ann B", "Cy"])
    }

    /// An upsert that gives the stored model other related models: the models on
    /// the other side follow, both sides agreeing (#39, 1b).
    @Test(arguments: StoreKind.available)
    func anUpsertMovesItsLinksOnBothSides(_ kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let container = try location.container(Voyage.self, Leg.self, Traveller.self)
        do {
            let context = ModelContext(container)
            let ann = Traveller(name: "Ann"), bo = Traveller(name: "Bo")
            context.insert(ann)
            context.insert(bo)
            let first = Voyage(code: "X1", destination: "Lisbon", startDate: Self.start, price: 1, seats: 1)
            context.insert(first)
            first.travellers = [ann]
            try context.save()
            // A feed reloaded: the same key, now with Bo.
            let again = Voyage(code: "X1", destination: "Porto", startDate: Self.start, price: 2, seats: 2)
            context.insert(again)
            again.travellers = [bo]
            try context.save()
        }
        let fresh = ModelContext(container)
        let travellers = try fresh.fetch(FetchDescriptor<Traveller>(sortBy: [SortDescriptor(\.name)]))
        #expect(travellers.map { $0.voyages.map(\.code) } == [[], ["X1"]])
        let voyage = try fresh.fetch(FetchDescriptor<Voyage>()).first
        #expect(voyage?.travellers.map(\.name) == ["Bo"])
        #expect(voyage?.destination == "Porto")
    }

    /// One save of more models than a statement of PostgresStore carries (it writes
    /// a save's inserts some hundred rows a statement), linked to each other across
    /// those statements, with one that upserts onto a stored model and is named by
    /// new ones, and a key given twice: every row and both sides of every link as on
    /// the embedded store.
    @Test(arguments: StoreKind.available)
    func aLargeSaveKeepsEveryRowAndLink(_ kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let container = try location.container(Voyage.self, Leg.self, Traveller.self)
        let stored = try {
            let context = ModelContext(container)
            let voyage = Voyage(code: "V0500", destination: "Lisbon", startDate: Self.start, price: 1, seats: 1)
            context.insert(voyage)
            voyage.legs = [Leg(title: "V0500 stored leg", order: 0)]
            try context.save()
            return voyage.persistentModelID
        }()
        let context = ModelContext(container)
        let travellers = (0..<3).map { Traveller(name: "T\($0)") }
        for traveller in travellers { context.insert(traveller) }
        var voyages: [Voyage] = []
        for i in 0..<1_200 {
            let voyage = Voyage(
                code: String(format: "V%04d", i), destination: "Porto", startDate: Self.start, price: Double(i), seats: i % 7)
            context.insert(voyage)
            voyages.append(voyage)
        }
        for (i, voyage) in voyages.enumerated() {
            // Legs are inserted after every voyage: their links cross statements.
            voyage.legs = (0..<(i % 3)).map { Leg(title: "\(voyage.code) leg \($0)", order: $0) }
            voyage.travellers = [travellers[i % 3]]
        }
        // A key twice in one save: the later model lands on the earlier one's row.
        let twice = Voyage(code: "V0100", destination: "Faro", startDate: Self.start, price: 100, seats: 100 % 7)
        context.insert(twice)
        try context.save()
        #expect(twice.persistentModelID == voyages[100].persistentModelID)
        // V0500 was stored: the new model took its row, and its legs replaced the
        // stored one, whose link is gone on both sides.
        #expect(voyages[500].persistentModelID == stored)
        let fresh = ModelContext(container)
        let all = try fresh.fetch(FetchDescriptor<Voyage>(sortBy: [SortDescriptor(\.code)]))
        #expect(all.map(\.code) == voyages.map(\.code))
        #expect(all.map(\.price) == (0..<1_200).map(Double.init))
        #expect(all.map(\.destination).filter { $0 != "Porto" } == ["Faro"])
        for (i, voyage) in all.enumerated() {
            #expect(Set(voyage.legs.map(\.title)) == Set((0..<(i % 3)).map { "\(voyage.code) leg \($0)" }))
            #expect(voyage.travellers.map(\.name) == ["T\(i % 3)"])
        }
        let legs = try fresh.fetch(FetchDescriptor<Leg>())
        #expect(legs.count == 1 + (0..<1_200).map { $0 % 3 }.reduce(0, +))
        #expect(legs.filter { $0.voyage == nil }.map(\.title) == ["V0500 stored leg"])
        #expect(legs.allSatisfy { $0.voyage == nil || $0.title.hasPrefix($0.voyage!.code + " leg") })
        let named = try fresh.fetch(FetchDescriptor<Traveller>(sortBy: [SortDescriptor(\.name)]))
        #expect(named.map(\.voyages.count) == [400, 400, 400])
    }

    @Test(arguments: StoreKind.available)
    func deleteRulesApply(_ kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let container = try location.container(Voyage.self, Leg.self, Traveller.self)
        let context = ModelContext(container)
        try seed(context)
        let ana = Traveller(name: "Ana")
        context.insert(ana)
        let voyages = try context.fetch(FetchDescriptor<Voyage>(sortBy: [SortDescriptor(\.code)]))
        ana.voyages = Array(voyages.prefix(3))
        try context.save()
        let doomed = voyages[0]
        let legCount = doomed.legs.count
        let before = try context.fetchCount(FetchDescriptor<Leg>())
        context.delete(doomed)
        try context.save()

        let fresh = ModelContext(container)
        #expect(try fresh.fetchCount(FetchDescriptor<Voyage>()) == 39)
        #expect(try fresh.fetchCount(FetchDescriptor<Leg>()) == before - legCount)
        let traveller = try #require(try fresh.fetch(FetchDescriptor<Traveller>()).first)
        #expect(traveller.voyages.map(\.code).sorted() == voyages[1...2].map(\.code))
        // Deleting by predicate runs the rules too.
        try fresh.delete(model: Voyage.self, where: #Predicate { $0.destination == "Lisbon" })
        try fresh.save()
        // (A context that ends takes its models' relationships with it: keep it.)
        let after = ModelContext(container)
        #expect(try after.fetchCount(FetchDescriptor<Voyage>(predicate: #Predicate { $0.destination == "Lisbon" })) == 0)
        #expect(try after.fetch(FetchDescriptor<Leg>()).allSatisfy { $0.voyage != nil })
    }

    @Test(arguments: StoreKind.available)
    func unsavedChangesTakePart(_ kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let container = try location.container(Voyage.self, Leg.self, Traveller.self)
        try seed(ModelContext(container))
        let context = ModelContext(container)
        let porto = #Predicate<Voyage> { $0.destination == "Porto" }
        let stored = try context.fetch(FetchDescriptor(predicate: porto, sortBy: [SortDescriptor(\.code)]))
        context.insert(Voyage(code: "NEW", destination: "Porto", startDate: Self.start, price: 1, seats: 1))
        context.delete(stored[0])
        stored[1].destination = "Faro"
        var descriptor = FetchDescriptor(predicate: porto, sortBy: [SortDescriptor(\.code)])
        descriptor.fetchLimit = 3
        let expected = Array((stored.dropFirst(2).map(\.code) + ["NEW"]).sorted().prefix(3))
        #expect(try context.fetch(descriptor).map(\.code) == expected)
        #expect(try context.fetchCount(FetchDescriptor(predicate: porto)) == stored.count - 2 + 1)
        context.rollback()
        #expect(try context.fetch(FetchDescriptor(predicate: porto)).count == stored.count)
        #expect(stored[1].destination == "Porto")
    }

    @Test(arguments: StoreKind.available)
    func contextsOfOneContainerSeeEachOthersSaves(_ kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let container = try location.container(Voyage.self, Leg.self, Traveller.self)
        let writer = ModelContext(container)
        try seed(writer)
        let reader = ModelContext(container)
        let seen = try #require(try reader.fetch(FetchDescriptor<Voyage>(predicate: #Predicate { $0.code == "V010" })).first)
        let mine = try #require(try writer.fetch(FetchDescriptor<Voyage>(predicate: #Predicate { $0.code == "V010" })).first)
        mine.price = 999
        mine.legs.append(Leg(title: "extra", order: 9))
        try writer.save()
        let reread = try #require(try reader.fetch(FetchDescriptor<Voyage>(predicate: #Predicate { $0.price == 999 })).first)
        #expect(reread === seen)
        #expect(reread.price == 999)
        #expect(reread.legs.contains { $0.title == "extra" })
    }

    @Test(arguments: StoreKind.available)
    func modelActorsWorkOverTheStore(_ kind: StoreKind) async throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let container = try location.container(Voyage.self, Leg.self, Traveller.self)
        let importer = VoyageImporter(modelContainer: container)
        try await importer.importVoyages(count: 25)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Voyage>()) == 25)
        #expect(try await importer.totalSeats() == (0..<25).reduce(0) { $0 + $1 % 7 })
    }
}

@ModelActor
actor VoyageImporter {
    func importVoyages(count: Int) throws {
        for i in 0..<count {
            modelContext.insert(Voyage(
                code: "A\(i)", destination: "Sintra", startDate: StoreConformanceTests.start, price: Double(i), seats: i % 7))
        }
        try modelContext.save()
    }

    func totalSeats() throws -> Int {
        try modelContext.fetch(FetchDescriptor<Voyage>()).reduce(0) { $0 + $1.seats }
    }
}

/// History, as SwiftData's history API reads it, over each store.
@Suite struct HistoryConformanceTests {
    @Test(arguments: StoreKind.available)
    func historyRecordsEverySave(_ kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let container = try location.container(Voyage.self, Leg.self, Traveller.self)
        let context = ModelContext(container)
        context.author = "importer"
        let kept = Voyage(code: "H1", destination: "Tavira", startDate: StoreConformanceTests.start, price: 5, seats: 1)
        let gone = Voyage(code: "H2", destination: "Lagos", startDate: StoreConformanceTests.start, price: 6, seats: 1)
        context.insert(kept)
        context.insert(gone)
        gone.legs = [Leg(title: "pier", order: 0)]
        try context.save()
        let first = try #require(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).last?.token)
        context.author = "editor"
        kept.price = 7
        try context.save()
        context.delete(gone)
        try context.save()

        let reader = ModelContext(try kind == .embedded ? container : location.container(Voyage.self, Leg.self, Traveller.self))
        let all = try reader.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        #expect(all.map(\.author) == ["importer", "editor", "editor"])
        #expect(all.map(\.changes.count) == [3, 1, 2])
        let inserted = all[0].changes.compactMap { change -> PersistentIdentifier? in
            if case let .insert(insert) = change { return insert.changedPersistentIdentifier }
            return nil
        }
        #expect(Set(inserted.filter { $0.entityName == "Voyage" }) == [kept.persistentModelID, gone.persistentModelID])
        guard case let .update(change) = all[1].changes.first, let update = change as? DefaultHistoryUpdate<Voyage> else {
            Issue.record("the second transaction is not an update of a voyage")
            return
        }
        #expect(update.changedPersistentIdentifier == kept.persistentModelID)
        #expect(update.updatedAttributes.contains(\Voyage.price))
        #expect(update.updatedAttributes.count == 1)
        let deletion = all[2].changes.compactMap { change -> DefaultHistoryDelete<Voyage>? in
            if case let .delete(delete) = change { return delete as? DefaultHistoryDelete<Voyage> }
            return nil
        }
        #expect(deletion.count == 1)
        #expect(deletion.first?.changedPersistentIdentifier == gone.persistentModelID)
        #expect(deletion.first?.tombstone[\Voyage.code] as? String == "H2")

        // After a token; deleting history expires earlier tokens.
        let later = try reader.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > first }))
        #expect(later.count == 2)
        try reader.deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token <= first }))
        #expect(try reader.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).count == 2)
        let stale = DefaultHistoryToken(id: 0)
        #expect(throws: SwiftDataError.historyTokenExpired) {
            try reader.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > stale }))
        }
    }

    /// A change feed in one container delivers what another container over the same
    /// document or database saves while it waits: in order, once each (#43).
    @Test(arguments: StoreKind.available)
    func aFeedDeliversAnotherContainersSavesAsTheyCommit(_ kind: StoreKind) async throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let reader = try location.container(Voyage.self, Leg.self, Traveller.self)
        let writer = try location.container(Voyage.self, Leg.self, Traveller.self)
        let feed = Task {
            var authors: [String?] = []
            for try await transaction in reader.historyTransactions() {
                authors.append(transaction.author)
                if authors.count == 3 { break }
            }
            return authors
        }
        // Ends the feed (with what it had) if the saves never reach it.
        let timeout = Task {
            try await Task.sleep(for: .seconds(15))
            feed.cancel()
        }
        defer { timeout.cancel() }
        for i in 1...3 {
            // Apart, so the feed catches up and waits between saves.
            try await Task.sleep(for: .milliseconds(50))
            let context = ModelContext(writer)
            context.author = "writer \(i)"
            context.insert(Voyage(code: "F\(i)", destination: "Tomar", startDate: StoreConformanceTests.start, price: 1, seats: 1))
            try context.save()
        }
        #expect(try await feed.value == ["writer 1", "writer 2", "writer 3"])
    }
}
