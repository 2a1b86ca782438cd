import Foundation
import OpenSwiftDataStore

/// Compiles a Foundation `Predicate` into the engine's `QueryExpression`, resolved
/// against the container's schema: key paths become attribute slots, optional
/// chains and `contains { }` over relationships become traversals.
///
/// Each `PredicateExpressions` node type the compiler knows conforms to
/// `CompilablePredicateExpression` (one file per operator family) when its child
/// expressions do, so a compilable tree is walked without dynamic casts. A node
/// without that conformance makes the whole predicate fall back to materializing models and
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
        /// A model's `persistentModelID` (its row, as `.reference`, or nil).
        case identifier(entity: Int)
        /// Captured identifiers (one, optional, or a collection): converted per fetch
        /// against the entity they are compared with (`identifierParameters`).
        case capturedIdentifiers
    }

    struct Node {
        var expression: QueryExpression
        var shape: Shape

        static func value(_ expression: QueryExpression) -> Node { Node(expression: expression, shape: .value) }

        var entity: Int? {
            switch shape {
            case .value, .identifier, .capturedIdentifiers: nil
            case let .row(entity), let .rows(entity): entity
            }
        }
    }

    /// Why a predicate cannot be compiled; the fetch falls back and `explain` says why.
    struct Unsupported: Error, CustomStringConvertible {
        var description: String
    }

    let container: ModelContainer
    /// Compiling a cached template: captured values become parameters.
    let isTemplate: Bool
    /// Parameters holding captured identifiers, with the entity whose models'
    /// `persistentModelID` they are compared with.
    private(set) var identifierParameters: [Int: Int] = [:]
    private var variables: [PredicateExpressions.VariableID: Node] = [:]
    private var nextVariable = 0
    private var parameterCount = 0

    init(container: ModelContainer, isTemplate: Bool = false) {
        self.container = container
        self.isTemplate = isTemplate
    }

    /// The compiled form of `predicate`, or `Unsupported` when it must fall back.
    /// Throws `SwiftDataError.unsupportedKeyPath` for key paths that are not stored.
    ///
    /// Compiled forms are cached per predicate shape (its expression type, key paths
    /// and operators) with the captured values as parameters, so a predicate built
    /// again with other values (a lookup in a loop) only has its values converted;
    /// the cached template also keeps the plans made for it (`CompiledPredicate.plan(for:_:)`).
    static func compile<T: PersistentModel>(_ predicate: Predicate<T>, in container: ModelContainer) throws -> CompiledFilter {
        try compile(predicate.expression, variable: predicate.variable.key, model: T.self, in: container)
    }

    /// `compile(_:in:)` for a predicate taken apart: its expression tree, its
    /// variable and the model type it tests. (Not generic: the fetch path is not.)
    static func compile(
        _ expression: any StandardPredicateExpression<Bool>, variable: PredicateExpressions.VariableID, model: any PersistentModel.Type,
        in container: ModelContainer
    ) throws -> CompiledFilter {
        let template: CompiledPredicate, constants: [Any]
        switch container.compiledPredicates.lookUp(expression, model: container.hasHierarchies ? model : nil) {
        case nil:
            let compiled = try Self.compiled(expression, variable: variable, model: model, in: container, asTemplate: false)
            return CompiledFilter(template: compiled.expression, parameters: [], cache: nil)
        case let .template(cached, values)?:
            (template, constants) = (cached, values)
        case let .uncached(print)?:
            template = container.compiledPredicates.add(
                CompiledPredicate(Result {
                    let template = try Self.compiled(expression, variable: variable, model: model, in: container, asTemplate: true)
                    return (template.expression, template.compiler.identifierParameters)
                }),
                for: expression, print)
            constants = print.constants
        }
        let (compiled, identifierParameters) = try template.result.get()
        var parameters: [Value] = []
        parameters.reserveCapacity(constants.count)
        for (i, constant) in constants.enumerated() {
            if let entity = identifierParameters[i] {
                parameters.append(Self.identifierValue(of: constant, entity: entity, in: container))
            } else {
                parameters.append(try Self.value(of: constant, in: container))
            }
        }
        return CompiledFilter(template: compiled, parameters: parameters, cache: template)
    }

    /// The compiled `expression` (a template, captured values as parameters, when
    /// `asTemplate`), and the compiler that made it.
    private static func compiled(
        _ expression: any StandardPredicateExpression<Bool>, variable: PredicateExpressions.VariableID, model: any PersistentModel.Type,
        in container: ModelContainer, asTemplate: Bool
    ) throws -> (expression: QueryExpression, compiler: PredicateCompiler) {
        var compiler = PredicateCompiler(container: container, isTemplate: asTemplate)
        let entity = try container.entityIndex(of: model)
        compiler.variables[variable] = Node(expression: .root, shape: .row(entity: entity))
        var compiled = try compiler.compile(expression).expression
        // A subclass's fetch reads the rows of its class and its subclasses.
        if let test = typeFilter(for: model, in: container) { compiled = .and(compiled, test) }
        return (compiled, compiler)
    }

    /// The expression of `node` as one side of an equality or list test with
    /// `other`: a captured identifier is compared only with a model's
    /// `persistentModelID`, and is converted for that model's entity per fetch; two
    /// models' identifiers only when they are of one entity (rows of different
    /// entities share numbers). Anything else is evaluated on models.
    mutating func identifierOperand(_ node: Node, against other: Node) throws -> QueryExpression {
        switch (node.shape, other.shape) {
        case (.capturedIdentifiers, .identifier(let entity)):
            guard case let .parameter(i) = node.expression else {
                throw Unsupported(description: "a captured identifier outside a cached predicate")
            }
            identifierParameters[i] = entity
        case (.capturedIdentifiers, _):
            throw Unsupported(description: "a captured identifier compared with something other than a model's persistentModelID")
        case let (.identifier(a), .identifier(b)) where a != b:
            throw Unsupported(description: "identifiers of models of two entities")
        default:
            break
        }
        return node.expression
    }

    /// A captured identifier (or collection of them) for comparing with the rows of
    /// `entity`: a saved model's row; an unsaved model's temporary row (negative: no
    /// stored row has it, but a pending insert kept as a row is tested under it, and
    /// temporary keys are unique in the process); for an identifier of another entity
    /// or store, row 0, which no row has.
    static func identifierValue(of value: Any, entity: Int, in container: ModelContainer) -> Value {
        let name = container.layout(at: entity).name
        func row(_ id: PersistentIdentifier) -> Value {
            if id.isTemporary { return .reference(RowID(id.id.key)) }
            guard id.storeIdentifier == container.identifierScopes[entity].storeIdentifier, id.entityName == name else {
                return .reference(RowID(0))
            }
            return .reference(RowID(id.id.key))
        }
        if let id = value as? PersistentIdentifier { return row(id) }
        if let ids = value as? [PersistentIdentifier] { return .array(ids.map(row)) }
        if let ids = value as? Set<PersistentIdentifier> { return .array(ids.map(row)) }
        return .null
    }

    /// The next parameter's position, in the order the fingerprint lists constants.
    mutating func nextParameter() -> Int {
        defer { parameterCount += 1 }
        return parameterCount
    }

    /// Compiles a predicate's root, whose type is known only at run time: one
    /// dynamic cast, after which children are reached by static dispatch (each node
    /// conforms only when its children do; a few helpers over arithmetic, element
    /// tests and ranges still cast).
    mutating func compile(_ expression: Any) throws -> Node {
        guard let compilable = expression as? any CompilablePredicateExpression else {
            // One node anywhere the compiler does not know makes the root not conform.
            // Key paths to properties that are not stored are still an error, as when
            // compiling reached them (the fallback would read default values).
            try Self.requireStoredKeyPaths(in: expression, container: container)
            let node = Self.firstUnsupportedNode(in: expression) ?? Swift.type(of: expression)
            throw Unsupported(description: "\(node) is not compiled natively")
        }
        return try compilable.compile(with: &self)
    }

    /// Throws `unsupportedKeyPath` for a key path in the predicate's expressions to a
    /// property of a model that is not stored (`@Transient`, computed).
    static func requireStoredKeyPaths(in node: Any, container: ModelContainer) throws {
        for child in Mirror(reflecting: node).children {
            if let keyPath = child.value as? AnyKeyPath {
                guard let model = Swift.type(of: keyPath).rootType as? any PersistentModel.Type,
                      let entity = try? container.entityIndex(of: model) else { continue }
                let layout = container.layout(at: entity)
                guard layout.slots[keyPath] == nil else { continue }
                throw SwiftDataError(
                    .unsupportedKeyPath,
                    "\(keyPath) is not a stored property of \(layout.name) (it is @Transient or computed); predicates can only use stored properties")
            }
            // Only expressions are walked: a captured value is data, not a predicate.
            if child.value is any PredicateExpression { try requireStoredKeyPaths(in: child.value, container: container) }
        }
    }

    /// The type of the deepest expression the compiler does not know: one that does not
    /// conform although every expression below it does.
    static func firstUnsupportedNode(in node: Any) -> Any.Type? {
        guard !(node is any CompilablePredicateExpression) else { return nil }
        for child in Mirror(reflecting: node).children where child.value is any PredicateExpression {
            if let deeper = firstUnsupportedNode(in: child.value) { return deeper }
        }
        return Swift.type(of: node)
    }

    /// Compiles a child node.
    mutating func compile<E: CompilablePredicateExpression>(_ expression: E) throws -> Node {
        try expression.compile(with: &self)
    }

    /// A fresh variable for `key`, denoting what `source`'s elements (or wrapped value) are.
    mutating func bind(_ key: PredicateExpressions.VariableID, elementsOf source: Node, wrapped: Bool) -> Int {
        let id = nextVariable
        nextVariable += 1
        let shape: Shape = switch source.shape {
        case .value, .identifier, .capturedIdentifiers: .value
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
    /// Adds what tells this subtree apart from others of its type (key paths,
    /// operators) and its captured values, in the order `compile` meets them.
    func fingerprint(into print: inout PredicateFingerprint)
}

/// What identifies a predicate's compiled form among those of its expression
/// type (`PredicateCache`), and the values it captured.
struct PredicateFingerprint {
    var keyPaths: [AnyKeyPath] = []
    /// Operator codes (a comparison's 1–4, an arithmetic's 11–13) and the fetched
    /// model type's address: integers, since comparing `AnyHashable`s cost about
    /// 3,000 instructions each, per fetch.
    var operators: [Int] = []
    var constants: [Any] = []
    /// False when compiling reads a captured value itself (it cannot be a parameter)
    /// or meets a node it does not know.
    var isCacheable = true

    /// Visits a node whose type is known only at run time: one dynamic cast. (A
    /// predicate's root goes through `PredicateCache`, which finds the conformance
    /// once per expression type.)
    mutating func visit(_ node: Any) {
        guard let compilable = node as? any CompilablePredicateExpression else {
            isCacheable = false
            return
        }
        compilable.fingerprint(into: &self)
    }

    /// Visits a child node.
    mutating func visit<E: CompilablePredicateExpression>(_ node: E) {
        node.fingerprint(into: &self)
    }
}

extension PredicateCompiler {
    /// Whether values of `type` are stored as the engine's own values (strings,
    /// numbers, arrays of them…) rather than as `Codable` JSON.
    static func isStoredNatively(_ type: Any.Type) -> Bool {
        unwrappedType(type) is any _StorableValue.Type
    }

    /// Requires that values of `type` order the same way stored values do.
    static func requireNativeOrder(_ type: Any.Type, _ what: String) throws {
        guard isStoredNatively(type) else {
            throw Unsupported(description: "\(what) on \(type) is evaluated on models")
        }
    }
}
