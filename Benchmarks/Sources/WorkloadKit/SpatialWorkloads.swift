// W5 of BENCHMARKS.md: 1,000 bounding-box queries (~100 hits each) on N points, ours
// through the model's R-tree (`#Index<Trip>(.rtree([\.latitude, \.longitude]))`), the peer
// through an SQLite R*Tree virtual table. Registered by `Workload.all` (Workloads.swift)
// between W4 and W6, named like the others:
//
//   W5 ours / W5 sqlite       the 1,000 window queries, on stores whose R-tree is built
//   W5 build ours / sqlite    building it: our first window query on a freshly loaded
//                             container (the R-tree is built lazily, by the first query
//                             that reads it) / filling the R*Tree table from the trip table
//   W5 search ours            the same boxes searched in the R-tree alone (no fetch, no
//                             models): what the index takes per window
//   W5 knn ours               1,000 nearest-10 queries (`NearbyDescriptor`); no peer, since
//                             SQLite's R*Tree has no nearest-neighbour search
//
// The boxes (fixed seed, shared by both sides) each cover 100 / N of the sphere's area, so
// they hold about 100 of the N trips' points (uniform on the sphere); they keep clear of the
// poles and the antimeridian. Every box's hit count is known beforehand (brute force over
// the rows), and both sides must return exactly it.
import Foundation
import GRDB
import OpenSwiftDataStore
import SwiftData
import TripData

extension Workload {
    /// W5, in table order.
    static func spatialWorkloads() -> [Workload] {
        var all: [Workload] = []
        func add(
            _ name: String, warmup: Int, iterations: Int, seconds: Int, metrics: [String] = [],
            _ iteration: @escaping @Sendable (Probe) async throws -> Void,
            setup: @escaping @Sendable () throws -> Void
        ) {
            all.append(Workload(
                name: name, warmupIterations: warmup, maxIterations: iterations, maxSeconds: seconds,
                customMetrics: metrics, setup: setup, iteration: iteration))
        }

        // MARK: W5 — 1,000 bounding-box queries (~100 hits each)

        // The total of the boxes' hits, recorded so the table can print the mean per box.
        let hits = "boxHits"
        add("W5 ours", warmup: 1, iterations: 20, seconds: 15, metrics: [hits]) { probe in
            let boxes = SpatialFixture.boxes, expected = SpatialFixture.expectedHits
            var total = 0, wrong = 0
            try probe.measured {
                let context = ModelContext(Fixture.ours)
                var latitudes = 0.0
                for index in boxes.indices {
                    let trips = try context.fetch(SpatialFixture.window(boxes[index]))
                    for trip in trips { latitudes += trip.latitude }
                    total += trips.count
                    if trips.count != expected[index] { wrong += 1 }
                }
                blackHole(latitudes)
            }
            try check(wrong == 0, "W5 ours found each box's points (\(wrong) boxes wrong)")
            try check(total == SpatialFixture.expectedTotal, "W5 ours found \(SpatialFixture.expectedTotal) points")
            probe.record(hits, total)
        } setup: {
            _ = (Fixture.ours, SpatialFixture.boxes, SpatialFixture.expectedHits)
            try SpatialFixture.buildOursRTree()
        }

        add("W5 sqlite", warmup: 1, iterations: 20, seconds: 15, metrics: [hits]) { probe in
            let boxes = SpatialFixture.boxes, expected = SpatialFixture.expectedHits
            var total = 0, wrong = 0
            try probe.measured {
                try SpatialFixture.sqlite.read { db in
                    let statement = try db.makeStatement(sql: SpatialFixture.windowSQL)
                    var latitudes = 0.0
                    for index in boxes.indices {
                        let box = boxes[index]
                        statement.setUncheckedArguments([
                            box.south, box.north, box.west, box.east, box.south, box.north, box.west, box.east,
                        ])
                        var trips: [TripRow] = []
                        let rows = try Row.fetchCursor(statement)
                        while let row = try rows.next() { trips.append(SQLitePeer.trip(row)) }
                        for trip in trips { latitudes += trip.latitude }
                        total += trips.count
                        if trips.count != expected[index] { wrong += 1 }
                    }
                    blackHole(latitudes)
                }
            }
            try check(wrong == 0, "W5 sqlite found each box's points (\(wrong) boxes wrong)")
            try check(total == SpatialFixture.expectedTotal, "W5 sqlite found \(SpatialFixture.expectedTotal) points")
            probe.record(hits, total)
        } setup: {
            _ = (SpatialFixture.sqlite, SpatialFixture.boxes, SpatialFixture.expectedHits)
            try SpatialFixture.checkSQLitePlan()
        }

        // MARK: W5 build — the R-tree over N points

        // A freshly loaded store per iteration (untimed; at N = 1,000,000 a few seconds, so
        // the time budget allows only one or two iterations).
        add("W5 build ours", warmup: 0, iterations: 5, seconds: 10) { probe in
            let container = try Ours.loaded(Fixture.trips)
            let context = ModelContext(container)
            let box = SpatialFixture.boxes[0]
            var found = 0
            try probe.measured {
                found = try context.fetch(SpatialFixture.window(box)).count
            }
            try check(found == SpatialFixture.expectedHits[0], "W5 build ours answered its first query")
        } setup: { _ = (Fixture.trips, SpatialFixture.boxes, SpatialFixture.expectedHits) }

        add("W5 build sqlite", warmup: 0, iterations: 5, seconds: 10) { probe in
            let queue = try SQLitePeer.memory(rtree: true)
            try queue.write { try SQLitePeer.insert(Fixture.trips, into: $0) }
            try probe.measured {
                try queue.write { try SQLitePeer.fillRTree($0) }
            }
            let count = try queue.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM trip_point") }
            try check(count == Env.n, "W5 build sqlite filled the R*Tree")
        } setup: { _ = Fixture.trips }

        // MARK: W5 search — the R-tree alone (ours only)

        // The same boxes searched in an `RTree` bulk-built over the N points as the engine
        // builds one (rows numbered from 1 in trip order), counting the rows found: what
        // the index takes per window, apart from the fetch around it (#13: a 0.01 % window
        // in under 10 µs).
        add("W5 search ours", warmup: 1, iterations: 50, seconds: 10) { probe in
            let tree = SpatialFixture.tree, boxes = SpatialFixture.boxes
            var total = 0
            probe.measured {
                total = 0
                for box in boxes {
                    tree.search(lower: [box.south, box.west], upper: [box.north, box.east]) { _ in
                        total += 1
                        return true
                    }
                }
            }
            try check(total == SpatialFixture.expectedTotal, "W5 search ours found \(SpatialFixture.expectedTotal) points")
        } setup: { _ = (SpatialFixture.tree, SpatialFixture.boxes, SpatialFixture.expectedHits) }

        // MARK: W5 knn — 1,000 nearest-10 queries (ours only)

        add("W5 knn ours", warmup: 1, iterations: 20, seconds: 15) { probe in
            let points = SpatialFixture.knnPoints
            let k = SpatialFixture.k
            var short = 0
            // The first queries' results, checked against brute force after the measurement.
            var sampled: [[Trip]] = []
            sampled.reserveCapacity(SpatialFixture.knnExpected.count)
            // Outside the measurement: the sampled models are read after it.
            let context = ModelContext(Fixture.ours)
            try probe.measured {
                var latitudes = 0.0
                for point in points {
                    let trips = try context.fetch(NearbyDescriptor<Trip>(
                        near: Coordinate(latitude: point.latitude, longitude: point.longitude),
                        latitude: \.latitude, longitude: \.longitude, limit: k))
                    for trip in trips { latitudes += trip.latitude }
                    if trips.count != k { short += 1 }
                    if sampled.count < SpatialFixture.knnExpected.count { sampled.append(trips) }
                }
                blackHole(latitudes)
            }
            try check(short == 0, "W5 knn ours returned \(k) trips for every point (\(short) short)")
            for (index, trips) in sampled.enumerated() {
                let point = points[index]
                try check(Set(trips.map(\.name)) == SpatialFixture.knnExpected[index], "W5 knn ours found the \(k) nearest of point \(index)")
                let distances = trips.map {
                    SpatialFixture.greatCircle(point.latitude, point.longitude, $0.latitude, $0.longitude)
                }
                try check(zip(distances, distances.dropFirst()).allSatisfy { $0 <= $1 * (1 + 1e-9) }, "W5 knn ours sorted point \(index)'s nearest first")
            }
        } setup: {
            _ = (Fixture.ours, SpatialFixture.knnPoints, SpatialFixture.knnExpected)
            try SpatialFixture.buildOursRTree()
        }

        return all
    }
}

/// W5's queries and stores, built once per benchmark process, outside the measurement.
enum SpatialFixture {
    /// An R-tree over the trips' points, bulk-built as the engine builds its own.
    static let tree: RTree = {
        var points: [Double] = []
        points.reserveCapacity(2 * Fixture.trips.count)
        for trip in Fixture.trips { points += [trip.latitude, trip.longitude] }
        return RTree(dimensions: 2, points: points, rows: (1...Int64(Fixture.trips.count)).map(RowID.init))
    }()

    /// Each box covers 100 / N of the sphere (at most 5 %, when N < 2,000).
    static let boxes = TripData.boxes(1_000, areaFraction: min(0.05, 100 / Double(Env.n)), seed: 5)

    /// Each box's hit count, by brute force: the points sorted by latitude, the box's
    /// latitude band found by binary search and its longitudes tested.
    static let expectedHits: [Int] = {
        let points = Fixture.trips.map { ($0.latitude, $0.longitude) }.sorted { $0.0 < $1.0 }
        return boxes.map { box in
            var lo = 0, hi = points.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if points[mid].0 < box.south { lo = mid + 1 } else { hi = mid }
            }
            var count = 0
            while lo < points.count, points[lo].0 <= box.north {
                if box.contains(latitude: points[lo].0, longitude: points[lo].1) { count += 1 }
                lo += 1
            }
            return count
        }
    }()
    static let expectedTotal = expectedHits.reduce(0, +)

    /// Ours: every trip inside `box`, bounds included (a window the R-tree answers).
    static func window(_ box: GeoBox) -> FetchDescriptor<Trip> {
        let south = box.south, north = box.north, west = box.west, east = box.east
        return FetchDescriptor<Trip>(predicate: #Predicate {
            $0.latitude >= south && $0.latitude <= north && $0.longitude >= west && $0.longitude <= east
        })
    }

    /// Builds the R-tree of `Fixture.ours` (its first window query does), and checks that
    /// a window query goes through it.
    static func buildOursRTree() throws {
        let context = ModelContext(Fixture.ours)
        let found = try context.fetch(window(boxes[0])).count
        try check(found == expectedHits[0], "W5: the first window query found the box's points")
        let plan = try context.explain(window(boxes[1]))
        try check(plan.accessPath == .spatialIndex(["latitude", "longitude"]), "W5: ours answers a window through the R-tree (\(plan))")
        try check(plan.resultCount == expectedHits[1], "W5: the explained window found the box's points")
    }

    /// The peer: the trips and the R*Tree table of their points.
    static let sqlite = try! SQLitePeer.loaded(Fixture.trips, rtree: true)

    /// The R*Tree finds the points whose (float, rounded outwards) box overlaps the query
    /// box; the trip's REAL coordinates then decide, as ours does, bounds included.
    /// Whole trips, mapped by hand as W2 and W3 map them (ours makes whole models).
    static let windowSQL = """
        SELECT \(SQLitePeer.columns.split(separator: ", ").map { "trip.\($0)" }.joined(separator: ", "))
        FROM trip_point JOIN trip ON trip.id = trip_point.id
        WHERE trip_point.maxLat >= ? AND trip_point.minLat <= ? AND trip_point.maxLon >= ? AND trip_point.minLon <= ?
          AND trip.latitude BETWEEN ? AND ? AND trip.longitude BETWEEN ? AND ?
        """

    /// Checks that SQLite searches the R*Tree first, then looks each trip up by id.
    static func checkSQLitePlan() throws {
        let plan = try sqlite.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + windowSQL, arguments: [0, 1, 0, 1, 0, 1, 0, 1])
                .map { $0["detail"] as String }
        }
        try check(plan.count == 2 && plan[0].contains("trip_point VIRTUAL TABLE INDEX 2:")
            && plan[1].contains("trip USING INTEGER PRIMARY KEY"), "W5 sqlite searches the R*Tree (plan: \(plan))")
    }

    // MARK: kNN

    static let k = 10
    /// The points of the nearest-neighbour queries: uniform on the whole sphere.
    static let knnPoints = TripData.points(1_000, seed: 55)

    /// The names of the `k` trips nearest (great circle) to each of the first 10 query
    /// points, by brute force.
    static let knnExpected: [Set<String>] = knnPoints.prefix(10).map { point in
        var nearest: [(distance: Double, index: Int)] = []
        for (index, trip) in Fixture.trips.enumerated() {
            let distance = greatCircle(point.latitude, point.longitude, trip.latitude, trip.longitude)
            if nearest.count < k || distance < nearest[k - 1].distance {
                if nearest.count == k { nearest.removeLast() }
                let at = nearest.firstIndex { $0.distance > distance } ?? nearest.count
                nearest.insert((distance, index), at: at)
            }
        }
        return Set(nearest.map { Fixture.trips[$0.index].name })
    }

    /// The great-circle distance (haversine) between two points in degrees, in metres on
    /// a sphere of the mean Earth radius; only its order matters here.
    static func greatCircle(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
        let radians = Double.pi / 180
        let dLat = (lat2 - lat1) * radians, dLon = (lon2 - lon1) * radians
        let a = sin(dLat / 2) * sin(dLat / 2) + cos(lat1 * radians) * cos(lat2 * radians) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * 6_371_008.8 * asin(min(1, a.squareRoot()))
    }
}
