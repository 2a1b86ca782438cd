import Foundation

/// A trip as plain values: what both sides insert, and what the hand-written side
/// decodes a row into.
struct TripRow: Sendable, Equatable {
    var name: String
    var destination: String
    var startDate: Date
    var price: Double
    var latitude: Double
    var longitude: Double
    var notes: String?

    /// `count` trips from a fixed seed, so every run and both sides see the same data.
    /// Names are `prefix` and a number; prices uniform in 50…2,050.
    static func generate(_ count: Int, prefix: String, seed: UInt64 = 43) -> [TripRow] {
        var random = SplitMix64(seed: seed)
        let destinations = ["Lisbon", "Porto", "Faro", "Évora", "Braga", "Coimbra", "Sintra", "Aveiro"]
        return (0..<count).map { i in
            TripRow(
                name: "\(prefix)-\(i)", destination: destinations[random.below(destinations.count)],
                startDate: Date(timeIntervalSinceReferenceDate: 800_000_000 + Double(random.below(365 * 86_400))),
                price: ((50 + random.unit() * 2_000) * 100).rounded() / 100,
                latitude: 37 + random.unit() * 5, longitude: -9.5 + random.unit() * 3.3,
                notes: random.below(4) == 0 ? "window seat" : nil)
        }
    }
}

/// SplitMix64: a small fixed-seed generator (the suite's TripData uses the same; that
/// target is in the suite's package, which this one does not resolve).
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A double in [0, 1).
    mutating func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    /// An integer in `0..<bound`.
    mutating func below(_ bound: Int) -> Int { Int(truncatingIfNeeded: next() % UInt64(bound)) }
}
