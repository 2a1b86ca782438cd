import Foundation
import SwiftData
import Testing

@Model
final class Landmark {
    #Index<Landmark>(.rtree([\.latitude, \.longitude]))
    @Attribute(.unique) var name: String
    var latitude: Double
    var longitude: Double
    var visits: Int

    init(name: String, latitude: Double, longitude: Double, visits: Int) {
        self.name = name
        self.latitude = latitude
        self.longitude = longitude
        self.visits = visits
    }
}

/// Issue #13, points 1, 2 and 4: window conditions on an R-tree's attributes are
/// answered through the tree, with the same answers as a scan, unsaved changes,
/// moves and deletes included.
@Suite struct SpatialIndexTests {
    let container: ModelContainer
    let context: ModelContext
    var random = StressRandom(state: 0x5EED_CAFE)

    init() throws {
        container = try ModelContainer(for: Landmark.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        context = ModelContext(container)
        for i in 0..<2_000 {
            // Half spread over the globe, half clustered around Lisbon.
            let clustered = i.isMultiple(of: 2)
            context.insert(Landmark(
                name: "l\(i)",
                latitude: clustered ? 38.7 + Double.random(in: -0.2...0.2, using: &random) : Double.random(in: -90...90, using: &random),
                longitude: clustered ? -9.1 + Double.random(in: -0.2...0.2, using: &random) : Double.random(in: -180...180, using: &random),
                visits: i % 50))
        }
        try context.save()
    }

    /// The names a fetch returns, and those every model tested one by one gives.
    private func check(
        _ descriptor: FetchDescriptor<Landmark>, path: FetchExplanation.AccessPath? = .spatialIndex(["latitude", "longitude"]),
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let explanation = try context.explain(descriptor)
        if let path { #expect(explanation.accessPath == path, sourceLocation: sourceLocation) }
        let expected = try referenceFetch(descriptor, in: context)
        let fetched = try context.fetch(descriptor)
        if descriptor.sortBy.isEmpty {
            #expect(Set(fetched.map(\.name)) == Set(expected.map(\.name)), "\(explanation)", sourceLocation: sourceLocation)
        } else {
            #expect(fetched.map(\.name) == expected.map(\.name), "\(explanation)", sourceLocation: sourceLocation)
        }
        #expect(try context.fetchCount(descriptor) == expected.count, sourceLocation: sourceLocation)
    }

    private mutating func window(wide: Bool) -> (Double, Double, Double, Double) {
        let south = wide ? Double.random(in: -90...60, using: &random) : 38.7 + Double.random(in: -0.3...0.1, using: &random)
        let west = wide ? Double.random(in: -180...120, using: &random) : -9.1 + Double.random(in: -0.3...0.1, using: &random)
        let height = wide ? Double.random(in: 0...40, using: &random) : Double.random(in: 0...0.2, using: &random)
        let width = wide ? Double.random(in: 0...60, using: &random) : Double.random(in: 0...0.2, using: &random)
        return (south, south + height, west, west + width)
    }

    @Test mutating func windowsInAnyOrderMatchAScan() throws {
        for round in 0..<60 {
            let (s, n, w, e) = window(wide: round.isMultiple(of: 2))
            try check(FetchDescriptor(predicate: #Predicate { $0.latitude >= s && $0.latitude <= n && $0.longitude >= w && $0.longitude <= e }))
            try check(FetchDescriptor(predicate: #Predicate { $0.longitude < e && $0.latitude > s && $0.longitude > w && $0.latitude < n }))
            // Mixed with other conditions, sorted and limited.
            try check(FetchDescriptor(
                predicate: #Predicate { $0.visits > 10 && $0.latitude >= s && $0.longitude <= e && $0.latitude <= n && $0.longitude >= w },
                sortBy: [SortDescriptor(\.latitude), SortDescriptor(\.name)]))
            var limited = FetchDescriptor<Landmark>(
                predicate: #Predicate { $0.latitude >= s && $0.latitude <= n && $0.longitude >= w && $0.longitude <= e },
                sortBy: [SortDescriptor(\.visits, order: .reverse), SortDescriptor(\.name)])
            limited.fetchLimit = 5
            try check(limited)
        }
    }

    @Test func aPredicateThatIsExactlyAClosedWindowIsNotTestedAgain() throws {
        let s = 38.6, n = 38.8, w = -9.2, e = -9.0
        let exact = FetchDescriptor<Landmark>(predicate: #Predicate { $0.latitude >= s && $0.longitude <= e && $0.latitude <= n && $0.longitude >= w })
        try check(exact)
        #expect(try context.explain(exact).filtering == .exactKey)
        let closedRanges = FetchDescriptor<Landmark>(predicate: #Predicate { (s...n).contains($0.latitude) && (w...e).contains($0.longitude) })
        try check(closedRanges)
        #expect(try context.explain(closedRanges).filtering == .exactKey)
        // Strict bounds, another condition, or a bound given twice: the rows are tested.
        for descriptor in [
            FetchDescriptor<Landmark>(predicate: #Predicate { $0.latitude > s && $0.longitude <= e && $0.latitude <= n && $0.longitude >= w }),
            FetchDescriptor<Landmark>(predicate: #Predicate { $0.latitude >= s && $0.longitude <= e && $0.visits > 3 }),
            FetchDescriptor<Landmark>(predicate: #Predicate { $0.latitude >= s && $0.latitude >= n && $0.longitude <= e }),
        ] {
            try check(descriptor)
            #expect(try context.explain(descriptor).filtering == .native)
        }
        // Unsaved changes still count: a model moved out of the window, one deleted.
        let inside = try context.fetch(exact)
        inside[0].latitude = 0
        context.delete(inside[1])
        try check(exact)
        #expect(try context.fetchCount(exact) == inside.count - 2)
    }

    @Test func negativeLiteralsBoundTheWindow() throws {
        // `-9.2` is a unary minus on 9.2 in `#Predicate`: the planner takes it as a bound.
        let literal = FetchDescriptor<Landmark>(
            predicate: #Predicate { $0.latitude >= 38.6 && $0.latitude <= 38.8 && $0.longitude >= -9.2 && $0.longitude <= -9.0 })
        try check(literal)
        #expect(try context.explain(literal).filtering == .exactKey)
        #expect(try context.fetchCount(literal) > 0)
        // A captured value negated in the predicate, too.
        let west = 9.2
        let negated = FetchDescriptor<Landmark>(
            predicate: #Predicate { $0.latitude > 38.6 && $0.latitude < 38.8 && $0.longitude > -west && $0.longitude < -9.0 })
        try check(negated)
        #expect(try context.fetchCount(negated) > 0)
    }

    @Test func openSidesAndRangesAreWindowsToo() throws {
        let north = 38.7, east = -9.1
        try check(FetchDescriptor(predicate: #Predicate { $0.latitude > north && $0.longitude < east }))
        let west = -9.2
        try check(FetchDescriptor(predicate: #Predicate { (38.6...38.8).contains($0.latitude) && (west..<east).contains($0.longitude) }))
    }

    @Test func otherPlansWinWhereTheyAreNarrower() throws {
        let north = 38.7, east = -9.1
        // One attribute bounded: the tree does not narrow on both, so no window.
        try check(FetchDescriptor(predicate: #Predicate { $0.latitude > north && $0.visits == 3 }), path: .scan)
        // A unique key is one row.
        try check(FetchDescriptor(predicate: #Predicate { $0.name == "l10" && $0.latitude > north && $0.longitude < east }),
                  path: .uniqueIndex(["name"]))
        // A bound that is not a number (NaN) is left to the predicate: nothing passes.
        let nan = Double.nan
        try check(FetchDescriptor(predicate: #Predicate { $0.latitude > nan && $0.longitude < east }), path: .scan)
    }

    @Test mutating func unsavedAndSavedChangesAreSeen() throws {
        let s = 38.65, n = 38.75, w = -9.15, e = -9.05
        let inside = #Predicate<Landmark> { $0.latitude >= s && $0.latitude <= n && $0.longitude >= w && $0.longitude <= e }
        try check(FetchDescriptor(predicate: inside))  // builds the tree
        let all = try context.fetch(FetchDescriptor<Landmark>(sortBy: [SortDescriptor(\.name)]))
        let insiders = try all.filter { try inside.evaluate($0) }
        let outsiders = try all.filter { try !inside.evaluate($0) }
        #expect(insiders.count > 20)
        // Unsaved: a new one inside, one moved in, one moved out, one deleted.
        context.insert(Landmark(name: "new", latitude: 38.7, longitude: -9.1, visits: 0))
        outsiders[0].latitude = 38.70
        outsiders[0].longitude = -9.10
        insiders[0].longitude = 100
        context.delete(insiders[1])
        try check(FetchDescriptor(predicate: inside))
        try context.save()
        try check(FetchDescriptor(predicate: inside))
        // Saved changes go through the built tree: moves, deletes, inserts.
        for landmark in insiders.dropFirst(2).prefix(10) {
            landmark.latitude = Double.random(in: -90...90, using: &random)
        }
        for landmark in outsiders.dropFirst().prefix(10) {
            landmark.latitude = 38.7
            landmark.longitude = -9.1
        }
        for landmark in insiders.dropFirst(12).prefix(5) { context.delete(landmark) }
        try context.save()
        try check(FetchDescriptor(predicate: inside))
        let count = try context.fetchCount(FetchDescriptor(predicate: inside))
        #expect(count == insiders.count + 1 + 1 - 1 - 1 - 10 + 10 - 5)
    }

    @Test func aReopenedDocumentAnswersWindows() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = folder.file("landmarks.store")
        do {
            let writer = ModelContext(try ModelContainer(for: Landmark.self, configurations: ModelConfiguration(url: url)))
            for landmark in try context.fetch(FetchDescriptor<Landmark>()) {
                writer.insert(Landmark(name: landmark.name, latitude: landmark.latitude, longitude: landmark.longitude, visits: landmark.visits))
            }
            try writer.save()
        }
        let reader = ModelContext(try ModelContainer(for: Landmark.self, configurations: ModelConfiguration(url: url)))
        let s = 38.6, n = 38.8, w = -9.2, e = -9.0
        let descriptor = FetchDescriptor<Landmark>(
            predicate: #Predicate { $0.latitude >= s && $0.latitude <= n && $0.longitude >= w && $0.longitude <= e })
        #expect(try reader.explain(descriptor).accessPath == .spatialIndex(["latitude", "longitude"]))
        #expect(Set(try reader.fetch(descriptor).map(\.name)) == Set(try context.fetch(descriptor).map(\.name)))
    }
}
