import Foundation
import OpenSwiftDataStore

// Arithmetic on the integer, floating-point and decimal types the engine computes
// exactly as Swift does. Narrow integers and Float stay on the fallback path:
// their overflow and rounding differ from the engine's 64-bit arithmetic.

extension PredicateCompiler {
    static func requireNativeArithmetic(_ type: Any.Type) throws {
        let supported: [Any.Type] = [Int.self, Int64.self, UInt.self, UInt64.self, Double.self, Decimal.self]
        guard supported.contains(where: { $0 == type }) else {
            throw Unsupported(description: "arithmetic on \(type) is evaluated on models")
        }
    }

    /// `lhs op rhs` on values of `type`, the shared body of every binary arithmetic node.
    mutating func arithmetic(
        _ op: QueryExpression.ArithmeticOperator, _ lhs: Any, _ rhs: Any, of type: Any.Type
    ) throws -> Node {
        try Self.requireNativeArithmetic(type)
        return .value(.arithmetic(op, try compile(lhs).expression, try compile(rhs).expression))
    }
}

extension PredicateExpressions.Arithmetic: CompilablePredicateExpression where LHS: CompilablePredicateExpression, RHS: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        let code = switch op {
        case .add: 11
        case .subtract: 12
        case .multiply: 13
        }
        print.add(operator: code)
        print.visit(lhs)
        print.visit(rhs)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        let op: QueryExpression.ArithmeticOperator = switch self.op {
        case .add: .add
        case .subtract: .subtract
        case .multiply: .multiply
        }
        return try compiler.arithmetic(op, lhs, rhs, of: LHS.Output.self)
    }
}

extension PredicateExpressions.IntDivision: CompilablePredicateExpression where LHS: CompilablePredicateExpression, RHS: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(lhs)
        print.visit(rhs)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        try compiler.arithmetic(.divide, lhs, rhs, of: LHS.Output.self)
    }
}

extension PredicateExpressions.IntRemainder: CompilablePredicateExpression where LHS: CompilablePredicateExpression, RHS: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(lhs)
        print.visit(rhs)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        try compiler.arithmetic(.remainder, lhs, rhs, of: LHS.Output.self)
    }
}

extension PredicateExpressions.FloatDivision: CompilablePredicateExpression where LHS: CompilablePredicateExpression, RHS: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(lhs)
        print.visit(rhs)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        try compiler.arithmetic(.divide, lhs, rhs, of: LHS.Output.self)
    }
}

extension PredicateExpressions.UnaryMinus: CompilablePredicateExpression where Wrapped: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(wrapped)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        try PredicateCompiler.requireNativeArithmetic(Output.self)
        return .value(.negate(try compiler.compile(wrapped).expression))
    }
}
