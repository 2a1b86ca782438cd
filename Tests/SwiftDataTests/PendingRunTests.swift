import Foundation
import SwiftData
import Testing

/// Inserts kept as runs (`PendingInserts`): whatever mix of inserts held and not,
/// deletes, look-ups, changes, drafts and inserts deleted and inserted again the app
/// makes, every pending insert is found once, listed once in insertion order and saved
/// once.
@Suite struct PendingRunTests {
    let container: ModelContainer

    init() throws {
        container = try ModelContainer(
            for: Parcel.self, Carrier.self, Sticker.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    }

    /// A small linear congruential generator: the same operations for a seed on every run.
    struct Steps {
        var state: UInt64
        mutating func next(_ n: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(n))
        }
    }

    static func parcel(_ i: Int) -> Parcel {
        Parcel(code: "P\(i)", weight: Double(i), sentAt: Date(timeIntervalSince1970: Double(i)))
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func randomOperationsKeepEveryInsertOnceInOrder(seed: UInt64) throws {
        let context = ModelContext(container)
        var steps = Steps(state: seed)
        // The pending parcels in insertion order: (number, identifier, weight).
        var pending: [(Int, PersistentIdentifier, Double)] = []
        var held: [Parcel] = []
        var carriers = 0
        var next = 0
        for step in 0..<8_000 {
            let r = steps.next(100)
            if r < 64 {
                let parcel = Self.parcel(next)
                context.insert(parcel)
                pending.append((next, parcel.persistentModelID, Double(next)))
                if r < 4 { held.append(parcel) }
                next += 1
            } else if r < 68 {
                context.insert(Carrier(name: "c\(step)"))
                carriers += 1
            } else if r < 75, !pending.isEmpty {
                let k = steps.next(pending.count)
                let model = try #require(context.model(for: pending[k].1) as? Parcel, "step \(step)")
                #expect(model.code == "P\(pending[k].0)")
                context.delete(model)
                if steps.next(3) == 0 {
                    // Inserted again, under the same identifier: it goes last.
                    context.processPendingChanges()
                    context.insert(model)
                    pending.append(pending[k])
                }
                pending.remove(at: k)
                held.removeAll { $0 === model }
            } else if r < 85, !pending.isEmpty {
                let k = steps.next(pending.count)
                let model = context.model(for: pending[k].1) as? Parcel
                #expect(model?.code == "P\(pending[k].0)", "step \(step)")
                if steps.next(3) == 0, let model {
                    model.weight = -Double(pending[k].0)
                    pending[k].2 = model.weight
                }
            } else if r < 90 {
                let draft = Self.parcel(-1 - step)
                context.insert(draft)
                context.delete(draft)
            } else if r < 93, !held.isEmpty {
                held.remove(at: steps.next(held.count))
            }
        }
        if seed == 1 {
            // (Makes every kept insert a model again; the other seeds save the runs as they are.)
            #expect(context.insertedModelsArray.compactMap { $0 as? Parcel }.map(\.persistentModelID) == pending.map(\.1))
        }
        nonisolated(unsafe) var inserted: [PersistentIdentifier] = []
        let observer = NotificationCenter.default.addObserver(forName: ModelContext.didSave, object: context, queue: nil) {
            inserted = $0.userInfo?[ModelContext.NotificationKey.insertedIdentifiers.rawValue] as? [PersistentIdentifier] ?? []
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try context.save()
        #expect(inserted.count == pending.count + carriers)
        let parcels = try ModelContext(container).fetch(FetchDescriptor<Parcel>(sortBy: [SortDescriptor(\.sentAt)]))
        let expected = pending.sorted { $0.0 < $1.0 }
        #expect(parcels.map(\.code) == expected.map { "P\($0.0)" })
        #expect(parcels.map(\.weight) == expected.map(\.2))
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Carrier>()) == carriers)
        #expect(held.allSatisfy { !$0.persistentModelID.isTemporary })
    }

    /// Identifiers read in reverse before each batch is inserted make runs whose keys
    /// count up, each above the last run's (and, in pairs, runs of two): every kept insert
    /// is still found by its identifier, across the blocks of keys runs are listed under.
    @Test(arguments: [2, 50, 700])
    func runsWhoseKeysCountUpAreFoundByIdentifier(batch: Int) throws {
        let context = ModelContext(container)
        var ids: [PersistentIdentifier] = []
        var next = 0
        while next < 3_000 {
            let made = (next..<(next + batch)).map(Self.parcel)
            var batchIDs = [PersistentIdentifier?](repeating: nil, count: batch)
            for k in made.indices.reversed() { batchIDs[k] = made[k].persistentModelID }
            for parcel in made { context.insert(parcel) }
            ids += batchIDs.map { $0! }
            next += batch
        }
        for (i, id) in ids.enumerated() where i % 7 == 0 || i < 3 {
            #expect((context.model(for: id) as? Parcel)?.code == "P\(i)")
        }
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Parcel>()) == next)
    }

    /// Inserts 1,500 parcels from `first` on that the app does not hold: more than a look's
    /// worth, so most are let go.
    private func insertUnheld(from first: Int, into context: ModelContext) -> [PersistentIdentifier] {
        (first..<(first + 1_500)).map { i in
            let parcel = Self.parcel(i)
            context.insert(parcel)
            return parcel.persistentModelID
        }
    }

    /// Makes the kept insert `id` a model again, deletes it and inserts it again; the
    /// caller holds it no more afterwards.
    private func deleteAndInsertAgain(_ id: PersistentIdentifier, in context: ModelContext) throws {
        let model = try #require(context.model(for: id) as? Parcel)
        context.delete(model)
        context.processPendingChanges()
        context.insert(model)
        #expect(model.persistentModelID == id)
    }

    /// A kept insert made a model again, deleted and inserted again keeps its
    /// identifier: it stays a model, so the key is never in two runs.
    @Test func aKeptInsertDeletedAndInsertedAgainIsFoundAndSavedOnce() throws {
        let context = ModelContext(container)
        let ids = insertUnheld(from: 0, into: context)
        try deleteAndInsertAgain(ids[10], in: context)
        _ = insertUnheld(from: 1_500, into: context)
        #expect((context.model(for: ids[10]) as? Parcel)?.code == "P10")
        #expect(context.insertedModelsArray.count == 3_000)
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Parcel>()) == 3_000)
    }

    @Test func aKeptInsertDeletedAndInsertedAgainIsSavedOnceAfterAFetch() throws {
        let context = ModelContext(container)
        let ids = insertUnheld(from: 0, into: context)
        try deleteAndInsertAgain(ids[10], in: context)
        _ = insertUnheld(from: 1_500, into: context)
        // A fetch that includes pending changes makes every kept parcel a model again.
        #expect(try context.fetch(FetchDescriptor<Parcel>()).count == 3_000)
        try context.save()
        let codes = try ModelContext(container).fetch(FetchDescriptor<Parcel>()).map(\.code)
        #expect(codes.count == 3_000 && Set(codes).count == 3_000)
    }
}
