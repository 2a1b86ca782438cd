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
}

extension PredicateExpressions.Arithmetic: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.operators.append(AnyHashable(op))
        print.visit(lhs)
        print.visit(rhs)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        try PredicateCompiler.requireNativeArithmetic(LHS.Output.self)
        let op: QueryExpression.ArithmeticOperator = switch self.op {
        case .add: .add
        case .subtract: .subtract
        case .multiply: .multiply
        }
        return .value(.arithmetic(op, try compiler.compile(lhs).expression, try compiler.compile(rhs).expression))
    }
}

extension PredicateExpressions.IntDivision: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(lhs)
        print.visit(rhs)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        try PredicateCompiler.requireNativeArithmetic(LHS.Output.self)
        return .value(.arithmetic(.divide, try compiler.compile(lhs).expression, try compiler.compile(rhs).expression))
    }
}

extension PredicateExpressions.IntRemainder: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(lhs)
        print.visit(rhs)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        try PredicateCompiler.requireNativeArithmetic(LHS.Output.self)
        return .value(.arithmetic(.remainder, try compiler.compile(lhs).expression, try compiler.compile(rhs).expression))
    }
}

extension PredicateExpressions.FloatDivision: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(lhs)
        print.visit(rhs)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        try PredicateCompiler.requireNativeArithmetic(LHS.Output.self)
        return .value(.arithmetic(.divide, try compiler.compile(lhs).expression, try compiler.compile(rhs).expression))
    }
}

extension PredicateExpressions.UnaryMinus: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(wrapped)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        try PredicateCompiler.requireNativeArithmetic(Output.self)
        return .value(.negate(try compiler.compile(wrapped).expression))
    }
}
