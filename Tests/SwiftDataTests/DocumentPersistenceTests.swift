import Foundation
import SwiftData
import Testing

@Model final class Photo {
    @Attribute(.unique) var title: String
    @Attribute(.externalStorage) var image: Data
    init(title: String, image: Data) {
        self.title = title
        self.image = image
    }
}

/// `ModelConfiguration(url:)` and friends: what a container keeps in its document.
@Suite struct DocumentPersistenceTests {
    let folder: TemporaryFolder
    init() throws { folder = try TemporaryFolder("osd-docs") }

    func url(_ name: String) -> URL { folder.file(name) }
    func cleanUp() { folder.remove() }

    static func image(_ seed: UInt8, size: Int) -> Data { Data((0..<size).map { UInt8(truncatingIfNeeded: $0) &+ seed }) }

    /// A save that stored its inserts and then failed (a change that took another
    /// voyage's unique code) leaves the slots it took in the columns the published
    /// version shares (`AppendBuffer`). The saves after it store their own rows, and
    /// the document holds exactly the saved voyages, read back after compaction and
    /// a reopen.
    @Test func aFailedSaveLeavesNothingInTheSavesAfterIt() throws {
        defer { cleanUp() }
        let configuration = ModelConfiguration(url: url("failed.store"))
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var expected: [String: Double] = [:]
        func stored(_ container: ModelContainer) throws -> [String: Double] {
            Dictionary(uniqueKeysWithValues: try ModelContext(container).fetch(FetchDescriptor<Voyage>()).map { ($0.code, $0.fare) })
        }
        do {
            let container = try ModelContainer(for: Voyage.self, configurations: configuration)
            let context = ModelContext(container)
            for i in 0..<10 {
                context.insert(Voyage(code: "v\(i)", port: "Oslo", departure: start, fare: Double(i), isFull: false))
                expected["v\(i)"] = Double(i)
            }
            try context.save()
            for round in 0..<6 {
                let failing = ModelContext(container)
                failing.insert(Voyage(code: "lost\(round)", port: "Lima", departure: start, fare: 100, isFull: true))
                let renamed = try #require(try failing.fetch(FetchDescriptor<Voyage>(predicate: #Predicate { $0.code == "v1" })).first)
                renamed.code = "v2"
                #expect(throws: SwiftDataError.uniqueConstraintViolation) { try failing.save() }
                let saving = ModelContext(container)
                saving.insert(Voyage(code: "kept\(round)", port: "Cork", departure: start, fare: Double(200 + round), isFull: false))
                try saving.save()
                expected["kept\(round)"] = Double(200 + round)
                #expect(try stored(container) == expected, "round \(round)")
            }
            try container.compactDocument()
            #expect(try stored(container) == expected)
        }
        let reopened = try ModelContainer(for: Voyage.self, configurations: configuration)
        #expect(try stored(reopened) == expected)
    }

    @Test func relationshipsOfEveryShapeSurviveReopen() throws {
        defer { cleanUp() }
        let configuration = ModelConfiguration(url: url("graph.store"))
        let types: [any PersistentModel.Type] = [GLibrary.self, GShelf.self, GStudent.self, GCourse.self, GPerson.self, GPassport.self]
        do {
            let container = try ModelContainer(for: Schema(types), configurations: configuration)
            let context = ModelContext(container)
            let library = GLibrary(name: "Central")
            context.insert(library)
            for label in ["A", "B", "C"] {
                let shelf = GShelf(label: label)
                context.insert(shelf)
                shelf.library = library
            }
            let math = GCourse(title: "Math")
            let art = GCourse(title: "Art")
            let ann = GStudent(name: "Ann")
            let bob = GStudent(name: "Bob")
            for model in [math, art, ann, bob] as [any PersistentModel] { context.insert(model) }
            ann.courses = [math, art]
            bob.courses = [math]
            let person = GPerson(name: "Cy")
            let passport = GPassport(number: "P1")
            context.insert(person)
            context.insert(passport)
            person.passport = passport
            try context.save()
        }
        let container = try ModelContainer(for: Schema(types), configurations: configuration)
        let context = ModelContext(container)
        let library = try #require(try context.fetch(FetchDescriptor<GLibrary>()).first)
        #expect(library.shelves.map(\.label).sorted() == ["A", "B", "C"])
        #expect(library.shelves.allSatisfy { $0.library === library })
        let math = try #require(try context.fetch(FetchDescriptor<GCourse>(predicate: #Predicate { $0.title == "Math" })).first)
        #expect(math.students.map(\.name).sorted() == ["Ann", "Bob"])
        let ann = try #require(try context.fetch(FetchDescriptor<GStudent>(predicate: #Predicate { $0.name == "Ann" })).first)
        #expect(ann.courses.map(\.title).sorted() == ["Art", "Math"])
        let person = try #require(try context.fetch(FetchDescriptor<GPerson>()).first)
        #expect(person.passport?.number == "P1")
        #expect(person.passport?.holder === person)
    }

    @Test func updatesAndDeletesAcrossManySavesReplayInOrder() throws {
        defer { cleanUp() }
        let configuration = ModelConfiguration(url: url("trips.store"))
        do {
            let container = try ModelContainer(for: Trip.self, configurations: configuration)
            let context = ModelContext(container)
            for i in 0..<20 {
                context.insert(Trip(name: "trip \(i)", destination: "D\(i % 4)", startDate: .now, endDate: .now))
                try context.save()
            }
            for trip in try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.destination == "D1" })) {
                context.delete(trip)
            }
            try context.save()
            for trip in try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.destination == "D2" })) {
                trip.name += " (renamed)"
            }
            try context.save()
        }
        let container = try ModelContainer(for: Trip.self, configurations: configuration)
        let context = ModelContext(container)
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 15)
        let renamed = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.destination == "D2" }))
        #expect(renamed.count == 5 && renamed.allSatisfy { $0.name.hasSuffix("(renamed)") })
        // New inserts after reopening get fresh identifiers and survive the next reopen.
        context.insert(Trip(name: "late", destination: "D9", startDate: .now, endDate: .now))
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 16)
    }

    @Test func aContainerIsRefusedWhileADocumentHoldsTheFileAlone() throws {
        defer { cleanUp() }
        let location = url("alone.store")
        var document: ModelDocument? = try ModelDocument(for: Trip.self, contentsOf: location)
        #expect {
            _ = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: location))
        } throws: { error in
            error as? SwiftDataError == .loadIssueModelContainer && "\(error)".contains("open for writing")
        }
        _ = document
        document = nil
        // Two containers share it (SharedDocumentTests); a document then waits its turn.
        let first = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: location))
        _ = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: location))
        #expect(throws: DocumentError.locked(path: location.path)) { _ = try ModelDocument(for: Trip.self, contentsOf: location) }
        _ = first
    }

    @Test func allowsSaveFalseReadsWithoutTheLockAndRefusesToSave() throws {
        defer { cleanUp() }
        let location = url("readonly.store")
        let writer = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: location))
        let writing = ModelContext(writer)
        writing.insert(Trip(name: "one", destination: "X", startDate: .now, endDate: .now))
        try writing.save()

        let reader = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: location, allowsSave: false))
        let reading = ModelContext(reader)
        let trip = try #require(try reading.fetch(FetchDescriptor<Trip>()).first)
        #expect(trip.name == "one")
        trip.name = "changed"
        #expect(throws: SwiftDataError.readOnlyConfiguration) { try reading.save() }
        let size = try FileManager.default.attributesOfItem(atPath: location.path)[.size] as? Int
        writing.insert(Trip(name: "two", destination: "X", startDate: .now, endDate: .now))
        try writing.save()
        #expect(try FileManager.default.attributesOfItem(atPath: location.path)[.size] as? Int != size)
    }

    @Test func aReadOnlyConfigurationNeedsAnExistingDocument() throws {
        defer { cleanUp() }
        let location = url("missing.store")
        #expect(throws: SwiftDataError.loadIssueModelContainer) {
            _ = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: location, allowsSave: false))
        }
        #expect(!FileManager.default.fileExists(atPath: location.path))
    }

    @Test func inMemoryConfigurationsWriteNothing() throws {
        defer { cleanUp() }
        let configuration = ModelConfiguration("scratch-\(UUID().uuidString)", isStoredInMemoryOnly: true)
        let container = try ModelContainer(for: Trip.self, configurations: configuration)
        let context = ModelContext(container)
        context.insert(Trip(name: "one", destination: "X", startDate: .now, endDate: .now))
        try context.save()
        let defaultLocation = ModelConfiguration(configuration.name).url
        #expect(!FileManager.default.fileExists(atPath: defaultLocation.path))
        #expect(container.configurations.first?.url.path == "/dev/null")
    }

    @Test func theDefaultLocationIsTheXDGDataDirectory() {
        let url = ModelConfiguration().url
        #expect(url.lastPathComponent == "default.store")
        #expect(url.deletingLastPathComponent().lastPathComponent == "OpenSwiftData")
        let base = ProcessInfo.processInfo.environment["XDG_DATA_HOME"].map { URL(fileURLWithPath: $0).path }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share").path
        #expect(url.deletingLastPathComponent().deletingLastPathComponent().path == base)
        #expect(ModelConfiguration("Notes").url.lastPathComponent == "Notes.store")
    }

    @Test func deleteAllDataEmptiesTheDocument() throws {
        defer { cleanUp() }
        let configuration = ModelConfiguration(url: url("clear.store"))
        do {
            let container = try ModelContainer(for: Trip.self, configurations: configuration)
            let context = ModelContext(container)
            for i in 0..<50 { context.insert(Trip(name: "t\(i)", destination: "X", startDate: .now, endDate: .now)) }
            try context.save()
            container.deleteAllData()
            #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 0)
        }
        let container = try ModelContainer(for: Trip.self, configurations: configuration)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 0)
    }

    @Test func eraseDeletesTheFilesAndLaterSavesThrow() throws {
        defer { cleanUp() }
        let location = url("erase.store")
        let container = try ModelContainer(for: Photo.self, configurations: ModelConfiguration(url: location))
        let context = ModelContext(container)
        context.insert(Photo(title: "big", image: Self.image(1, size: 40_000)))
        try context.save()
        #expect(FileManager.default.fileExists(atPath: location.path + ".blobs"))
        try container.erase()
        #expect(!FileManager.default.fileExists(atPath: location.path))
        #expect(!FileManager.default.fileExists(atPath: location.path + ".blobs"))
        #expect(try context.fetchCount(FetchDescriptor<Photo>()) == 0)
        context.insert(Photo(title: "after", image: Data()))
        #expect(throws: DocumentError.self) { try context.save() }
    }

    @Test func anotherSchemaIsALoadIssueThatNamesTheDifference() throws {
        defer { cleanUp() }
        let location = url("schema.store")
        _ = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: location))
        let before = try Data(contentsOf: location)
        #expect {
            _ = try ModelContainer(for: Photo.self, configurations: ModelConfiguration(url: location))
        } throws: { error in
            error as? SwiftDataError == .loadIssueModelContainer && "\(error)".contains("another schema")
        }
        #expect(try Data(contentsOf: location) == before)
    }

    @Test func externalStorageKeepsLargeValuesBesideTheDocument() throws {
        defer { cleanUp() }
        let location = url("photos.store")
        let blobs = location.path + ".blobs"
        let large = Self.image(7, size: 100_000)
        do {
            let container = try ModelContainer(for: Photo.self, configurations: ModelConfiguration(url: location))
            let context = ModelContext(container)
            context.insert(Photo(title: "large", image: large))
            context.insert(Photo(title: "small", image: Self.image(3, size: 200)))
            context.insert(Photo(title: "same", image: large))
            try context.save()
            // One file for the two equal large values; the small one stays inline.
            #expect(try FileManager.default.contentsOfDirectory(atPath: blobs).count == 1)
            let fileSize = try FileManager.default.attributesOfItem(atPath: location.path)[.size] as? Int ?? 0
            #expect(fileSize < 50_000)
        }
        let container = try ModelContainer(for: Photo.self, configurations: ModelConfiguration(url: location))
        let context = ModelContext(container)
        let photos = try context.fetch(FetchDescriptor<Photo>(sortBy: [SortDescriptor(\.title)]))
        #expect(photos.map(\.title) == ["large", "same", "small"])
        #expect(photos[0].image == large && photos[1].image == large)
        #expect(photos[2].image == Self.image(3, size: 200))

        // Replace one, delete the other: after compaction no file refers to the old value.
        photos[0].image = Self.image(9, size: 100_000)
        context.delete(photos[1])
        try context.save()
        #expect(try FileManager.default.contentsOfDirectory(atPath: blobs).count == 2)
        try container.compactDocument()
        #expect(try FileManager.default.contentsOfDirectory(atPath: blobs).count == 1)
        #expect(try ModelContext(container).fetch(FetchDescriptor<Photo>(predicate: #Predicate { $0.title == "large" })).first?.image
            == Self.image(9, size: 100_000))
    }

    @Test func deferredDurabilityStillSavesEveryChange() throws {
        defer { cleanUp() }
        var configuration = ModelConfiguration(url: url("deferred.store"))
        configuration.durability = .deferred
        do {
            let container = try ModelContainer(for: Trip.self, configurations: configuration)
            let context = ModelContext(container)
            for i in 0..<10 {
                context.insert(Trip(name: "t\(i)", destination: "X", startDate: .now, endDate: .now))
                try context.save()
            }
        }
        let container = try ModelContainer(for: Trip.self, configurations: configuration)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 10)
    }

    /// Deleting the rows with the highest identifiers, compacting and reopening left
    /// the next identifier segments past the last stored row; the next insert trapped.
    @Test func insertAfterDeletingTheNewestRowsAndCompacting() throws {
        defer { cleanUp() }
        let configuration = ModelConfiguration(url: url("newest.store"))
        do {
            let container = try ModelContainer(for: Ticket.self, configurations: configuration)
            let context = ModelContext(container)
            for number in 0..<2_100 { context.insert(Ticket(number: number)) }
            try context.save()
            try context.delete(model: Ticket.self, where: #Predicate { $0.number >= 1_000 })
            try context.save()
            try container.compactDocument()
        }
        do {
            let container = try ModelContainer(for: Ticket.self, configurations: configuration)
            let context = ModelContext(container)
            #expect(try context.fetchCount(FetchDescriptor<Ticket>()) == 1_000)
            context.insert(Ticket(number: 5_000))
            try context.save()
        }
        let reopened = ModelContext(try ModelContainer(for: Ticket.self, configurations: configuration))
        #expect(try reopened.fetchCount(FetchDescriptor<Ticket>()) == 1_001)
        let newest = try reopened.fetch(FetchDescriptor<Ticket>(predicate: #Predicate { $0.number == 5_000 }))
        #expect(newest.count == 1)
        let oldest = try reopened.fetch(FetchDescriptor<Ticket>(sortBy: [SortDescriptor(\.number)]))
        #expect(oldest.first?.number == 0)
        // Identifiers are never reused: the new row's is above every deleted one's.
        let ids = try reopened.fetch(FetchDescriptor<Ticket>()).map(\.persistentModelID)
        #expect(Set(ids).count == 1_001)
        #expect(newest.first.map { $0.persistentModelID > ids[999] } == true)
    }
}

@Model final class Ticket {
    @Attribute(.unique) var number: Int
    init(number: Int) { self.number = number }
}
