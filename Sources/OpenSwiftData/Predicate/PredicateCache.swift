import Foundation
import OpenSwiftDataStore
import Synchronization

/// A container's compiled predicate templates, by expression type, then key paths
/// and operators (`PredicateFingerprint`), so a predicate built again with other
/// values (a lookup in a loop) is neither compiled nor planned again.
///
/// Each expression type's entry also keeps how to fingerprint a value of that type:
/// finding the `CompilablePredicateExpression` conformance of a generic expression
/// tree is a runtime lookup, made once per type rather than once per fetch.
final class PredicateCache: Sendable {
    private struct Template {
        var keyPaths: [AnyKeyPath]
        var operators: [Int]
        var compiled: CompiledPredicate
    }

    private final class Entry {
        /// Nil when the expression type does not conform: it is never cached.
        let fingerprinter: (any PredicateFingerprinting)?
        // Unchecked: read and written only under the cache's lock (the runtime's
        // exclusivity check cost about 75 instructions per access).
        @exclusivity(unchecked) var templates: [Template] = []

        init(fingerprinter: (any PredicateFingerprinting)?) {
            self.fingerprinter = fingerprinter
        }
    }

    private struct State: @unchecked Sendable {
        var entries: [ObjectIdentifier: Entry] = [:]
        var templateCount = 0
    }

    private let state = Locked(State())

    /// What `lookUp` found for an expression, with how to fingerprint expressions of
    /// its type (which a context's `PredicateMemo` keeps).
    enum Found {
        /// Its template, and its fingerprint, whose captured values are the
        /// template's parameters.
        case template(CompiledPredicate, PredicateFingerprint, any PredicateFingerprinting)
        /// No template yet: compile one and `add` it under this fingerprint.
        case uncached(PredicateFingerprint, any PredicateFingerprinting)
    }

    /// `expression`'s cached template and captured values, or its fingerprint when
    /// none is cached yet; nil when predicates of its form cannot be cached.
    /// `model`, when given, keeps templates of one expression type apart per model
    /// type: a fetch of a subclass in a hierarchy adds its own type test to the template.
    func lookUp(_ expression: any StandardPredicateExpression<Bool>, model: Any.Type? = nil) -> Found? {
        let type = ObjectIdentifier(Swift.type(of: expression))
        return state.withLock { state in
            let entry: Entry
            if let known = state.entries[type] {
                entry = known
            } else {
                entry = Entry(fingerprinter: Self.fingerprinter(for: Swift.type(of: expression)))
                state.entries[type] = entry
            }
            guard let fingerprinter = entry.fingerprinter else { return nil }
            var print = PredicateFingerprint()
            fingerprinter.fingerprint(expression, into: &print)
            if let model { print.add(operator: PredicateFingerprint.code(of: model)) }
            guard print.isCacheable else { return nil }
            let template = entry.templates.first { $0.keyPaths == print.keyPaths && $0.operators == print.operators }
            guard let template else { return .uncached(print, fingerprinter) }
            return .template(template.compiled, print, fingerprinter)
        }
    }

    /// Keeps `compiled` as the template of `expression`'s shape (the first one kept
    /// wins a race) and returns the one kept. The cache is emptied past 512 templates.
    func add(
        _ compiled: CompiledPredicate, for expression: any StandardPredicateExpression<Bool>, _ print: PredicateFingerprint
    ) -> CompiledPredicate {
        let type = ObjectIdentifier(Swift.type(of: expression))
        return state.withLock { state in
            if state.templateCount >= 512 {
                state.entries.removeAll()
                state.templateCount = 0
            }
            let entry = state.entries[type] ?? Entry(fingerprinter: Self.fingerprinter(for: Swift.type(of: expression)))
            state.entries[type] = entry
            if let kept = entry.templates.first(where: { $0.keyPaths == print.keyPaths && $0.operators == print.operators }) {
                return kept.compiled
            }
            entry.templates.append(Template(keyPaths: print.keyPaths, operators: print.operators, compiled: compiled))
            state.templateCount += 1
            return compiled
        }
    }

    private static func fingerprinter(for type: Any.Type) -> (any PredicateFingerprinting)? {
        guard let compilable = type as? any CompilablePredicateExpression.Type else { return nil }
        func make<E: CompilablePredicateExpression>(_: E.Type) -> any PredicateFingerprinting { Fingerprinter<E>() }
        return make(compilable)
    }
}

/// Fingerprints expressions of one type known to be compilable.
protocol PredicateFingerprinting {
    /// Fingerprints `expression`, which is an `E` (entries are kept by expression type).
    func fingerprint(_ expression: any StandardPredicateExpression<Bool>, into print: inout PredicateFingerprint)
}

private struct Fingerprinter<E: CompilablePredicateExpression>: PredicateFingerprinting {
    func fingerprint(_ expression: any StandardPredicateExpression<Bool>, into print: inout PredicateFingerprint) {
        // The existential is opened and its value read as an `E` in place: a cast
        // (`as! E`) cost about 420 instructions a fetch, and passing the pointee as an
        // argument (`print.visit($0.pointee)`) copied the tree and destroyed the copy,
        // about 230.
        func visit<X: StandardPredicateExpression<Bool>>(_ value: X) {
            assert(X.self == E.self)
            withUnsafePointer(to: value) { UnsafeRawPointer($0).assumingMemoryBound(to: E.self).pointee.fingerprint(into: &print) }
        }
        visit(expression)
    }
}

/// A cached compiled template, or the error compiling it gave, with the plans
/// made for it.
final class CompiledPredicate: @unchecked Sendable {
    /// The template, and which of its parameters hold identifiers compared with
    /// which entity's models (`PredicateCompiler.identifierParameters`).
    let result: Result<(QueryExpression, [Int: Int]), any Error>
    /// The plan for the first shape the template met, read without a lock: most
    /// templates meet one sort and limit. The bits of a retained `PlanEntry` (0 until
    /// set; set once, released by `deinit`): `AtomicLazyReference` runs unspecialized
    /// from its library, which cost about 1,200 instructions per fetch.
    private let firstPlanBits = Atomic<UInt>(0)
    /// Plans for other shapes.
    private let otherPlans = Locked<[PlanEntry]>([])

    private final class PlanEntry: Sendable {
        let shape: PlanShape
        let plan: QueryPlan
        init(shape: PlanShape, plan: QueryPlan) {
            self.shape = shape
            self.plan = plan
        }
    }

    init(_ result: Result<(QueryExpression, [Int: Int]), any Error>) {
        self.result = result
    }

    deinit {
        let bits = firstPlanBits.load(ordering: .acquiring)
        if bits != 0 { Unmanaged<PlanEntry>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).release() }
    }

    private var firstPlan: PlanEntry? {
        let bits = firstPlanBits.load(ordering: .acquiring)
        guard bits != 0 else { return nil }
        return Unmanaged<PlanEntry>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).takeUnretainedValue()
    }

    /// Makes `entry` the first plan unless one is set already; returns the first plan.
    private func storeFirstPlan(_ entry: PlanEntry) -> PlanEntry {
        let bits = UInt(bitPattern: Unmanaged.passRetained(entry).toOpaque())
        let (stored, _) = firstPlanBits.compareExchange(expected: 0, desired: bits, ordering: .acquiringAndReleasing)
        if stored { return entry }
        Unmanaged<PlanEntry>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).release()
        return firstPlan!
    }

    /// The plan for `shape`, made by `make` the first time. (A class: handing it out
    /// is a retain, where a copy of the struct it was cost about 700 instructions per
    /// fetch.)
    func plan(for shape: PlanShape, _ make: () -> QueryPlan) -> QueryPlan {
        if let plan = plan(for: shape) { return plan }
        let entry = PlanEntry(shape: shape, plan: make())
        if storeFirstPlan(entry) !== entry {
            otherPlans.withLock { plans in
                if plans.count >= 16 { plans.removeAll() }
                plans.append(entry)
            }
        }
        return entry.plan
    }

    /// The plan for `shape` when a fetch made one; nil when none did yet.
    func plan(for shape: PlanShape) -> QueryPlan? {
        if let first = firstPlan, first.shape == shape { return first.plan }
        return otherPlans.withLock { $0.first { $0.shape == shape } }?.plan
    }
}

/// A predicate compiled for one fetch: the engine's form (a template) and the
/// fetch's values for its parameters, and the cached template it came from (nil
/// when it cannot be cached).
///
/// The two are bound (`BoundPredicate`) only by fetches that go through
/// `FetchQuery`: a key lookup (`ModelContext.keyMatch`) reads the parameters alone.
struct CompiledFilter {
    let template: QueryExpression
    let parameters: [Value]
    let cache: CompiledPredicate?

    /// The template bound to the parameters, for testing rows.
    func bound() -> BoundPredicate { BoundPredicate(template: template, parameters: parameters) }
}
