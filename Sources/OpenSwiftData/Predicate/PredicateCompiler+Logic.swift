import Foundation
import OpenSwiftDataStore

// Equality, comparison and the Boolean connectives.

extension PredicateExpressions.Equal: CompilablePredicateExpression where LHS: CompilablePredicateExpression, RHS: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(lhs)
        print.visit(rhs)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        let l = try compiler.compile(lhs), r = try compiler.compile(rhs)
        return .value(.equal(try compiler.identifierOperand(l, against: r), try compiler.identifierOperand(r, against: l)))
    }
}

extension PredicateExpressions.NotEqual: CompilablePredicateExpression where LHS: CompilablePredicateExpression, RHS: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(lhs)
        print.visit(rhs)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        let l = try compiler.compile(lhs), r = try compiler.compile(rhs)
        return .value(.notEqual(try compiler.identifierOperand(l, against: r), try compiler.identifierOperand(r, against: l)))
    }
}

extension PredicateExpressions.Comparison: CompilablePredicateExpression where LHS: CompilablePredicateExpression, RHS: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        let code = switch op {
        case .lessThan: 1
        case .lessThanOrEqual: 2
        case .greaterThan: 3
        case .greaterThanOrEqual: 4
        }
        print.add(operator: code)
        print.visit(lhs)
        print.visit(rhs)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        try PredicateCompiler.requireNativeOrder(LHS.Output.self, "comparison")
        let op: QueryExpression.ComparisonOperator = switch self.op {
        case .lessThan: .lessThan
        case .lessThanOrEqual: .lessThanOrEqual
        case .greaterThan: .greaterThan
        case .greaterThanOrEqual: .greaterThanOrEqual
        }
        return .value(.compare(op, try compiler.compile(lhs).expression, try compiler.compile(rhs).expression))
    }
}

extension PredicateExpressions.Conjunction: CompilablePredicateExpression where LHS: CompilablePredicateExpression, RHS: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(lhs)
        print.visit(rhs)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        .value(.and(try compiler.compile(lhs).expression, try compiler.compile(rhs).expression))
    }
}

extension PredicateExpressions.Disjunction: CompilablePredicateExpression where LHS: CompilablePredicateExpression, RHS: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(lhs)
        print.visit(rhs)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        .value(.or(try compiler.compile(lhs).expression, try compiler.compile(rhs).expression))
    }
}

extension PredicateExpressions.Negation: CompilablePredicateExpression where Wrapped: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(wrapped)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        .value(.not(try compiler.compile(wrapped).expression))
    }
}

extension PredicateExpressions.Conditional: CompilablePredicateExpression where Test: CompilablePredicateExpression, If: CompilablePredicateExpression, Else: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(trueBranch)
        print.visit(falseBranch)
        print.visit(test)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        let a = try compiler.compile(trueBranch), b = try compiler.compile(falseBranch)
        return PredicateCompiler.Node(
            expression: .conditional(try compiler.compile(test).expression, a.expression, b.expression),
            shape: a.shape)
    }
}
