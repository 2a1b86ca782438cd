import Foundation
import SwiftData
import Testing

/// Four containers on one document, each with a context making changes that it
/// saves now and then, in a random order, against a reference model of the
/// document: what every save leaves, property by property, keyed by row.
///
/// The reference follows the policy of Docs/Decisions.md ("Several writers on one
/// document"): a save writes the properties its context changed onto the rows as
/// they are then; an edit of a row another writer deleted is dropped; an insert of
/// a name another writer saved first upserts into that row.
@Suite struct SharedDocumentModelTests {
    /// A trip as the reference holds it: which row (`incarnation`), and its values.
    struct Stored: Equatable {
        var incarnation: Int
        var destination: String
        var price: Double
    }

    /// An unsaved change of one context.
    enum Change {
        case insert(name: String, destination: String, price: Double)
        case edit(name: String, incarnation: Int, price: Double)
        case delete(name: String, incarnation: Int)
    }

    struct Reference {
        var trips: [String: Stored] = [:]
        var incarnations = 0

        mutating func save(_ changes: [Change]) {
            // The store's order: deletes, then inserts (upserts), then updates.
            for case let .delete(name, incarnation) in changes where trips[name]?.incarnation == incarnation {
                trips[name] = nil
            }
            for case let .insert(name, destination, price) in changes {
                if let row = trips[name] {
                    trips[name] = Stored(incarnation: row.incarnation, destination: destination, price: price)
                } else {
                    incarnations += 1
                    trips[name] = Stored(incarnation: incarnations, destination: destination, price: price)
                }
            }
            for case let .edit(name, incarnation, price) in changes where trips[name]?.incarnation == incarnation {
                trips[name]!.price = price
            }
        }

        var contents: [String: [String]] {
            trips.mapValues { [$0.destination, "\($0.price)"] }
        }
    }

    static func contents(of context: ModelContext) throws -> [String: [String]] {
        var contents: [String: [String]] = [:]
        for trip in try context.fetch(FetchDescriptor<Trip>()) { contents[trip.name] = [trip.destination, "\(trip.price)"] }
        return contents
    }

    @Test(arguments: [1, 2, 3]) func randomSavesOfFourWritersMatchTheReference(seed: UInt64) throws {
        let folder = try TemporaryFolder("osd-shared-model")
        defer { folder.remove() }
        let url = folder.file("trips.store")
        let containers = try (0..<4).map { _ in
            try ModelContainer(for: Trip.self, BucketListItem.self, configurations: ModelConfiguration(url: url))
        }
        var contexts = containers.map { ModelContext($0) }
        for context in contexts { context.autosaveEnabled = false }
        var random = StressRandom(state: 0x9E37_79B9_7F4A_7C15 &* (seed + 1))
        var reference = Reference()
        /// Per context, its unsaved changes.
        var pending = [[Change]](repeating: [], count: contexts.count)
        let names = (0..<12).map { "T\($0)" }
        for step in 0..<400 {
            let c = Int.random(in: 0..<contexts.count, using: &random)
            let context = contexts[c]
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<3:
                // Insert (an upsert when the name is saved already, here or elsewhere).
                let name = names.randomElement(using: &random)!
                guard !pending[c].contains(where: { if case .insert(name, _, _) = $0 { true } else { false } }) else { continue }
                let destination = "D\(step)", price = Double(step)
                let trip = Trip(name: name, destination: destination)
                trip.price = price
                context.insert(trip)
                pending[c].append(.insert(name: name, destination: destination, price: price))
            case 3..<6:
                // Edit a saved trip this context reads now (its fetch catches up first).
                let trips = try context.fetch(FetchDescriptor<Trip>()).filter { trip in
                    reference.trips[trip.name] != nil && !context.insertedModelsArray.contains { $0 === trip }
                }
                guard let trip = trips.randomElement(using: &random), let row = reference.trips[trip.name] else { continue }
                guard !pending[c].contains(where: { if case .delete(trip.name, _) = $0 { true } else { false } }) else { continue }
                trip.price = Double(1_000 + step)
                // (The fetch gave the rows as they are now: the reference's.)
                pending[c].append(.edit(name: trip.name, incarnation: row.incarnation, price: trip.price))
            case 6 where step % 2 == 0:
                // Another writer's compaction: the others move to the new file with
                // their unsaved changes.
                try containers[c].compactDocument()
            case 6:
                let trips = try context.fetch(FetchDescriptor<Trip>()).filter { trip in
                    reference.trips[trip.name] != nil && !context.insertedModelsArray.contains { $0 === trip }
                }
                guard let trip = trips.randomElement(using: &random), let row = reference.trips[trip.name] else { continue }
                pending[c].append(.delete(name: trip.name, incarnation: row.incarnation))
                context.delete(trip)
            default:
                try context.save()
                reference.save(pending[c])
                pending[c] = []
                // What this context holds now is what it saved over the others' saves.
                #expect(try Self.contents(of: context) == reference.contents, "seed \(seed), step \(step), writer \(c)")
                // A fresh context sometimes: models registered for rows that are gone stay out.
                if Int.random(in: 0..<4, using: &random) == 0 {
                    contexts[c] = ModelContext(containers[c])
                    contexts[c].autosaveEnabled = false
                }
            }
        }
        for c in contexts.indices {
            try contexts[c].save()
            reference.save(pending[c])
        }
        for context in contexts { #expect(try Self.contents(of: context) == reference.contents, "seed \(seed)") }
        let fresh = try ModelContainer(for: Trip.self, BucketListItem.self, configurations: ModelConfiguration(url: url))
        #expect(try Self.contents(of: ModelContext(fresh)) == reference.contents, "seed \(seed)")
    }
}
