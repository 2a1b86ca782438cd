import Foundation
import SwiftData
import Testing

/// Issue #13, points 3 and 4: nearest-first and radius queries through the
/// R-tree, checked against a brute force over every model, unsaved changes
/// included, near the poles and across the antimeridian too.
@Suite struct NearbyQueryTests {
    let container: ModelContainer
    let context: ModelContext
    var random = StressRandom(state: 0xA11CE)

    init() throws {
        container = try ModelContainer(for: Landmark.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        context = ModelContext(container)
        for i in 0..<3_000 {
            // Uniform on the sphere, plus a cluster straddling the antimeridian near Fiji.
            let latitude: Double, longitude: Double
            if i % 3 == 0 {
                latitude = -17 + Double.random(in: -1...1, using: &random)
                longitude = i % 2 == 0 ? 179.5 + Double.random(in: 0...0.5, using: &random) : -180 + Double.random(in: 0...0.5, using: &random)
            } else {
                latitude = asin(Double.random(in: -1...1, using: &random)) * 180 / .pi
                longitude = Double.random(in: -180...180, using: &random)
            }
            context.insert(Landmark(name: "n\(i)", latitude: latitude, longitude: longitude, visits: i % 40))
        }
        try context.save()
    }

    /// The reference: haversine on the mean Earth radius, written out here.
    static func metres(_ landmark: Landmark, _ center: Coordinate) -> Double {
        let r = Double.pi / 180
        let a = pow(sin((landmark.latitude - center.latitude) * r / 2), 2)
            + cos(center.latitude * r) * cos(landmark.latitude * r) * pow(sin((landmark.longitude - center.longitude) * r / 2), 2)
        return 2 * 6_371_008.8 * asin(min(1, a.squareRoot()))
    }

    /// The distances of the `k` nearest models passing `passes`, within `radius`.
    private func expected(_ center: Coordinate, k: Int?, radius: Double?, _ passes: (Landmark) -> Bool = { _ in true }) throws -> [Double] {
        let all = try context.fetch(FetchDescriptor<Landmark>()).filter(passes)
        var distances = all.map { Self.metres($0, center) }.filter { radius == nil || $0 <= radius! }.sorted()
        if let k { distances = Array(distances.prefix(k)) }
        return distances
    }

    private func check(
        _ descriptor: NearbyDescriptor<Landmark>, _ center: Coordinate, _ passes: (Landmark) -> Bool = { _ in true },
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let found = try context.fetch(descriptor)
        let distances = found.map { Self.metres($0, center) }
        let reference = try expected(center, k: descriptor.limit, radius: descriptor.radius, passes)
        #expect(distances.count == reference.count, "\(center)", sourceLocation: sourceLocation)
        #expect(zip(distances, reference).allSatisfy { abs($0 - $1) < 1e-6 }, "\(center)", sourceLocation: sourceLocation)
        #expect(zip(distances, distances.dropFirst()).allSatisfy { $0 <= $1 + 1e-6 }, "nearest first", sourceLocation: sourceLocation)
        let allPass = found.allSatisfy(passes)
        #expect(allPass, sourceLocation: sourceLocation)
        let identifiers = try context.fetchIdentifiers(descriptor)
        #expect(identifiers.count == found.count, sourceLocation: sourceLocation)
    }

    private mutating func centre() -> Coordinate {
        switch Int.random(in: 0..<5, using: &random) {
        case 0: Coordinate(latitude: Double.random(in: 85...90, using: &random), longitude: Double.random(in: -180...180, using: &random))
        case 1: Coordinate(latitude: -17, longitude: Bool.random(using: &random) ? 179.9 : -179.9)
        default: Coordinate(latitude: Double.random(in: -90...90, using: &random), longitude: Double.random(in: -180...180, using: &random))
        }
    }

    @Test mutating func nearestAndRadiusMatchABruteForce() throws {
        for round in 0..<40 {
            let center = centre()
            try check(NearbyDescriptor(near: center, latitude: \.latitude, longitude: \.longitude, limit: 10), center)
            try check(NearbyDescriptor(near: center, latitude: \.latitude, longitude: \.longitude, within: 500_000), center)
            try check(NearbyDescriptor(near: center, latitude: \.latitude, longitude: \.longitude, within: 2_000_000, limit: 7), center)
            let minimum = round % 40
            try check(
                NearbyDescriptor(near: center, latitude: \.latitude, longitude: \.longitude, limit: 5,
                                 predicate: #Predicate { $0.visits >= minimum }),
                center, { $0.visits >= minimum })
        }
    }

    @Test func euclideanOverTheIndexsAttributes() throws {
        let descriptor = NearbyDescriptor<Landmark>(near: [-17, 179.9], along: [\Landmark.latitude, \Landmark.longitude], within: 1.5, limit: 20)
        let found = try context.fetch(descriptor)
        func plane(_ l: Landmark) -> Double { ((l.latitude + 17) * (l.latitude + 17) + (l.longitude - 179.9) * (l.longitude - 179.9)).squareRoot() }
        let reference = try context.fetch(FetchDescriptor<Landmark>()).map(plane).filter { $0 <= 1.5 }.sorted().prefix(20)
        #expect(found.map(plane) == Array(reference))
        // In the plane, Fiji's two sides of the antimeridian are 360 degrees apart.
        #expect(found.allSatisfy { $0.longitude > 0 })
    }

    @Test func unsavedChangesTakePart() throws {
        let center = Coordinate(latitude: 48.85, longitude: 2.35)
        let nearest = try context.fetch(NearbyDescriptor<Landmark>(near: center, latitude: \.latitude, longitude: \.longitude, limit: 3))
        // A new model at the centre, the nearest moved away, the second deleted,
        // a far one moved next door.
        context.insert(Landmark(name: "here", latitude: 48.85, longitude: 2.35, visits: 1))
        nearest[0].latitude = -48.85
        context.delete(nearest[1])
        let far = try #require(try context.fetch(FetchDescriptor<Landmark>(predicate: #Predicate { $0.name == "n1" })).first)
        far.latitude = 48.851
        far.longitude = 2.351
        let descriptor = NearbyDescriptor<Landmark>(near: center, latitude: \.latitude, longitude: \.longitude, limit: 3)
        let names = try context.fetch(descriptor).map(\.name)
        #expect(Array(names.prefix(2)) == ["here", "n1"])
        #expect(!names.contains(nearest[0].name) && !names.contains(nearest[1].name))
        try check(descriptor, center)
        var saved = descriptor
        saved.includePendingChanges = false
        #expect(!(try context.fetch(saved).map(\.name)).contains("here"))
        try context.save()
        try check(descriptor, center)
        #expect(try context.fetch(descriptor).map(\.name).prefix(2) == ["here", "n1"])
    }

    @Test func aQueryNeedsAnRTreeOverItsAttributes() throws {
        let center = Coordinate(latitude: 0, longitude: 0)
        // The index is (latitude, longitude): the other order is not it.
        #expect(throws: SwiftDataError.unsupportedKeyPath) {
            _ = try context.fetch(NearbyDescriptor<Landmark>(near: center, latitude: \.longitude, longitude: \.latitude, limit: 1))
        }
        #expect(throws: SwiftDataError.unsupportedKeyPath) {
            _ = try context.fetch(NearbyDescriptor<Landmark>(near: [0], along: [\Landmark.visits], limit: 1))
        }
        #expect(throws: SwiftDataError.unsupportedPredicate) {
            _ = try context.fetch(NearbyDescriptor<Landmark>(near: [0, 0, 0], along: [\Landmark.latitude, \Landmark.longitude], limit: 1))
        }
        // A limit of 0, as in `FetchDescriptor`, is none.
        #expect(try context.fetch(NearbyDescriptor<Landmark>(near: center, latitude: \.latitude, longitude: \.longitude, within: 1_000_000, limit: 0))
            == context.fetch(NearbyDescriptor<Landmark>(near: center, latitude: \.latitude, longitude: \.longitude, within: 1_000_000)))
    }
}
