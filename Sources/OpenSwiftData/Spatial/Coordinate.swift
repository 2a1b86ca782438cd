/// A point on the globe in degrees: what `CLLocationCoordinate2D` holds, for
/// spatial queries on platforms without Core Location. *Additive*.
public struct Coordinate: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Degrees north of the equator, −90...90.
    public var latitude: Double
    /// Degrees east of Greenwich, −180...180.
    public var longitude: Double

    /// Creates a point from degrees of latitude and longitude; the values are not
    /// range-checked.
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// The point as `(latitude, longitude)`.
    public var description: String { "(\(latitude), \(longitude))" }
}
