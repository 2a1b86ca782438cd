import Foundation
import SwiftData
import Testing

@Model final class Parcel {
    @Attribute(.unique) var code: String
    var weight: Double
    var sentAt: Date
    var note: String?
    var carrier: Carrier?

    init(code: String, weight: Double, sentAt: Date = Date(timeIntervalSince1970: 0), note: String? = nil) {
        self.code = code
        self.weight = weight
        self.sentAt = sentAt
        self.note = note
    }
}

@Model final class Carrier {
    var name: String
    @Relationship(inverse: \Parcel.carrier) var parcels: [Parcel] = []

    init(name: String) { self.name = name }
}

/// A model with state its backing data does not hold.
@Model final class Sticker {
    var label: String
    @Transient var scratch = 0

    init(label: String) { self.label = label }
}

/// Pending inserts the app lets go are kept as rows until the save (`ModelRegistry`):
/// whatever the app asks the context, it sees the same inserts, values and identifiers
/// as if the models had stayed.
@Suite struct PendingSpillTests {
    let container: ModelContainer

    init() throws {
        container = try ModelContainer(
            for: Parcel.self, Carrier.self, Sticker.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    }

    /// More than one batch of inserts the context looks at for ones to let go.
    static let count = 3_000

    static func code(_ i: Int) -> String { "P\(i)" }

    /// Inserts `count` parcels the caller does not hold; returns the identifiers and
    /// weak references to the first few.
    private func insertUnheld(_ count: Int = Self.count, into context: ModelContext) -> ([PersistentIdentifier], [Weak]) {
        var ids: [PersistentIdentifier] = []
        var watched: [Weak] = []
        for i in 0..<count {
            let parcel = Parcel(code: Self.code(i), weight: Double(i) / 4, sentAt: Date(timeIntervalSince1970: Double(i)),
                                note: i.isMultiple(of: 3) ? nil : "n\(i)")
            context.insert(parcel)
            ids.append(parcel.persistentModelID)
            if i < 8 { watched.append(Weak(parcel)) }
        }
        return (ids, watched)
    }

    final class Weak {
        weak var model: Parcel?
        init(_ model: Parcel) { self.model = model }
    }

    private func expectParcel(_ parcel: Parcel?, is i: Int) {
        #expect(parcel?.code == Self.code(i))
        #expect(parcel?.weight == Double(i) / 4)
        #expect(parcel?.sentAt == Date(timeIntervalSince1970: Double(i)))
        #expect(parcel?.note == (i.isMultiple(of: 3) ? nil : "n\(i)"))
    }

    @Test func insertsNothingHoldsEndBeforeTheSaveAndAreSavedFromTheirRows() throws {
        let context = ModelContext(container)
        let (ids, watched) = insertUnheld(into: context)
        #expect(watched.allSatisfy { $0.model == nil }, "the context let the unheld inserts go")
        #expect(context.hasChanges)
        nonisolated(unsafe) var inserted: [PersistentIdentifier] = []
        let observer = NotificationCenter.default.addObserver(forName: ModelContext.didSave, object: context, queue: nil) {
            inserted = $0.userInfo?[ModelContext.NotificationKey.insertedIdentifiers.rawValue] as? [PersistentIdentifier] ?? []
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try context.save()
        #expect(inserted.count == ids.count)
        #expect(!context.hasChanges)

        let reader = ModelContext(container)
        let parcels = try reader.fetch(FetchDescriptor<Parcel>(sortBy: [SortDescriptor(\.sentAt)]))
        #expect(parcels.count == Self.count)
        for (i, parcel) in parcels.enumerated() { expectParcel(parcel, is: i) }
        // Stored in insertion order, as kept inserts are.
        #expect(parcels.map(\.persistentModelID) == inserted)
    }

    @Test func aLetGoInsertIsFoundByItsIdentifierWithItsValues() throws {
        let context = ModelContext(container)
        let (ids, watched) = insertUnheld(into: context)
        #expect(watched[3].model == nil)
        let parcel = try #require(context.model(for: ids[3]) as? Parcel)
        #expect(parcel.persistentModelID == ids[3])
        expectParcel(parcel, is: 3)
        // From here it is the one object for that insert.
        #expect(context.model(for: ids[3]) === parcel)
        #expect(context.registeredModel(for: ids[3]) as Parcel? === parcel)
        parcel.weight = 99
        try context.save()
        #expect(parcel.persistentModelID.storeIdentifier != nil)
        let reader = ModelContext(container)
        let code = Self.code(3)
        let stored = try reader.fetch(FetchDescriptor<Parcel>(predicate: #Predicate { $0.code == code }))
        #expect(stored.map(\.weight) == [99])
        #expect(try reader.fetchCount(FetchDescriptor<Parcel>()) == Self.count)
    }

    /// Predicates on the identifiers of inserts the app let go find them (their rows
    /// are tested under their temporary identifiers).
    @Test func letGoInsertsAreFoundByTheirIdentifiersInPredicates() throws {
        let context = ModelContext(container)
        let (ids, watched) = insertUnheld(into: context)
        #expect(watched[5].model == nil)
        let id = ids[5]
        let one = FetchDescriptor<Parcel>(predicate: #Predicate { $0.persistentModelID == id })
        #expect(try context.fetch(one).map(\.code) == [Self.code(5)])
        #expect(try context.fetchCount(one) == 1)
        #expect(try context.fetchIdentifiers(one) == [id])
        let some = Array(ids[100..<110])
        let many = FetchDescriptor<Parcel>(predicate: #Predicate { some.contains($0.persistentModelID) })
        #expect(try context.fetchCount(many) == 10)
    }

    @Test func fetchesThatIncludePendingChangesSeeLetGoInserts() throws {
        let context = ModelContext(container)
        _ = insertUnheld(into: context)
        #expect(try context.fetchCount(FetchDescriptor<Parcel>()) == Self.count)
        let heavy = try context.fetch(FetchDescriptor<Parcel>(predicate: #Predicate { $0.weight >= 700 }, sortBy: [SortDescriptor(\.weight)]))
        #expect(heavy.count == Self.count - 2_800)
        for (k, parcel) in heavy.enumerated() { expectParcel(parcel, is: 2_800 + k) }
        var excluding = FetchDescriptor<Parcel>()
        excluding.includePendingChanges = false
        #expect(try context.fetch(excluding).isEmpty)
        // Made again once: a second fetch returns the same objects.
        let again = try context.fetch(FetchDescriptor<Parcel>(predicate: #Predicate { $0.weight >= 700 }, sortBy: [SortDescriptor(\.weight)]))
        #expect(zip(heavy, again).allSatisfy { $0 === $1 })
    }

    /// An import that looks each key up before inserting it: the look-ups see every
    /// earlier insert, kept as a row or not, and the save stores each key once.
    @Test func lookingKeysUpBeforeEachInsertSeesEveryEarlierInsert() throws {
        let context = ModelContext(container)
        var found = 0
        let count = 1_400
        for i in 0..<count {
            // Every tenth key is one inserted five before.
            let key = Self.code(i % 10 == 9 ? i - 5 : i)
            var lookup = FetchDescriptor<Parcel>(predicate: #Predicate { $0.code == key })
            lookup.fetchLimit = 1
            if let existing = try context.fetch(lookup).first {
                existing.weight += 1
                found += 1
            } else {
                context.insert(Parcel(code: key, weight: 0))
            }
        }
        #expect(found == count / 10)
        // Early keys, whose inserts are kept as rows by now, are found too, with their values.
        for i in stride(from: 0, to: 1_000, by: 100) {
            let key = Self.code(i)
            let hits = try context.fetch(FetchDescriptor<Parcel>(predicate: #Predicate { $0.code == key }))
            #expect(hits.map(\.code) == [key])
        }
        try context.save()
        let reader = ModelContext(container)
        #expect(try reader.fetchCount(FetchDescriptor<Parcel>()) == count - count / 10)
        let bumped = try reader.fetch(FetchDescriptor<Parcel>(predicate: #Predicate { $0.weight > 0 }))
        #expect(bumped.count == count / 10)
    }

    @Test func insertedModelsArrayListsEveryInsertInOrder() throws {
        let context = ModelContext(container)
        let (ids, _) = insertUnheld(into: context)
        let inserted = context.insertedModelsArray
        #expect(inserted.map(\.persistentModelID) == ids)
        for (i, model) in inserted.enumerated() where i % 97 == 0 { expectParcel(model as? Parcel, is: i) }
        #expect(zip(inserted, context.insertedModelsArray).allSatisfy { $0 === $1 })
    }

    @Test func deletingALetGoInsertFoundAgainKeepsItFromTheSave() throws {
        let context = ModelContext(container)
        let (ids, _) = insertUnheld(into: context)
        let victim = try #require(context.model(for: ids[5]) as? Parcel)
        context.delete(victim)
        #expect(!context.insertedModelsArray.contains { $0 === victim })
        try context.save()
        let reader = ModelContext(container)
        #expect(try reader.fetchCount(FetchDescriptor<Parcel>()) == Self.count - 1)
        let code = Self.code(5)
        #expect(try reader.fetch(FetchDescriptor<Parcel>(predicate: #Predicate { $0.code == code })).isEmpty)
    }

    @Test func rollbackDiscardsLetGoInserts() throws {
        let context = ModelContext(container)
        let (ids, _) = insertUnheld(into: context)
        context.rollback()
        #expect(!context.hasChanges)
        #expect(context.insertedModelsArray.isEmpty)
        #expect(context.registeredModel(for: ids[0]) as Parcel? == nil)
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Parcel>()) == 0)
    }

    @Test func aLetGoInsertWhoseKeyIsStoredUpdatesThatRow() throws {
        let seeder = ModelContext(container)
        seeder.insert(Parcel(code: Self.code(7), weight: -1))
        try seeder.save()

        let context = ModelContext(container)
        nonisolated(unsafe) var updated: [PersistentIdentifier] = []
        let observer = NotificationCenter.default.addObserver(forName: ModelContext.didSave, object: context, queue: nil) {
            updated = $0.userInfo?[ModelContext.NotificationKey.updatedIdentifiers.rawValue] as? [PersistentIdentifier] ?? []
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        _ = insertUnheld(into: context)
        try context.save()
        #expect(updated.count == 1)
        let reader = ModelContext(container)
        #expect(try reader.fetchCount(FetchDescriptor<Parcel>()) == Self.count)
        let code = Self.code(7)
        let stored = try reader.fetch(FetchDescriptor<Parcel>(predicate: #Predicate { $0.code == code }))
        #expect(stored.count == 1)
        expectParcel(stored.first, is: 7)
        #expect(stored.first?.persistentModelID == updated.first)
    }

    @Test func aModelOfTheRowALetGoInsertTookOverReadsItsNewValues() throws {
        let context = ModelContext(container)
        context.insert(Parcel(code: Self.code(7), weight: -1))
        try context.save()
        let code = Self.code(7)
        let held = try #require(try context.fetch(FetchDescriptor<Parcel>(predicate: #Predicate { $0.code == code })).first)
        #expect(held.weight == -1)
        _ = insertUnheld(into: context)
        try context.save()
        #expect(held.weight == Double(7) / 4)
        #expect((context.model(for: held.persistentModelID) as? Parcel)?.weight == Double(7) / 4)
        #expect(try context.fetchCount(FetchDescriptor<Parcel>()) == Self.count)
    }

    /// A model whose to-many relationship its initializer set to empty is let go too,
    /// and its row's relationship is the empty one the save writes.
    @Test func modelsWithEmptyRelationshipsAreLetGoAndLinkLater() throws {
        let context = ModelContext(container)
        weak var first: Carrier?
        for i in 0..<Self.count {
            let carrier = Carrier(name: "C\(i)")
            context.insert(carrier)
            if i == 0 { first = carrier }
        }
        #expect(first == nil)
        try context.save()
        let reader = ModelContext(container)
        let carriers = try reader.fetch(FetchDescriptor<Carrier>(sortBy: [SortDescriptor(\.name)]))
        #expect(carriers.count == Self.count)
        let allEmpty = carriers.allSatisfy { $0.parcels.isEmpty }
        #expect(allEmpty)
        let parcel = Parcel(code: "late", weight: 1)
        reader.insert(parcel)
        parcel.carrier = carriers[0]
        try reader.save()
        let again = ModelContext(container)
        let name = carriers[0].name
        let stored = try again.fetch(FetchDescriptor<Carrier>(predicate: #Predicate { $0.name == name }))
        let codes = stored.first?.parcels.map { $0.code }
        #expect(codes == ["late"])
    }

    @Test func heldModelsStayTheSameObjects() throws {
        let context = ModelContext(container)
        var held: [Parcel] = []
        for i in 0..<Self.count {
            let parcel = Parcel(code: Self.code(i), weight: Double(i) / 4)
            context.insert(parcel)
            held.append(parcel)
        }
        // Changed after their insertion, and after a batch was looked at.
        for parcel in held.prefix(10) { parcel.weight += 1_000 }
        for (i, parcel) in held.enumerated() where i % 311 == 0 {
            #expect(context.model(for: parcel.persistentModelID) === parcel)
        }
        try context.save()
        let reader = ModelContext(container)
        let heavy = try reader.fetch(FetchDescriptor<Parcel>(predicate: #Predicate { $0.weight >= 1_000 }))
        #expect(heavy.count == 10)
    }

    @Test func modelsWithStateOutsideTheirRowAreKept() throws {
        let context = ModelContext(container)
        var ids: [PersistentIdentifier] = []
        for i in 0..<Self.count {
            let sticker = Sticker(label: "S\(i)")
            sticker.scratch = i
            context.insert(sticker)
            ids.append(sticker.persistentModelID)
        }
        // A `@Transient` value lives on the object only: it is the same object still.
        for i in stride(from: 0, to: Self.count, by: 499) {
            #expect((context.model(for: ids[i]) as? Sticker)?.scratch == i)
        }
    }

    @Test func modelsHoldingRelatedModelsAreKeptAndSavedWithTheirLinks() throws {
        let context = ModelContext(container)
        for c in 0..<3 {
            let carrier = Carrier(name: "C\(c)")
            context.insert(carrier)
            for i in 0..<(Self.count / 3) {
                let parcel = Parcel(code: "\(c)-\(i)", weight: 1)
                context.insert(parcel)
                parcel.carrier = carrier
            }
        }
        // A carrier holds its parcels and each parcel its carrier: none is let go.
        try context.save()
        let reader = ModelContext(container)
        let carriers = try reader.fetch(FetchDescriptor<Carrier>(sortBy: [SortDescriptor(\.name)]))
        #expect(carriers.map(\.parcels.count) == [1_000, 1_000, 1_000])
        #expect(carriers[1].parcels.allSatisfy { $0.carrier === carriers[1] && $0.code.hasPrefix("1-") })
    }

    @Test func aRelationshipSetOnALetGoInsertFoundAgainIsSaved() throws {
        let context = ModelContext(container)
        let (ids, _) = insertUnheld(into: context)
        let carrier = Carrier(name: "Late")
        context.insert(carrier)
        let parcel = try #require(context.model(for: ids[1]) as? Parcel)
        parcel.carrier = carrier
        #expect(carrier.parcels.count == 1)
        try context.save()
        let reader = ModelContext(container)
        let stored = try #require(try reader.fetch(FetchDescriptor<Carrier>()).first)
        #expect(stored.parcels.map(\.code) == [Self.code(1)])
    }

    @Test func withAnUndoManagerInsertsStayModelsAndAreSaved() throws {
        let context = ModelContext(container)
        context.undoManager = UndoManager()
        let (ids, watched) = insertUnheld(into: context)
        #expect(watched.allSatisfy { $0.model != nil })
        #expect(context.model(for: ids[0]) === watched[0].model)
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Parcel>()) == Self.count)
    }

    /// Inserts let go one after another are kept as runs (`KeptRun`); deleting some and
    /// making others models again inside those runs leaves the rest as they were, in
    /// insertion order.
    @Test func deletingAndFindingInsertsInsideRunsKeepsTheRestInOrder() throws {
        let context = ModelContext(container)
        let (ids, _) = insertUnheld(into: context)
        var weights = (0..<Self.count).map { Double($0) / 4 }
        var gone = Set<Int>()
        for i in stride(from: 4, to: Self.count, by: 10) {
            context.delete(try #require(context.model(for: ids[i]) as? Parcel))
            gone.insert(i)
        }
        for i in stride(from: 0, to: Self.count, by: 7) where !gone.contains(i) {
            let parcel = try #require(context.model(for: ids[i]) as? Parcel)
            expectParcel(parcel, is: i)
            parcel.weight = -Double(i)
            weights[i] = -Double(i)
        }
        for i in [4, 14, 1_004] { #expect(context.registeredModel(for: ids[i]) as Parcel? == nil) }
        let left = ids.indices.filter { !gone.contains($0) }
        #expect(context.insertedModelsArray.map(\.persistentModelID) == left.map { ids[$0] })
        #expect(try context.fetchCount(FetchDescriptor<Parcel>()) == left.count)

        nonisolated(unsafe) var inserted: [PersistentIdentifier] = []
        let observer = NotificationCenter.default.addObserver(forName: ModelContext.didSave, object: context, queue: nil) {
            inserted = $0.userInfo?[ModelContext.NotificationKey.insertedIdentifiers.rawValue] as? [PersistentIdentifier] ?? []
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try context.save()
        let parcels = try ModelContext(container).fetch(FetchDescriptor<Parcel>(sortBy: [SortDescriptor(\.sentAt)]))
        #expect(parcels.map(\.code) == left.map { Self.code($0) })
        #expect(parcels.map(\.weight) == left.map { weights[$0] })
        #expect(parcels.map(\.persistentModelID) == inserted)
    }

    /// Identifiers made in another order than the inserts (read before each insert, in
    /// shuffled order) make no runs: each insert is kept on its own and found by its
    /// identifier.
    @Test func insertsWhoseIdentifiersAreOutOfOrderAreFoundEachByItsIdentifier() throws {
        let context = ModelContext(container)
        var rng = SystemRandomNumberGenerator()
        var ids = [PersistentIdentifier?](repeating: nil, count: Self.count)
        var watched: Weak?
        for batch in stride(from: 0, to: Self.count, by: 50) {
            let made = (batch..<batch + 50).map {
                Parcel(code: Self.code($0), weight: Double($0) / 4, sentAt: Date(timeIntervalSince1970: Double($0)), note: $0.isMultiple(of: 3) ? nil : "n\($0)")
            }
            for k in made.indices.shuffled(using: &rng) { ids[batch + k] = made[k].persistentModelID }
            for parcel in made { context.insert(parcel) }
            if batch == 0 { watched = Weak(made[0]) }
        }
        #expect(watched?.model == nil, "the context let the unheld inserts go")
        for i in stride(from: 0, to: Self.count, by: 13) { expectParcel(context.model(for: ids[i]!) as? Parcel, is: i) }
        try context.save()
        let parcels = try ModelContext(container).fetch(FetchDescriptor<Parcel>(sortBy: [SortDescriptor(\.sentAt)]))
        #expect(parcels.count == Self.count)
        for (i, parcel) in parcels.enumerated() where i % 11 == 0 { expectParcel(parcel, is: i) }
    }

    /// Inserts of two entities in turn: each is kept on its own (a run is of one
    /// entity), both are saved, each entity's in insertion order.
    @Test func insertsOfTwoEntitiesInTurnAreKeptAndSaved() throws {
        let context = ModelContext(container)
        var carrierIDs: [PersistentIdentifier] = []
        var parcelIDs: [PersistentIdentifier] = []
        for i in 0..<2_400 {
            if i.isMultiple(of: 2) {
                let parcel = Parcel(code: Self.code(i), weight: Double(i) / 4, sentAt: Date(timeIntervalSince1970: Double(i)), note: i.isMultiple(of: 3) ? nil : "n\(i)")
                context.insert(parcel)
                parcelIDs.append(parcel.persistentModelID)
            } else {
                let carrier = Carrier(name: "c\(i)")
                context.insert(carrier)
                carrierIDs.append(carrier.persistentModelID)
            }
        }
        expectParcel(context.model(for: parcelIDs[600]) as? Parcel, is: 1_200)
        #expect((context.model(for: carrierIDs[600]) as? Carrier)?.name == "c1201")
        #expect(context.insertedModelsArray.count == 2_400)
        try context.save()
        let reader = ModelContext(container)
        let parcels = try reader.fetch(FetchDescriptor<Parcel>())
        #expect(parcels.map(\.code) == stride(from: 0, to: 2_400, by: 2).map { Self.code($0) })
        let carriers = try reader.fetch(FetchDescriptor<Carrier>())
        #expect(carriers.map(\.name) == stride(from: 1, to: 2_400, by: 2).map { "c\($0)" })
    }

    @Test func aContextEndingWithLetGoInsertsStoresNothing() throws {
        do {
            let context = ModelContext(container)
            _ = insertUnheld(into: context)
        }
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Parcel>()) == 0)
    }
}
