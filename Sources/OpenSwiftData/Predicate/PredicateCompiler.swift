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
    /// `memo`, the fetching context's, is tried before the container's cache.
    static func compile(
        _ expression: any StandardPredicateExpression<Bool>, variable: PredicateExpressions.VariableID, model: any PersistentModel.Type,
        in container: ModelContainer, memo: PredicateMemo? = nil
    ) throws -> CompiledFilter {
        let template: CompiledPredicate
        var parameters: [Value], unconverted: [(parameter: Int, value: Any)]
        let modelKey: Any.Type? = container.hasHierarchies ? model : nil
        if let found = memo?.lookUp(expression, model: modelKey) {
            (template, parameters, unconverted) = found
        } else {
            switch container.compiledPredicates.lookUp(expression, model: modelKey) {
            case nil:
                let compiled = try Self.compiled(expression, variable: variable, model: model, in: container, asTemplate: false)
                return CompiledFilter(template: compiled.expression, parameters: [], cache: nil)
            case let .template(cached, print, fingerprinter)?:
                (template, parameters, unconverted) = (cached, print.parameters, print.unconverted)
                memo?.remember(template, for: expression, print.shape, fingerprinter: fingerprinter)
            case let .uncached(print, fingerprinter)?:
                template = container.compiledPredicates.add(
                    CompiledPredicate(Result {
                        let template = try Self.compiled(expression, variable: variable, model: model, in: container, asTemplate: true)
                        return (template.expression, template.compiler.identifierParameters)
                    }),
                    for: expression, print)
                (parameters, unconverted) = (print.parameters, print.unconverted)
                memo?.remember(template, for: expression, print.shape, fingerprinter: fingerprinter)
            }
        }
        let (compiled, identifierParameters) = try template.result.get()
        for (i, constant) in unconverted {
            if let entity = identifierParameters[i] {
                parameters[i] = Self.identifierValue(of: constant, entity: entity, in: container)
            } else {
                parameters[i] = try Self.value(of: constant, in: container)
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

    /// The next parameter's position, in the order the fingerprint captures values (`PredicateFingerprint.parameters`).
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
    private(set) var keyPaths: [AnyKeyPath] = []
    /// Operator codes (a comparison's 1–4, an arithmetic's 11–13) and the fetched
    /// model type's address: integers, since comparing `AnyHashable`s cost about
    /// 3,000 instructions each, per fetch.
    private(set) var operators: [Int] = []
    /// The captured values in the engine's form, in the order `compile` meets them
    /// (the template's parameters); a placeholder for each one `unconverted` holds.
    var parameters: [Value] = []
    /// Captured values of other types than the commonest, with their parameter's
    /// position: converted once the template is known (`PredicateCompiler.compile`),
    /// which tells which are identifiers and for which entity.
    var unconverted: [(parameter: Int, value: Any)] = []
    /// False when compiling reads a captured value itself (it cannot be a parameter)
    /// or meets a node it does not know.
    var isCacheable = true
    /// A known fingerprint's key paths and operators, which this one's are compared
    /// with as they are met instead of being recorded (`PredicateMemo`); nil to record.
    /// Unretained: the memo holds it while the expression is fingerprinted.
    private unowned(unsafe) let expected: PredicateShape?
    /// How many key paths and operators were compared with `expected`'s.
    private var compared = (keyPaths: 0, operators: 0)
    /// Whether one of them differed from `expected`'s.
    private var differs = false

    /// A fingerprint that records its key paths and operators.
    init() {
        expected = nil
    }

    /// A fingerprint that compares its key paths and operators with `shape`'s and
    /// records neither (see `matchesExpected`); `shape` must outlive it.
    init(expecting shape: PredicateShape) {
        expected = shape
    }

    /// The key paths and operators recorded.
    var shape: PredicateShape { PredicateShape(keyPaths: keyPaths, operators: operators) }

    /// Whether the key paths and operators met are exactly the expected ones, and
    /// the predicate can be cached.
    var matchesExpected: Bool {
        guard let expected else { return false }
        return isCacheable && !differs
            && compared.keyPaths == expected.keyPaths.count && compared.operators == expected.operators.count
    }

    /// The operator code that keeps the templates of a fetched model type apart from
    /// those of other types (in a hierarchy, a subclass's fetch tests the type).
    static func code(of model: Any.Type) -> Int { Int(bitPattern: UInt(bitPattern: ObjectIdentifier(model))) }

    /// Adds a key path the predicate reads.
    mutating func add(keyPath: AnyKeyPath) {
        guard let expected else { return keyPaths.append(keyPath) }
        // (`==` on key paths tests identity first: a literal's key path is one object.)
        if compared.keyPaths >= expected.keyPaths.count || expected.keyPaths[compared.keyPaths] != keyPath { differs = true }
        compared.keyPaths += 1
    }

    /// Adds an operator code, or the fetched model type's address.
    mutating func add(operator code: Int) {
        guard let expected else { return operators.append(code) }
        if compared.operators >= expected.operators.count || expected.operators[compared.operators] != code { differs = true }
        compared.operators += 1
    }

    /// Adds a captured value. One of the commonest types is converted here, told by
    /// its metadata: boxed as `Any` and converted after the lookup
    /// (`PredicateCompiler.value(of:in:)`), a captured string cost about 400
    /// instructions a fetch in the box, its release and the conversion (W2).
    mutating func capture<C>(_ value: C) {
        func load<T>(_: T.Type) -> T { withUnsafePointer(to: value) { UnsafeRawPointer($0).load(as: T.self) } }
        switch ObjectIdentifier(C.self) {
        case ObjectIdentifier(String.self): parameters.append(.string(load(String.self)))
        case ObjectIdentifier(Int.self): parameters.append(.int(Int64(load(Int.self))))
        case ObjectIdentifier(Date.self): parameters.append(.date(load(Date.self)))
        case ObjectIdentifier(Double.self): parameters.append(.double(load(Double.self)))
        default:
            unconverted.append((parameters.count, value))
            parameters.append(.null)
        }
    }

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

/// The key paths and operators of a fingerprint, which others are compared with.
final class PredicateShape {
    let keyPaths: [AnyKeyPath]
    let operators: [Int]

    init(keyPaths: [AnyKeyPath], operators: [Int]) {
        self.keyPaths = keyPaths
        self.operators = operators
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
