import Foundation
import OpenSwiftDataStore

// Optional chaining, nil-coalescing and forced unwrapping.

extension PredicateExpressions.OptionalFlatMap: CompilablePredicateExpression where LHS: CompilablePredicateExpression, RHS: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(wrapped)
        print.visit(transform)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        let source = try compiler.compile(wrapped)
        let id = compiler.bind(variable.key, elementsOf: source, wrapped: true)
        let body = try compiler.compile(transform)
        return PredicateCompiler.Node(
            expression: .optionalMap(source.expression, variable: id, transform: body.expression), shape: body.shape)
    }
}

extension PredicateExpressions.NilCoalesce: CompilablePredicateExpression where LHS: CompilablePredicateExpression, RHS: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(lhs)
        print.visit(rhs)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        let a = try compiler.compile(lhs), b = try compiler.compile(rhs)
        return PredicateCompiler.Node(expression: .nilCoalesce(a.expression, b.expression), shape: a.shape)
    }
}

extension PredicateExpressions.ForcedUnwrap: CompilablePredicateExpression where Inner: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(inner)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        let inner = try compiler.compile(inner)
        return PredicateCompiler.Node(expression: .forceUnwrap(inner.expression), shape: inner.shape)
    }
}
