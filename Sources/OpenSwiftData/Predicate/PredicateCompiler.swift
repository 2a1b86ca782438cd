import Foundation
import OpenSwiftDataStore

/// Compiles a Foundation `Predicate` into the engine's `QueryExpression`, resolved
/// against the container's schema: key paths become attribute slots, optional
/// chains and `contains { }` over relationships become traversals.
///
/// Each `PredicateExpressions` node type the compiler knows conforms to
/// `CompilablePredicateExpression` (one file per operator family). A node without
/// that conformance makes the whole predicate fall back to materializing models and
/// calling `Predicate.evaluate`: slower, never wrong. A key path to a property that is
/// not stored (`@Transient`, computed) is an error instead, because the fallback
/// would silently read default values.
struct PredicateCompiler {
    /// What a compiled node denotes.
    enum Shape {
        case value
        /// One row (or nil) of an entity.
        case row(entity: Int)
        /// Rows of an entity (a to-many relationship, or a filter of one).
        case rows(entity: Int)
    }

    struct Node {
        var expression: QueryExpression
        var shape: Shape

        static func value(_ expression: QueryExpression) -> Node { Node(expression: expression, shape: .value) }

        var entity: Int? {
            switch shape {
            case .value: nil
            case let .row(entity), let .rows(entity): entity
            }
        }
    }

    /// Why a predicate cannot be compiled; the fetch falls back and `explain` says why.
    struct Unsupported: Error, CustomStringConvertible {
        var description: String
    }

    let container: ModelContainer
    private var variables: [PredicateExpressions.VariableID: Node] = [:]
    private var nextVariable = 0

    init(container: ModelContainer) {
        self.container = container
    }

    /// The compiled form of `predicate`, or `Unsupported` when it must fall back.
    /// Throws `SwiftDataError.unsupportedKeyPath` for key paths that are not stored.
    static func compile<T: PersistentModel>(_ predicate: Predicate<T>, in container: ModelContainer) throws -> QueryExpression {
        var compiler = PredicateCompiler(container: container)
        let entity = try container.entityIndex(of: T.self)
        compiler.variables[predicate.variable.key] = Node(expression: .root, shape: .row(entity: entity))
        return try compiler.compile(predicate.expression).expression
    }

    mutating func compile(_ expression: Any) throws -> Node {
        guard let compilable = expression as? any CompilablePredicateExpression else {
            throw Unsupported(description: "\(Swift.type(of: expression)) is not compiled natively")
        }
        return try compilable.compile(with: &self)
    }

    /// A fresh variable for `key`, denoting what `source`'s elements (or wrapped value) are.
    mutating func bind(_ key: PredicateExpressions.VariableID, elementsOf source: Node, wrapped: Bool) -> Int {
        let id = nextVariable
        nextVariable += 1
        let shape: Shape = switch source.shape {
        case .value: .value
        case let .row(entity): wrapped ? .row(entity: entity) : .value
        case let .rows(entity): .row(entity: entity)
        }
        variables[key] = Node(expression: .variable(id), shape: shape)
        return id
    }

    func variable(_ key: PredicateExpressions.VariableID) throws -> Node {
        guard let node = variables[key] else { throw Unsupported(description: "unbound predicate variable") }
        return node
    }

    func layout(of entity: Int) -> EntityLayout { container.layout(at: entity) }

    func entityIndex(of type: any PersistentModel.Type) throws -> Int {
        try container.entityIndex(of: type)
    }
}

/// A `PredicateExpressions` node the compiler translates.
protocol CompilablePredicateExpression {
    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node
}

extension PredicateCompiler {
    /// Requires that values of `type` order the same way stored values do.
    static func requireNativeOrder(_ type: Any.Type, _ what: String) throws {
        let bare = unwrappedType(type)
        guard bare is any _StorableValue.Type else {
            throw Unsupported(description: "\(what) on \(type) is evaluated on models")
        }
    }
}
