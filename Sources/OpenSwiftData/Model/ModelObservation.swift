import Observation

/// The Observation registrar of one model, made by `@Model`'s generated `access` on
/// the model's first read that an observer may track (`isTracking`).
///
/// `@Model` stores a reference to this rather than an `ObservationRegistrar?`: the
/// registrar is a resilient type on Linux, so an optional of it in the model cost
/// value-witness calls (copy, tag check, destroy) on every property read and every
/// model released, about 1,500 instructions per model in the W6 walk. A class
/// reference costs a nil check.
public final class _ModelObservation: Sendable {
    /// The registrar the model's observers register with.
    public let registrar = ObservationRegistrar()

    /// Creates the observation state of one model, with a fresh registrar.
    public init() {}

    /// Whether a read now may register an observer, so `@Model`'s `access` makes the
    /// registrar (`ObservationTrackingProbe`): true inside `withObservationTracking`,
    /// and wherever the probe cannot tell.
    public static var isTracking: Bool { ObservationTrackingProbe.isTracking }
}
