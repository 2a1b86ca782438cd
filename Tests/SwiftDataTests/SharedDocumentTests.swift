import Foundation
import SwiftData
import Testing

/// Several containers writing one document in one process: each save takes its
/// turn, after reading what the others saved, and each fetch sees their saves.
@Suite struct SharedDocumentTests {
    let folder: TemporaryFolder
    init() throws { folder = try TemporaryFolder("osd-shared") }

    func container(_ name: String, allowsSave: Bool = true) throws -> ModelContainer {
        try ModelContainer(
            for: Trip.self, BucketListItem.self,
            configurations: ModelConfiguration(url: folder.file(name), allowsSave: allowsSave))
    }

    static func names(in context: ModelContext) throws -> [String] {
        try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)])).map(\.name)
    }

    @Test func aSaveInOneContainerIsSeenByTheNextFetchInAnother() throws {
        defer { folder.remove() }
        let first = ModelContext(try container("trips.store"))
        let second = ModelContext(try container("trips.store"))
        first.insert(Trip(name: "Oslo", destination: "Norway"))
        try first.save()
        #expect(try Self.names(in: second) == ["Oslo"])
        #expect(try second.fetchCount(FetchDescriptor<Trip>()) == 1)

        second.insert(Trip(name: "Rome", destination: "Italy"))
        try second.save()
        #expect(try Self.names(in: first) == ["Oslo", "Rome"])
        // Row identifiers come from the one log: the second writer's row did not
        // take the first's.
        let ids = try first.fetch(FetchDescriptor<Trip>()).map(\.persistentModelID)
        #expect(Set(ids).count == 2)
        // A lookup by the unique key goes through the index, which the catch-up keeps.
        let rome = try second.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "Rome" }))
        #expect(rome.count == 1)
        let oslo = try first.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "Oslo" }))
        #expect(oslo.first?.destination == "Norway")
        // `model(for:)` of a row another writer saved since, in a context that never saw it.
        second.insert(Trip(name: "Bergen", destination: "Norway"))
        try second.save()
        let bergen = try #require(try second.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "Bergen" })).first)
        let fresh = ModelContext(first.container)
        #expect((fresh.model(for: bergen.persistentModelID) as? Trip)?.name == "Bergen")
    }

    @Test func registeredModelsTakeTheOtherWritersValuesAndKeepUnsavedChanges() throws {
        defer { folder.remove() }
        let first = ModelContext(try container("edits.store"))
        let second = ModelContext(try container("edits.store"))
        first.insert(Trip(name: "Oslo", destination: "Norway"))
        first.insert(Trip(name: "Rome", destination: "Italy"))
        try first.save()
        let seen = try second.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]))
        #expect(seen.map(\.destination) == ["Norway", "Italy"])
        // The second context edits Rome without saving; the first edits both.
        seen[1].notes = "unsaved"
        for trip in try first.fetch(FetchDescriptor<Trip>()) { trip.price = 100 }
        try first.save()
        let again = try second.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]))
        #expect(again[0] === seen[0] && again[0].price == 100)
        // Rome keeps its unsaved change (and its values until it saves).
        #expect(again[1].notes == "unsaved")
        try second.save()
        let third = ModelContext(try container("edits.store"))
        let stored = try third.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]))
        // Property by property: the second writer's note, the first writer's price.
        #expect(stored.map(\.notes) == [nil, "unsaved"])
        #expect(stored.map(\.price) == [100, 100])
    }

    @Test func aDeleteByOneWriterWinsOverAnotherWritersEdit() throws {
        defer { folder.remove() }
        let first = ModelContext(try container("delete.store"))
        let second = ModelContext(try container("delete.store"))
        first.insert(Trip(name: "Oslo", destination: "Norway"))
        try first.save()
        let trip = try #require(try second.fetch(FetchDescriptor<Trip>()).first)
        try first.delete(model: Trip.self)
        try first.save()
        trip.price = 5
        try second.save()
        #expect(try Self.names(in: second).isEmpty)
        #expect(try Self.names(in: ModelContext(try container("delete.store"))).isEmpty)
    }

    @Test func aUniqueKeyInsertedByTwoWritersUpsertsIntoOneRow() throws {
        defer { folder.remove() }
        let first = ModelContext(try container("unique.store"))
        let second = ModelContext(try container("unique.store"))
        first.insert(Trip(name: "Oslo", destination: "Norway"))
        // Inserted before the first save: the second writer has not seen it.
        second.insert(Trip(name: "Oslo", destination: "Norge"))
        try first.save()
        try second.save()
        let trips = try ModelContext(try container("unique.store")).fetch(FetchDescriptor<Trip>())
        #expect(trips.map(\.destination) == ["Norge"])
        #expect(try first.fetch(FetchDescriptor<Trip>()).map(\.destination) == ["Norge"])
    }

    @Test func aReadOnlyContainerFollowsLaterSaves() throws {
        defer { folder.remove() }
        let writer = ModelContext(try container("follow.store"))
        writer.insert(Trip(name: "Oslo", destination: "Norway"))
        try writer.save()
        let reader = ModelContext(try container("follow.store", allowsSave: false))
        #expect(try Self.names(in: reader) == ["Oslo"])
        writer.insert(Trip(name: "Rome", destination: "Italy"))
        try writer.save()
        #expect(try Self.names(in: reader) == ["Oslo", "Rome"])
    }

    @Test func historyCarriesTheOtherWritersTransactionsAndAuthor() throws {
        defer { folder.remove() }
        let first = ModelContext(try container("history.store"))
        first.author = "importer"
        let second = ModelContext(try container("history.store"))
        first.insert(Trip(name: "Oslo", destination: "Norway"))
        try first.save()
        let transactions = try second.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        #expect(transactions.map(\.author) == ["importer"])
        #expect(transactions.first?.changes.count == 1)
    }

    @Test func aWaitingHistoryFeedDeliversAnotherWritersSaves() async throws {
        defer { folder.remove() }
        let writer = try container("feed.store")
        let follower = try container("feed.store", allowsSave: false)
        let reader = Task {
            var authors: [String?] = []
            for try await transaction in follower.historyTransactions(after: nil) {
                authors.append(transaction.author)
                if authors.count == 2 { break }
            }
            return authors
        }
        // Saves while the feed waits: nothing signals it across containers, it looks.
        try await Task.sleep(for: .milliseconds(50))
        for author in ["first", "second"] {
            let context = ModelContext(writer)
            context.author = author
            context.insert(Trip(name: author, destination: "X"))
            try context.save()
        }
        #expect(try await reader.value == ["first", "second"])
    }

    @Test func aCompactionByOneWriterKeepsTheOthersPlaceAndUnsavedChanges() throws {
        defer { folder.remove() }
        let first = try container("compact.store")
        let second = try container("compact.store")
        let writing = ModelContext(first)
        for k in 0..<20 { writing.insert(Trip(name: "T\(k)", destination: "D")) }
        try writing.save()
        let other = ModelContext(second)
        #expect(try other.fetchCount(FetchDescriptor<Trip>()) == 20)
        other.insert(Trip(name: "pending", destination: "D"))
        try first.compactDocument()
        writing.insert(Trip(name: "after", destination: "D"))
        try writing.save()
        // The second container moves to the new file: it sees the save after the
        // compaction, and its own pending insert saves into the new file.
        #expect(try other.fetchCount(FetchDescriptor<Trip>()) == 22)
        try other.save()
        try second.compactDocument()
        #expect(try writing.fetchCount(FetchDescriptor<Trip>()) == 22)
        #expect(try ModelContext(try container("compact.store")).fetchCount(FetchDescriptor<Trip>()) == 22)
    }

    @Test func deleteAllDataByOneWriterEmptiesTheOthers() throws {
        defer { folder.remove() }
        let first = try container("empty.store")
        let second = ModelContext(try container("empty.store"))
        let writing = ModelContext(first)
        writing.insert(Trip(name: "Oslo", destination: "Norway"))
        try writing.save()
        #expect(try second.fetchCount(FetchDescriptor<Trip>()) == 1)
        first.deleteAllData()
        #expect(try second.fetchCount(FetchDescriptor<Trip>()) == 0)
        second.insert(Trip(name: "Rome", destination: "Italy"))
        try second.save()
        #expect(try Self.names(in: writing) == ["Rome"])
    }

    @Test func externalStorageBlobsSurviveAnotherWritersCompaction() throws {
        defer { folder.remove() }
        let location = folder.file("photos.store")
        func photos() throws -> ModelContainer {
            try ModelContainer(for: Photo.self, configurations: ModelConfiguration(url: location))
        }
        let image = { (seed: UInt8) in Data((0..<40_000).map { UInt8(truncatingIfNeeded: $0) &+ seed }) }
        let first = try photos(), second = try photos()
        let writing = ModelContext(first)
        writing.insert(Photo(title: "a", image: image(1)))
        try writing.save()
        let reading = ModelContext(second)
        #expect(try reading.fetch(FetchDescriptor<Photo>()).map(\.image) == [image(1)])
        // The second writer replaces the photo's image and compacts: the first's blob
        // goes, the new one stays, and the first writer goes on in the new file.
        try reading.fetch(FetchDescriptor<Photo>()).first?.image = image(2)
        reading.insert(Photo(title: "b", image: image(3)))
        try reading.save()
        try second.compactDocument()
        writing.insert(Photo(title: "c", image: image(4)))
        try writing.save()
        let all = try ModelContext(try photos()).fetch(FetchDescriptor<Photo>(sortBy: [SortDescriptor(\.title)]))
        #expect(all.map(\.image) == [image(2), image(3), image(4)])
        #expect(try writing.fetch(FetchDescriptor<Photo>(sortBy: [SortDescriptor(\.title)])).map(\.image) == [image(2), image(3), image(4)])
        let blobs = try FileManager.default.contentsOfDirectory(atPath: location.path + ".blobs").filter { !$0.hasPrefix(".") }
        #expect(blobs.count == 3)
    }

    /// A writer whose fsync fails cuts its frame off again; another writer's frame may
    /// then take its place, even at the same size. A follower that read the first
    /// frame must not keep it: it finds the bytes that ended it changed, and reads
    /// the file anew.
    @Test func aFollowerDropsAFrameItsWriterCutOffAgain() throws {
        defer { folder.remove() }
        let location = folder.file("retracted.store")
        do {
            let context = ModelContext(try container("retracted.store"))
            context.insert(Trip(name: "Oslo", destination: "Norway"))
            try context.save()
        }
        let follower = ModelContext(try container("retracted.store"))
        let other = ModelContext(try container("retracted.store"))
        #expect(try follower.fetch(FetchDescriptor<Trip>()).map(\.price) == [0])
        #expect(try other.fetch(FetchDescriptor<Trip>()).map(\.price) == [0])
        let before = try FileManager.default.attributesOfItem(atPath: location.path)[.size] as! Int
        do {
            // The failed writer: its frame is written, and the follower reads it...
            let failing = ModelContext(try container("retracted.store"))
            try failing.fetch(FetchDescriptor<Trip>()).first?.price = 1
            try failing.save()
            #expect(try ModelContext(follower.container).fetch(FetchDescriptor<Trip>()).map(\.price) == [1])
        }
        // ...then cut off again, as `append` cuts a frame whose fsync failed.
        let handle = try #require(FileHandle(forWritingAtPath: location.path))
        try handle.truncate(atOffset: UInt64(before))
        try handle.close()
        // Another writer's save takes its place (the same change, another value).
        try other.fetch(FetchDescriptor<Trip>()).first?.price = 2
        try other.save()
        #expect(try ModelContext(follower.container).fetch(FetchDescriptor<Trip>()).map(\.price) == [2])
        #expect(try ModelContext(try container("retracted.store", allowsSave: false)).fetch(FetchDescriptor<Trip>()).map(\.price) == [2])
        // And the follower's own saves go on from there.
        follower.insert(Trip(name: "Rome", destination: "Italy"))
        try follower.save()
        #expect(try Self.names(in: ModelContext(try container("retracted.store", allowsSave: false))) == ["Oslo", "Rome"])
    }
}
