import Foundation

/// How far apart two points of an R-tree index are, and how near a box can be:
/// what nearest-first and radius queries walk the tree by.
public enum SpatialMetric: Hashable, Sendable {
    /// Straight-line distance over every dimension, in the attributes' own units.
    case euclidean
    /// Great-circle distance in metres on a sphere of the Earth's mean radius
    /// (6,371,008.8 m; the haversine formula), between points of two dimensions:
    /// latitude, then longitude, in degrees. Within about 0.5 % of the distance on
    /// the ellipsoid.
    case greatCircle

    /// The Earth's mean radius in metres (IUGG).
    public static let earthRadius = 6_371_008.8

    /// The distance from `center` to `point`.
    public func distance(from center: [Double], to point: UnsafeBufferPointer<Double>) -> Double {
        let p = 0
        switch self {
        case .euclidean:
            var sum = 0.0
            for axis in center.indices {
                let d = point[p + axis] - center[axis]
                sum += d * d
            }
            return sum.squareRoot()
        case .greatCircle:
            let radians = Double.pi / 180
            let φ1 = center[0] * radians, φ2 = point[p] * radians
            let Δφ = φ2 - φ1, Δλ = (point[p + 1] - center[1]) * radians
            let a = sin(Δφ / 2) * sin(Δφ / 2) + cos(φ1) * cos(φ2) * sin(Δλ / 2) * sin(Δλ / 2)
            return 2 * Self.earthRadius * asin(min(1, a.squareRoot()))
        }
    }

    /// At most the distance from `center` to any point inside `box` (its lows,
    /// then its highs), so a nearest-first walk passes no point over.
    ///
    /// For great circles, the larger of two bounds that each hold for every point
    /// of the box: the latitude gap (no path between two latitudes is shorter than
    /// the meridian arc between them), and the distance to the nearest meridian
    /// through the box (the distance to a meridian's whole great circle is
    /// `asin(cos φ · |sin Δλ|)`, least at an end of the box's longitude span
    /// unless the span reaches the centre's own meridian or its antimeridian).
    public func lowerBound(from center: [Double], to box: UnsafeBufferPointer<Double>) -> Double {
        let b = 0
        switch self {
        case .euclidean:
            let d = center.count
            var sum = 0.0
            for axis in center.indices {
                let gap = max(box[b + axis] - center[axis], 0, center[axis] - box[b + d + axis])
                sum += gap * gap
            }
            return sum.squareRoot()
        case .greatCircle:
            let radians = Double.pi / 180
            // Latitudes past the poles (bad data) void both bounds: 0 is always safe.
            guard -90 <= box[b], box[b + 2] <= 90, (-90...90).contains(center[0]) else { return 0 }
            let latitudeGap = max(box[b] - center[0], 0, center[0] - box[b + 2]) * radians
            let west = box[b + 1], east = box[b + 3], λ = center[1]
            /// The angle between longitudes, in 0...180 degrees.
            func apart(_ x: Double) -> Double {
                let d = (x - λ).truncatingRemainder(dividingBy: 360)
                let wrapped = d < 0 ? d + 360 : d
                return wrapped > 180 ? 360 - wrapped : wrapped
            }
            /// Whether longitude `x` (taken modulo 360) lies in the box's span.
            func spans(_ x: Double) -> Bool {
                guard east - west < 360 else { return true }
                let offset = (x - west).truncatingRemainder(dividingBy: 360)
                return (offset < 0 ? offset + 360 : offset) <= east - west
            }
            var meridian = 0.0
            if !spans(λ) && !spans(λ + 180) {
                let sine = min(sin(apart(west) * radians), sin(apart(east) * radians))
                meridian = asin(min(1, cos(center[0] * radians) * sine))
            }
            // Rounding could put the bound a hair above a true distance (asin is
            // ill-conditioned near 90°, where sin rounds to 1): shave 1e-7 radians
            // (64 cm), which costs the walk nothing.
            return max(0, max(latitudeGap, meridian) - 1e-7) * Self.earthRadius
        }
    }
}
