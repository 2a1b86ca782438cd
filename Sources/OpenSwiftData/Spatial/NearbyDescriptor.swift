import Foundation
import OpenSwiftDataStore

/// A nearest-first query through an R-tree index (`#Index<T>(.rtree(...))`):
/// the models nearest a point, within a distance, or both, that pass a predicate.
/// *Additive* (SwiftData has no spatial queries); a box is a plain `#Predicate`
/// bounding each of the index's attributes, which the planner answers with the
/// same tree.
///
/// ```swift
/// let nearby = try context.fetch(NearbyDescriptor<Trip>(
///     near: Coordinate(latitude: 38.72, longitude: -9.14), latitude: \.latitude, longitude: \.longitude,
///     within: 5_000, limit: 10, predicate: #Predicate { $0.isFavorite }))
/// ```
public struct NearbyDescriptor<T: PersistentModel> {
    /// The R-tree's attributes, in the index's order.
    public var keyPaths: [PartialKeyPath<T>]
    /// The point distances are measured from, one coordinate per key path.
    public var center: [Double]
    /// How distance from `center` is measured: set by the initializer used.
    public var metric: Metric

    /// How distance is measured.
    public enum Metric: Hashable, Sendable {
        /// Great-circle distance in metres on a sphere of the Earth's mean radius
        /// (6,371,008.8 m; within about 0.5 % of the ellipsoid), over latitude and
        /// longitude in degrees.
        case greatCircle
        /// Straight-line distance over every attribute, in their own units.
        case euclidean

        var engine: SpatialMetric {
            switch self {
            case .greatCircle: .greatCircle
            case .euclidean: .euclidean
            }
        }
    }
    /// The farthest a model may be (metres for great circles), nil for no limit.
    public var radius: Double?
    /// How many models at most, nearest first; nil (or 0 or less, as for
    /// `FetchDescriptor.fetchLimit`) for every model in range.
    public var limit: Int?
    /// A filter the nearest models must also pass; `nil` accepts every model in range.
    public var predicate: Predicate<T>?
    /// Whether unsaved inserts of the context take part (as in `FetchDescriptor`).
    public var includePendingChanges = true

    /// Great-circle distance in metres from `center`; `latitude` and `longitude` are
    /// the R-tree's attributes, in degrees, in the index's order.
    public init(
        near center: Coordinate, latitude: KeyPath<T, Double>, longitude: KeyPath<T, Double>,
        within metres: Double? = nil, limit: Int? = nil, predicate: Predicate<T>? = nil
    ) {
        self.keyPaths = [latitude, longitude]
        self.center = [center.latitude, center.longitude]
        self.metric = .greatCircle
        self.radius = metres
        self.limit = limit
        self.predicate = predicate
    }

    /// Euclidean distance from `point` over the R-tree's attributes `keyPaths`, in
    /// the index's order, in their own units.
    public init(
        near point: [Double], along keyPaths: [PartialKeyPath<T>],
        within distance: Double? = nil, limit: Int? = nil, predicate: Predicate<T>? = nil
    ) {
        self.keyPaths = keyPaths
        self.center = point
        self.metric = .euclidean
        self.radius = distance
        self.limit = limit
        self.predicate = predicate
    }
}
