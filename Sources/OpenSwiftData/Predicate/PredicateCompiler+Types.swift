import Foundation
import OpenSwiftDataStore

// Model inheritance in predicates: `$0 is BusinessTrip`, and the rows a fetch of a
// subclass reads. A class hierarchy is one engine entity whose hidden discriminator
// attribute names each row's class (`EntityLayout.Hierarchy`).

extension PredicateCompiler {
    /// Whether the row `row` of `entity` is a `type`: its discriminator names `type` or
    /// one of its subclasses. Nil when every row of the entity is one (the root of a
    /// hierarchy, or a model without subclasses).
    static func typeTest(
        of type: any PersistentModel.Type, on row: QueryExpression, entity: Int, in container: ModelContainer
    ) -> QueryExpression? {
        guard let layout = container.layout(of: type), (try? container.entityIndex(of: type)) == entity else {
            // Another entity's type: no row of this one is one.
            return .constant(.bool(false))
        }
        guard let hierarchy = layout.hierarchy, !hierarchy.isRoot else { return nil }
        let discriminator = QueryExpression.attribute(row, entity: entity, slot: hierarchy.discriminator)
        let tests = hierarchy.memberNames.map { QueryExpression.equal(discriminator, .constant(.string($0))) }
        return tests.dropFirst().reduce(tests[0]) { .or($0, $1) }
    }

    /// The filter a fetch of `type` adds to its predicate: nil unless `type` is a
    /// subclass in a hierarchy.
    static func typeFilter(for type: any PersistentModel.Type, in container: ModelContainer) -> QueryExpression? {
        guard container.hasHierarchies, let entity = try? container.entityIndex(of: type) else { return nil }
        return typeTest(of: type, on: .root, entity: entity, in: container)
    }
}

extension PredicateExpressions.TypeCheck: CompilablePredicateExpression where Input: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(input)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        let node = try compiler.compile(input)
        guard case let .row(entity) = node.shape, let desired = Desired.self as? any PersistentModel.Type else {
            throw PredicateCompiler.Unsupported(description: "a type test of \(Input.Output.self) as \(Desired.self)")
        }
        return .value(
            PredicateCompiler.typeTest(of: desired, on: node.expression, entity: entity, in: compiler.container)
                ?? .constant(.bool(true)))
    }
}
