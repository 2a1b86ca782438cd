import Foundation
import SwiftData
import Testing

// Models of the paths that lost links (issue #39, points 1, 1b and 2), declared as
// apps declare them: both sides of the many-to-many name their inverse.

@Model
final class IStudent {
    var name: String
    @Relationship(inverse: \ICourse.students) var courses: [ICourse] = []
    init(name: String) { self.name = name }
}

@Model
final class ICourse {
    var title: String
    @Relationship var students: [IStudent] = []
    init(title: String) { self.title = title }
}

@Model
final class IAirport {
    @Attribute(.unique) var code: String
    @Relationship(inverse: \IFlight.origin) var flightsFrom: [IFlight] = []
    init(code: String) { self.code = code }
}

@Model
final class IFlight {
    @Attribute(.unique) var number: String
    var seats: Int
    var origin: IAirport?
    init(number: String, seats: Int, origin: IAirport?) {
        self.number = number
        self.seats = seats
        self.origin = origin
    }
}

struct IPayload: Codable, Equatable {
    var tags: [String]
}

@Model
final class IAlbum {
    var title: String
    var note: String?
    var payload: IPayload
    @Attribute(.externalStorage) var cover: Data
    @Relationship(deleteRule: .cascade, inverse: \ITrack.album) var tracks: [ITrack] = []
    var artist: IArtist?
    init(title: String, note: String?, payload: IPayload, cover: Data) {
        self.title = title
        self.note = note
        self.payload = payload
        self.cover = cover
    }
}

@Model
final class ITrack {
    var title: String
    var album: IAlbum?
    init(title: String) { self.title = title }
}

@Model
final class IArtist {
    var name: String
    @Relationship(inverse: \IAlbum.artist) var albums: [IAlbum] = []
    init(name: String) { self.name = name }
}

/// The links a whole store holds, read from a fresh context: each side's view.
private func enrolments(_ container: ModelContainer) throws -> (byStudent: [String: Set<String>], byCourse: [String: Set<String>]) {
    let context = ModelContext(container)
    var byStudent: [String: Set<String>] = [:], byCourse: [String: Set<String>] = [:]
    for student in try context.fetch(FetchDescriptor<IStudent>()) {
        byStudent[student.name] = Set(student.courses.map(\.title))
    }
    for course in try context.fetch(FetchDescriptor<ICourse>()) {
        byCourse[course.title] = Set(course.students.map(\.name))
    }
    return (byStudent, byCourse)
}

@Suite struct GraphIntegrityTests {
    private func documentContainer(_ folder: TemporaryFolder, _ name: String, _ types: any PersistentModel.Type...) throws -> ModelContainer {
        try ModelContainer(for: Schema(types), configurations: ModelConfiguration(url: folder.file(name)))
    }

    /// Links Ann, Bob and Cy to Math and Art and saves.
    private func enrol(_ container: ModelContainer) throws {
        let context = ModelContext(container)
        let math = ICourse(title: "Math"), art = ICourse(title: "Art")
        context.insert(math)
        context.insert(art)
        for name in ["Ann", "Bob", "Cy"] {
            let student = IStudent(name: name)
            context.insert(student)
            student.courses = [math, art]
        }
        try context.save()
    }

    // MARK: 1. Many-to-many unlinks remove exactly one link

    enum Unlink: CaseIterable {
        case removeAtFromStudent, assignFromStudent, removeAtFromCourse, assignFromCourse
    }

    @Test(arguments: Unlink.allCases)
    func unlinkInAFreshContextRemovesOneLink(_ unlink: Unlink) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = folder.file("graph.store")
        do {
            let container = try documentContainer(folder, "graph.store", IStudent.self, ICourse.self)
            try enrol(container)
            let context = ModelContext(container)
            let bob = try #require(try context.fetch(FetchDescriptor<IStudent>(predicate: #Predicate { $0.name == "Bob" })).first)
            let math = try #require(try context.fetch(FetchDescriptor<ICourse>(predicate: #Predicate { $0.title == "Math" })).first)
            switch unlink {
            case .removeAtFromStudent:
                bob.courses.remove(at: try #require(bob.courses.firstIndex { $0 === math }))
            case .assignFromStudent:
                bob.courses = bob.courses.filter { $0 !== math }
            case .removeAtFromCourse:
                math.students.remove(at: try #require(math.students.firstIndex { $0 === bob }))
            case .assignFromCourse:
                math.students = math.students.filter { $0 !== bob }
            }
            #expect(Set(math.students.map(\.name)) == ["Ann", "Cy"])
            #expect(Set(bob.courses.map(\.title)) == ["Art"])
            try context.save()
            let links = try enrolments(container)
            #expect(links.byCourse == ["Math": ["Ann", "Cy"], "Art": ["Ann", "Bob", "Cy"]])
            #expect(links.byStudent == ["Ann": ["Math", "Art"], "Bob": ["Art"], "Cy": ["Math", "Art"]])
        }
        let reopened = try ModelContainer(
            for: Schema([IStudent.self, ICourse.self]), configurations: ModelConfiguration(url: url))
        let links = try enrolments(reopened)
        #expect(links.byCourse == ["Math": ["Ann", "Cy"], "Art": ["Ann", "Bob", "Cy"]])
        #expect(links.byStudent == ["Ann": ["Math", "Art"], "Bob": ["Art"], "Cy": ["Math", "Art"]])
        try reopened.compactDocument()
        let compacted = try enrolments(reopened)
        #expect(compacted.byCourse == links.byCourse && compacted.byStudent == links.byStudent)
    }

    @Test func unlinkThenRollbackAndUndoRestoreTheLink() throws {
        let container = try ModelContainer(
            for: Schema([IStudent.self, ICourse.self]), configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        try enrol(container)
        let context = ModelContext(container)
        let bob = try #require(try context.fetch(FetchDescriptor<IStudent>(predicate: #Predicate { $0.name == "Bob" })).first)
        bob.courses.removeAll { $0.title == "Math" }
        context.rollback()
        try context.save()
        #expect(try enrolments(container).byCourse["Math"] == ["Ann", "Bob", "Cy"])

        let undoing = ModelContext(container)
        undoing.undoManager = UndoManager()
        let cy = try #require(try undoing.fetch(FetchDescriptor<IStudent>(predicate: #Predicate { $0.name == "Cy" })).first)
        cy.courses.removeAll { $0.title == "Art" }
        undoing.undoManager?.undo()
        try undoing.save()
        let links = try enrolments(container)
        #expect(links.byCourse == ["Math": ["Ann", "Bob", "Cy"], "Art": ["Ann", "Bob", "Cy"]])
        #expect(links.byStudent["Cy"] == ["Math", "Art"])
    }

    // MARK: 1b. A to-many never holds one model twice

    @Test func upsertDoesNotDuplicateInTheInverseToMany() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = folder.file("flights.store")
        do {
            let container = try documentContainer(folder, "flights.store", IAirport.self, IFlight.self)
            let context = ModelContext(container)
            let lis = IAirport(code: "LIS")
            context.insert(lis)
            context.insert(IFlight(number: "TP1", seats: 100, origin: lis))
            try context.save()

            // A feed reloaded: the same flight again, under the same airport key.
            let reload = ModelContext(container)
            let airport = IAirport(code: "LIS")
            reload.insert(airport)
            reload.insert(IFlight(number: "TP1", seats: 120, origin: airport))
            try reload.save()
            let reloadAgain = ModelContext(container)
            let stored = try #require(try reloadAgain.fetch(FetchDescriptor<IAirport>()).first)
            reloadAgain.insert(IFlight(number: "TP1", seats: 140, origin: stored))
            try reloadAgain.save()

            let check = ModelContext(container)
            let airports = try check.fetch(FetchDescriptor<IAirport>())
            #expect(airports.count == 1)
            #expect(airports.first?.flightsFrom.map(\.number) == ["TP1"])
            #expect(try check.fetch(FetchDescriptor<IFlight>()).map(\.seats) == [140])
        }
        let reopened = try ModelContainer(
            for: Schema([IAirport.self, IFlight.self]), configurations: ModelConfiguration(url: url))
        let context = ModelContext(reopened)
        let airport = try #require(try context.fetch(FetchDescriptor<IAirport>()).first)
        #expect(airport.flightsFrom.map(\.number) == ["TP1"])
        context.delete(try #require(airport.flightsFrom.first))
        try context.save()
        let after = ModelContext(reopened)
        #expect(try after.fetch(FetchDescriptor<IAirport>()).first?.flightsFrom.isEmpty == true)
    }

    // MARK: 2. Whatever a fetch leaves unread is unchanged by a save

    private func album(_ container: ModelContainer) throws {
        let context = ModelContext(container)
        let artist = IArtist(name: "Nina")
        let album = IAlbum(title: "Live", note: "first", payload: IPayload(tags: ["jazz"]), cover: Data(repeating: 7, count: 64 * 1024))
        context.insert(artist)
        context.insert(album)
        album.artist = artist
        album.tracks = [ITrack(title: "One"), ITrack(title: "Two")]
        try context.save()
    }

    @Test(arguments: [false, true])
    func partialFetchThenEditKeepsTheRest(prefetching: Bool) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = folder.file("albums.store")
        do {
            let container = try documentContainer(folder, "albums.store", IAlbum.self, ITrack.self, IArtist.self)
            try album(container)
            let context = ModelContext(container)
            var descriptor = FetchDescriptor<IAlbum>()
            descriptor.propertiesToFetch = [\.title]
            if prefetching { descriptor.relationshipKeyPathsForPrefetching = [\.tracks] }
            let fetched = try #require(try context.fetch(descriptor).first)
            fetched.title = "Live at home"
            try context.save()
        }
        let reopened = try ModelContainer(
            for: Schema([IAlbum.self, ITrack.self, IArtist.self]), configurations: ModelConfiguration(url: url))
        let context = ModelContext(reopened)
        let album = try #require(try context.fetch(FetchDescriptor<IAlbum>()).first)
        #expect(album.title == "Live at home")
        #expect(album.note == "first")
        #expect(album.payload == IPayload(tags: ["jazz"]))
        #expect(album.cover == Data(repeating: 7, count: 64 * 1024))
        #expect(album.artist?.name == "Nina")
        #expect(Set(album.tracks.map(\.title)) == ["One", "Two"])
        #expect(try context.fetch(FetchDescriptor<IArtist>()).first?.albums.map(\.title) == ["Live at home"])
    }
}
