import Foundation
import OpenSwiftDataStore

// `(a..<b).contains(x)` and `(a...b).contains(x)`, with ranges built in the
// predicate or captured as constants.

extension PredicateExpressions.RangeExpressionContains: CompilablePredicateExpression where Element: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(element)
        if let built = range as? any RangeNode {
            built.fingerprint(into: &print)
        } else {
            // A captured range is read while compiling: such predicates are not cached.
            print.isCacheable = false
        }
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        try PredicateCompiler.requireNativeOrder(Element.Output.self, "range")
        let element = try compiler.compile(element).expression
        if let built = range as? any RangeNode {
            let (lower, upper, closed) = try built.bounds(with: &compiler)
            return .value(.inRange(element, lower: lower, upper: upper, closed: closed))
        }
        if let constant = range as? any ConstantRange, let (lower, upper, closed) = constant.storedBounds {
            return .value(.inRange(element, lower: .constant(lower), upper: .constant(upper), closed: closed))
        }
        throw PredicateCompiler.Unsupported(description: "range \(RangeExpression.self)")
    }
}

/// A range built inside the predicate.
protocol RangeNode {
    func bounds(with compiler: inout PredicateCompiler) throws -> (QueryExpression, QueryExpression, Bool)
    func fingerprint(into print: inout PredicateFingerprint)
}

extension PredicateExpressions.Range: RangeNode where LHS: CompilablePredicateExpression, RHS: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(lower)
        print.visit(upper)
    }

    func bounds(with compiler: inout PredicateCompiler) throws -> (QueryExpression, QueryExpression, Bool) {
        (try compiler.compile(lower).expression, try compiler.compile(upper).expression, false)
    }
}

extension PredicateExpressions.ClosedRange: RangeNode where LHS: CompilablePredicateExpression, RHS: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(lower)
        print.visit(upper)
    }

    func bounds(with compiler: inout PredicateCompiler) throws -> (QueryExpression, QueryExpression, Bool) {
        (try compiler.compile(lower).expression, try compiler.compile(upper).expression, true)
    }
}

/// A captured range constant.
protocol ConstantRange {
    var storedBounds: (Value, Value, Bool)? { get }
}

extension PredicateExpressions.Value: ConstantRange {
    var storedBounds: (Value, Value, Bool)? {
        (value as? any StorableRange)?.storedBounds
    }
}

protocol StorableRange {
    var storedBounds: (Value, Value, Bool)? { get }
}

extension Range: StorableRange {
    var storedBounds: (Value, Value, Bool)? {
        guard let lower = lowerBound as? any _StorableValue, let upper = upperBound as? any _StorableValue else { return nil }
        return (lower._storedValue, upper._storedValue, false)
    }
}

extension ClosedRange: StorableRange {
    var storedBounds: (Value, Value, Bool)? {
        guard let lower = lowerBound as? any _StorableValue, let upper = upperBound as? any _StorableValue else { return nil }
        return (lower._storedValue, upper._storedValue, true)
    }
}
