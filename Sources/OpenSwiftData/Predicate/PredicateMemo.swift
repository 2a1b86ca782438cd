import Foundation
import OpenSwiftDataStore

/// The templates a context's last few predicates found in the container's cache
/// (`PredicateCache`), which the context's next fetches try first.
///
/// A lookup in a loop fetches with predicates of one shape, each built again with
/// another value (W2). Through the container's cache alone, each such fetch took a
/// lock, found its expression type in a dictionary, recorded the fingerprint's key
/// paths and operators in new arrays and compared them with the templates': about
/// 1,300 instructions beside the fingerprint itself. Here the fingerprint compares
/// its key paths and operators with the remembered ones as it meets them and records
/// nothing, with no lock: a context is used on one thread at a time (it is not
/// `Sendable`). A predicate of another shape goes to the container's cache, and
/// takes the place of the oldest one remembered.
final class PredicateMemo {
    private struct Remembered {
        let expressionType: ObjectIdentifier
        let fingerprinter: any PredicateFingerprinting
        let shape: PredicateShape
        let template: CompiledPredicate
    }

    /// A few, so that a loop that alternates two or three predicates still finds
    /// them all; each is tried only by expressions of its type.
    private static let capacity = 4
    // Unchecked: a context's fetches run one at a time (the runtime's exclusivity
    // check cost about 75 instructions per access).
    @exclusivity(unchecked) private var remembered: [Remembered] = []
    /// Which one the next predicate replaces once `capacity` are remembered.
    @exclusivity(unchecked) private var oldest = 0
    /// The parameters of the last predicate found, whose buffer the next one fills:
    /// the fetch that took them has ended by then, so the buffer is this memo's
    /// alone again, and a lookup allocates and frees no array (about 400
    /// instructions of a W2 lookup).
    @exclusivity(unchecked) private var parameterBuffer: [Value] = []

    /// The remembered template of `expression`'s shape, and the expression's
    /// captured values as its parameters (`PredicateFingerprint.parameters` and
    /// `.unconverted`); nil when none is remembered. `model` is `PredicateCache.lookUp`'s.
    func lookUp(
        _ expression: any StandardPredicateExpression<Bool>, model: Any.Type?
    ) -> (CompiledPredicate, parameters: [Value], unconverted: [(parameter: Int, value: Any)])? {
        let type = ObjectIdentifier(Swift.type(of: expression))
        for i in remembered.indices where remembered[i].expressionType == type {
            var print = PredicateFingerprint(expecting: remembered[i].shape)
            swap(&print.parameters, &parameterBuffer)
            print.parameters.removeAll(keepingCapacity: true)
            remembered[i].fingerprinter.fingerprint(expression, into: &print)
            if let model { print.add(operator: PredicateFingerprint.code(of: model)) }
            parameterBuffer = print.parameters
            if print.matchesExpected { return (remembered[i].template, print.parameters, print.unconverted) }
        }
        return nil
    }

    /// Remembers `template` for expressions of `expression`'s type with `shape`'s key
    /// paths and operators.
    func remember(
        _ template: CompiledPredicate, for expression: any StandardPredicateExpression<Bool>,
        _ shape: PredicateShape, fingerprinter: any PredicateFingerprinting
    ) {
        let entry = Remembered(
            expressionType: ObjectIdentifier(Swift.type(of: expression)), fingerprinter: fingerprinter,
            shape: shape, template: template)
        if remembered.count < Self.capacity {
            remembered.append(entry)
        } else {
            remembered[oldest] = entry
            oldest = (oldest + 1) % Self.capacity
        }
    }
}
