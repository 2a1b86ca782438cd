import Foundation
import SwiftData
import Testing

/// Issue #3, point 1: key paths into Codable struct attributes compile natively,
/// reading members from the stored JSON; where the probe cannot tell which JSON
/// member a key path reads, the predicate falls back and is still right.
@Suite struct CodableMemberPredicateTests {
    struct Coordinates: Codable, Hashable {
        var latitude: Double
        var longitude: Double
    }

    enum Climate: String, Codable, CaseIterable {
        case mild, cold, hot
    }

    /// Own coding keys, an optional member, several Booleans, a date, a nested struct,
    /// an enum, and a computed property.
    struct Venue: Codable, Hashable {
        var name: String
        var capacity: Int?
        var isIndoor: Bool
        var hasParking: Bool
        var isAccessible: Bool
        var opened: Date
        var position: Coordinates
        var climate: Climate
        var winterClimate: Climate
        var tags: [String]
        /// Not coded: it keeps its default in every decoded value.
        var note = ""

        var shout: String { name.uppercased() }

        enum CodingKeys: String, CodingKey {
            case name = "n", capacity = "cap", isIndoor = "in", hasParking = "p", isAccessible = "a"
            case opened = "o", position = "pos", climate = "cl", winterClimate = "wcl", tags = "t"
        }
    }

    struct Stop: Codable, Hashable {
        var city: String
    }

    /// Leaves `level` out of its JSON when it has its default, and fills the default
    /// in when decoding: the JSON has no member where the value is 7.
    struct Settings: Codable, Hashable {
        var level: Int

        enum CodingKeys: String, CodingKey { case level }

        init(level: Int) { self.level = level }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            level = try container.decodeIfPresent(Int.self, forKey: .level) ?? 7
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            if level != 7 { try container.encode(level, forKey: .level) }
        }
    }

    /// Stores a member other than the one it reads: the JSON does not hold what the
    /// property holds, so predicates over `label` must be evaluated on models.
    struct Shouted: Codable, Hashable {
        var label: String

        init(label: String) { self.label = label }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            label = try container.decode(String.self, forKey: .label).uppercased()
        }
    }

    @Model final class Event {
        var title: String
        var venue: Venue
        var backup: Venue?
        var shouted: Shouted
        var stops: [Stop] = []
        var settings = Settings(level: 7)

        init(title: String, venue: Venue, backup: Venue?, shouted: Shouted) {
            self.title = title
            self.venue = venue
            self.backup = backup
            self.shouted = shouted
        }
    }

    let container: ModelContainer
    let context: ModelContext

    static func venue(_ i: Int) -> Venue {
        Venue(
            name: ["Hall", "Dome", "Barn", "Arena"][i % 4], capacity: i % 3 == 0 ? nil : i * 100,
            isIndoor: i % 2 == 0, hasParking: i % 3 == 1, isAccessible: i % 5 != 0,
            opened: Date(timeIntervalSinceReferenceDate: Double(i) * 86_400.5),
            position: Coordinates(latitude: Double(i) / 4, longitude: -Double(i)),
            climate: Climate.allCases[i % 3], winterClimate: Climate.allCases[(i / 2) % 3], tags: i % 2 == 0 ? ["a"] : [])
    }

    init() throws {
        container = try ModelContainer(for: Event.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        context = ModelContext(container)
        for i in 0..<12 {
            let event = Event(
                title: "e\(i < 10 ? "0" : "")\(i)", venue: Self.venue(i), backup: i % 4 == 0 ? nil : Self.venue(i + 1),
                shouted: Shouted(label: "label \(i % 3)"))
            event.stops = (0..<(i % 3)).map { Stop(city: ["Oslo", "Lima"][($0 + i) % 2]) }
            event.settings = Settings(level: 5 + i % 4)
            context.insert(event)
        }
        try context.save()
    }

    private func check(_ predicate: Predicate<Event>, native: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try expectSameAsEvaluate(predicate, in: context, sortedBy: \.title, native: native, splits: true, sourceLocation: sourceLocation)
    }

    @Test func membersWithOwnCodingKeysRunNatively() throws {
        try check(#Predicate { $0.venue.name == "Dome" })
        try check(#Predicate { $0.venue.name.starts(with: "B") || $0.venue.name > "Dome" })
        let since = Date(timeIntervalSinceReferenceDate: 5 * 86_400)
        try check(#Predicate { $0.venue.opened < since })
    }

    @Test func optionalMembersAndOptionalAttributes() throws {
        try check(#Predicate { $0.venue.capacity == nil })
        try check(#Predicate { ($0.venue.capacity ?? 0) > 400 })
        try check(#Predicate { $0.backup?.name == "Barn" })
        try check(#Predicate { $0.backup?.capacity == nil })
        try check(#Predicate { $0.backup == nil || $0.backup?.isIndoor == true })
    }

    /// Booleans only have two values, so the probe tells them apart by bit patterns
    /// over several rounds.
    @Test func eachBooleanMemberIsItsOwn() throws {
        try check(#Predicate { $0.venue.isIndoor })
        try check(#Predicate { $0.venue.hasParking })
        try check(#Predicate { !$0.venue.isAccessible })
        try check(#Predicate { $0.venue.isIndoor && $0.venue.hasParking })
    }

    @Test func nestedStructsAndEnums() throws {
        try check(#Predicate { $0.venue.position.latitude >= 1.5 })
        try check(#Predicate { $0.venue.position.longitude == -3 })
        let spot = Coordinates(latitude: 0.5, longitude: -2)
        try check(#Predicate { $0.venue.position == spot })
        let cold = Climate.cold
        try check(#Predicate { $0.venue.climate == cold })
        // Two members of one enum type are told apart.
        try check(#Predicate { $0.venue.winterClimate == cold })
        try check(#Predicate { $0.venue.climate == $0.venue.winterClimate })
        try check(#Predicate { $0.backup?.position.latitude == 1 })
    }

    /// Computed properties, members the decoder changes and arrays are evaluated on
    /// models: slower, and still right.
    @Test func whatTheProbeCannotReadFallsBack() throws {
        try check(#Predicate { $0.venue.shout == "HALL" }, native: false)
        try check(#Predicate { $0.shouted.label == "LABEL 1" }, native: false)
        try check(#Predicate { $0.venue.tags.isEmpty }, native: false)
        try check(#Predicate { $0.venue.note.isEmpty && $0.venue.name == "Dome" }, native: false)
    }

    /// A member the JSON leaves out reads as nil natively; a type that fills in a
    /// default instead must be evaluated on models.
    @Test func defaultedMembersFallBack() throws {
        try check(#Predicate { $0.settings.level == 7 }, native: false)
        try check(#Predicate { $0.settings.level < 7 }, native: false)
    }

    /// Arrays of Codable structs are stored as one JSON value: predicates over their
    /// elements run on models (they used to fail as a type mismatch).
    @Test func arraysOfCodableValuesFallBack() throws {
        try check(#Predicate { $0.stops.contains { $0.city == "Oslo" } }, native: false)
        try check(#Predicate { $0.stops.allSatisfy { $0.city == "Lima" } }, native: false)
        try check(#Predicate { $0.stops.count == 1 }, native: false)
        try check(#Predicate { $0.stops.isEmpty }, native: false)
    }

    @Test func pendingChangesAreReadTheSameWay() throws {
        let event = try #require(try context.fetch(FetchDescriptor<Event>(predicate: #Predicate { $0.title == "e03" })).first)
        event.venue.name = "Tent"
        event.venue.isIndoor = true
        context.insert(Event(title: "new", venue: Self.venue(7), backup: nil, shouted: Shouted(label: "x")))
        try check(#Predicate { $0.venue.name == "Tent" })
        try check(#Predicate { $0.venue.isIndoor })
        try check(#Predicate { $0.venue.name == "Arena" })
    }

    @Test func documentsKeepMembersReadable() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = folder.file("events.store")
        do {
            let writer = try ModelContainer(for: Event.self, configurations: ModelConfiguration(url: url))
            let context = ModelContext(writer)
            for i in 0..<6 { context.insert(Event(title: "d\(i)", venue: Self.venue(i), backup: nil, shouted: Shouted(label: "l"))) }
            try context.save()
        }
        let reader = try ModelContainer(for: Event.self, configurations: ModelConfiguration(url: url, allowsSave: false))
        let descriptor = FetchDescriptor<Event>(predicate: #Predicate { $0.venue.name == "Hall" }, sortBy: [SortDescriptor(\.title)])
        let context = ModelContext(reader)
        #expect(try context.explain(descriptor).filtering == .native)
        #expect(try context.fetch(descriptor).map(\.title) == ["d0", "d4"])
    }
}
