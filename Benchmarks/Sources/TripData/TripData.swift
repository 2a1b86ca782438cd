import Foundation

/// SplitMix64: a tiny, fast, fixed-seed PRNG, so every run and every store sees the
/// same data (never `SystemRandomNumberGenerator`).
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A double uniformly in [0, 1).
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    /// An integer uniformly in `0..<bound` (bound > 0; the bias is negligible for our bounds).
    public mutating func below(_ bound: Int) -> Int { Int(truncatingIfNeeded: next() % UInt64(bound)) }
}

/// One bucket-list item of a trip (W6).
public struct BucketItemRow: Sendable, Hashable {
    public var title: String
    public var done: Bool

    public init(title: String, done: Bool) {
        self.title = title
        self.done = done
    }
}

/// One trip, as plain values: what every store under test is loaded with, and what the
/// "limit" (a hand-written Swift loop over an array of structs) scans.
public struct TripRow: Sendable, Hashable {
    public var name: String
    public var destination: String
    public var startDate: Date
    public var endDate: Date
    public var price: Double
    public var latitude: Double
    public var longitude: Double
    public var isFavorite: Bool
    public var notes: String?
    public var bucketList: [BucketItemRow]

    public init(
        name: String, destination: String, startDate: Date, endDate: Date, price: Double,
        latitude: Double, longitude: Double, isFavorite: Bool, notes: String?, bucketList: [BucketItemRow]
    ) {
        self.name = name
        self.destination = destination
        self.startDate = startDate
        self.endDate = endDate
        self.price = price
        self.latitude = latitude
        self.longitude = longitude
        self.isFavorite = isFavorite
        self.notes = notes
        self.bucketList = bucketList
    }
}

/// A latitude/longitude rectangle in degrees (`south ≤ north`, `west ≤ east`, never
/// across the antimeridian), bounds included: W5's window queries.
public struct GeoBox: Sendable, Hashable {
    public var south: Double
    public var north: Double
    public var west: Double
    public var east: Double

    public init(south: Double, north: Double, west: Double, east: Double) {
        self.south = south
        self.north = north
        self.west = west
        self.east = east
    }

    public func contains(latitude: Double, longitude: Double) -> Bool {
        latitude >= south && latitude <= north && longitude >= west && longitude <= east
    }
}

/// The shared data generator of BENCHMARKS.md: N trips with unique names, about 2,000
/// distinct destinations, start dates spread over 10 years (2020-01-01 ..< 2030-01-01),
/// points spread uniformly over the globe, prices 20 ..< 10,000 (cents), 10 % favourites,
/// notes on 30 % of trips, and (when asked) 0–5 bucket-list items per trip.
public enum TripData {
    public static let defaultSeed: UInt64 = 0x5EED_0F_7219
    public static let destinationCount = 2_000
    /// 2020-01-01T00:00:00Z.
    public static let firstDay = Date(timeIntervalSince1970: 1_577_836_800)
    public static let span: TimeInterval = 3_652 * 86_400

    /// About 2,000 pronounceable, distinct destination names (fixed seed).
    public static let destinations: [String] = {
        var rng = SplitMix64(seed: 0xDE57)
        let onsets = ["b", "c", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "st", "tr", "gr", "ch"]
        let vowels = ["a", "e", "i", "o", "u", "ai", "ou", "ia"]
        var seen = Set<String>()
        var names: [String] = []
        while names.count < destinationCount {
            var word = ""
            for _ in 0..<(2 + rng.below(2)) { word += onsets[rng.below(onsets.count)] + vowels[rng.below(vowels.count)] }
            if rng.below(3) == 0 { word += ["n", "s", "l", "r"][rng.below(4)] }
            let name = word.prefix(1).uppercased() + word.dropFirst()
            if seen.insert(name).inserted { names.append(name) }
        }
        return names
    }()

    /// The unique name of trip `i`.
    public static func name(_ i: Int) -> String { "trip-\(i)" }

    /// Trips `range` of the fixed sequence (trip i is the same whatever the range).
    public static func trips(_ range: Range<Int>, bucketLists: Bool = false, seed: UInt64 = defaultSeed) -> [TripRow] {
        let destinations = Self.destinations
        var result: [TripRow] = []
        result.reserveCapacity(range.count)
        for i in range {
            // One generator per trip, seeded by index: any slice is reproducible on its own.
            var rng = SplitMix64(seed: seed &+ UInt64(i) &* 0x9E37_79B9)
            let start = firstDay + (rng.unit() * span).rounded()
            let days = 1 + rng.below(21)
            let price = (20 + rng.unit() * 9_980 * 100).rounded() / 100
            let latitude = asin(2 * rng.unit() - 1) * 180 / .pi
            let longitude = rng.unit() * 360 - 180
            let isFavorite = rng.below(10) == 0
            let notes: String? = rng.below(10) < 3 ? "note \(rng.below(1_000_000)) for trip \(i)" : nil
            let destination = destinations[rng.below(destinations.count)]
            var items: [BucketItemRow] = []
            if bucketLists {
                let count = rng.below(6)
                items.reserveCapacity(count)
                for j in 0..<count { items.append(BucketItemRow(title: "item \(j) of trip \(i)", done: rng.below(2) == 0)) }
            }
            result.append(TripRow(
                name: name(i), destination: destination, startDate: start,
                endDate: start + Double(days) * 86_400, price: price, latitude: latitude, longitude: longitude,
                isFavorite: isFavorite, notes: notes, bucketList: items))
        }
        return result
    }

    /// `count` distinct indexes in `0..<n`, in random order (fixed seed).
    public static func sample(_ count: Int, of n: Int, seed: UInt64) -> [Int] {
        precondition(count <= n)
        var rng = SplitMix64(seed: seed)
        if count * 2 > n {
            var all = Array(0..<n)
            for i in 0..<count { all.swapAt(i, i + rng.below(n - i)) }
            return Array(all[0..<count])
        }
        var seen = Set<Int>()
        var result: [Int] = []
        while result.count < count {
            let k = rng.below(n)
            if seen.insert(k).inserted { result.append(k) }
        }
        return result
    }

    /// `count` indexes in `0..<n`, with repeats allowed (fixed seed).
    public static func keys(_ count: Int, of n: Int, seed: UInt64) -> [Int] {
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { _ in rng.below(n) }
    }

    /// `count` start-date windows of `days` days (fixed seed), for range queries.
    public static func dateWindows(_ count: Int, days: Int, seed: UInt64) -> [(Date, Date)] {
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            let lo = firstDay + (rng.unit() * (span - Double(days) * 86_400)).rounded()
            return (lo, lo + Double(days) * 86_400)
        }
    }

    /// `count` boxes (fixed seed) each covering `fraction` of the sphere's area, so that
    /// a box holds `fraction × N` of the trips' points on average (they are uniform on the
    /// sphere). Each spans 2h of latitude (h = √(π·fraction) radians: a square of that
    /// area, at the equator) and the longitudes that give it exactly that area; centres
    /// are uniform on the sphere between ±(75° − h), and the boxes stay 1° clear of the
    /// antimeridian, so each is a plain rectangle. `fraction` ≤ 0.05.
    public static func boxes(_ count: Int, areaFraction fraction: Double, seed: UInt64) -> [GeoBox] {
        precondition(fraction > 0 && fraction <= 0.05, "a box must fit between ±75° latitude")
        let degrees = 180 / Double.pi
        let half = (Double.pi * fraction).squareRoot() * degrees
        let sinLimit = sin((75 - half) / degrees)
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            let centre = asin((2 * rng.unit() - 1) * sinLimit) * degrees
            let south = centre - half, north = centre + half
            // Area fraction of a box: (sin north − sin south) / 2 × (east − west) / 360°.
            let width = 720 * fraction / (sin(north / degrees) - sin(south / degrees))
            let west = -179 + rng.unit() * (358 - width)
            return GeoBox(south: south, north: north, west: west, east: west + width)
        }
    }

    /// `count` points uniform on the sphere (fixed seed), as the trips' are: W5's
    /// nearest-neighbour queries.
    public static func points(_ count: Int, seed: UInt64) -> [(latitude: Double, longitude: Double)] {
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            let latitude = asin(2 * rng.unit() - 1) * 180 / .pi
            return (latitude, rng.unit() * 360 - 180)
        }
    }
}
