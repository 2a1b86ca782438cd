import Foundation
import OpenSwiftDataStore

// Sequences and collections: membership, quantifiers, filters, extremes,
// prefixes and subscripts, over stored arrays and to-many relationships alike.

extension PredicateCompiler {
    /// The parts of a node that tests each element of a sequence: the compiled
    /// sequence, the variable bound to its elements, and the compiled test.
    mutating func elementTest(
        _ sequence: Any, of type: Any.Type, _ key: PredicateExpressions.VariableID, _ test: Any
    ) throws -> (source: Node, variable: Int, test: QueryExpression) {
        let source = try compile(sequence)
        try Self.requireStoredElements(source, type)
        let id = bind(key, elementsOf: source, wrapped: false)
        return (source, id, try compile(test).expression)
    }

    /// Requires that the engine can walk a sequence's elements: a to-many
    /// relationship, a string, or an array or set of natively stored values. An array
    /// of `Codable` structs or enums is stored as one JSON value, so operations on it
    /// run on models.
    static func requireStoredElements(_ node: Node, _ type: Any.Type) throws {
        if case .rows = node.shape { return }
        guard isStoredNatively(type) else {
            throw Unsupported(description: "elements of \(type), which is stored as JSON")
        }
    }
}

extension PredicateExpressions.SequenceContains: CompilablePredicateExpression where LHS: CompilablePredicateExpression, RHS: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(sequence)
        print.visit(element)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        let source = try compiler.compile(sequence)
        let member = try compiler.compile(element)
        if case .capturedIdentifiers = source.shape {
            // `ids.contains($0.persistentModelID)`: a lookup of each identifier's row.
            return .value(.contains(try compiler.identifierOperand(source, against: member), member.expression))
        }
        try PredicateCompiler.requireStoredElements(source, LHS.Output.self)
        return .value(.contains(source.expression, try compiler.identifierOperand(member, against: source)))
    }
}

extension PredicateExpressions.SequenceContainsWhere: CompilablePredicateExpression where LHS: CompilablePredicateExpression, RHS: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(sequence)
        print.visit(test)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        let (source, id, test) = try compiler.elementTest(sequence, of: LHS.Output.self, variable.key, test)
        return .value(.containsWhere(source.expression, variable: id, test: test))
    }
}

extension PredicateExpressions.SequenceAllSatisfy: CompilablePredicateExpression where LHS: CompilablePredicateExpression, RHS: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(sequence)
        print.visit(test)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        let (source, id, test) = try compiler.elementTest(sequence, of: LHS.Output.self, variable.key, test)
        return .value(.allSatisfy(source.expression, variable: id, test: test))
    }
}

extension PredicateExpressions.Filter: CompilablePredicateExpression where LHS: CompilablePredicateExpression, RHS: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(sequence)
        print.visit(filter)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        let (source, id, test) = try compiler.elementTest(sequence, of: LHS.Output.self, variable.key, filter)
        return PredicateCompiler.Node(expression: .filter(source.expression, variable: id, test: test), shape: source.shape)
    }
}

extension PredicateExpressions.SequenceStartsWith: CompilablePredicateExpression where Base: CompilablePredicateExpression, Prefix: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(base)
        print.visit(prefix)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        let source = try compiler.compile(base)
        try PredicateCompiler.requireStoredElements(source, Base.Output.self)
        return .value(.startsWith(source.expression, try compiler.compile(prefix).expression))
    }
}

extension PredicateExpressions.SequenceMinimum: CompilablePredicateExpression where Elements: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(elements)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        try PredicateCompiler.requireNativeOrder(Elements.Output.Element.self, "min()")
        return .value(.minimum(try compiler.compile(elements).expression))
    }
}

extension PredicateExpressions.SequenceMaximum: CompilablePredicateExpression where Elements: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(elements)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        try PredicateCompiler.requireNativeOrder(Elements.Output.Element.self, "max()")
        return .value(.maximum(try compiler.compile(elements).expression))
    }
}

extension PredicateExpressions.CollectionIndexSubscript: CompilablePredicateExpression where Wrapped: CompilablePredicateExpression, Index: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(wrapped)
        print.visit(index)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        guard Wrapped.Output.self is any _PredicateCollection.Type else {
            throw PredicateCompiler.Unsupported(description: "subscript of \(Wrapped.Output.self)")
        }
        let base = try compiler.compile(wrapped)
        try PredicateCompiler.requireStoredElements(base, Wrapped.Output.self)
        let shape: PredicateCompiler.Shape = if case let .rows(entity) = base.shape { .row(entity: entity) } else { .value }
        return PredicateCompiler.Node(
            expression: .subscripted(base.expression, try compiler.compile(index).expression), shape: shape)
    }
}

extension PredicateExpressions.CollectionContainsCollection: CompilablePredicateExpression where Base: CompilablePredicateExpression, Other: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(base)
        print.visit(other)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        guard Base.Output.self == String.self, Other.Output.self == String.self else {
            throw PredicateCompiler.Unsupported(description: "contains on \(Base.Output.self)")
        }
        return .value(.contains(try compiler.compile(base).expression, try compiler.compile(other).expression))
    }
}
