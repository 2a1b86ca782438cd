import Foundation
import OpenSwiftDataStore

// Variables, constants and key paths: the leaves of a predicate.

extension PredicateExpressions.Variable: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {}

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        try compiler.variable(key)
    }
}

extension PredicateExpressions.Value: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.capture(value)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        if compiler.isTemplate {
            // A parameter in place of the captured value, filled in for each predicate.
            let node = try PredicateCompiler.constantNode(for: Output.self, value: nil, compiler: compiler)
            return PredicateCompiler.Node(expression: .parameter(compiler.nextParameter()), shape: node.shape)
        }
        return try PredicateCompiler.constantNode(for: Output.self, value: value, compiler: compiler)
    }
}

extension PredicateCompiler {
    /// The node for a captured `value` of `type`; with no value, only its shape
    /// (and whether the type can be captured at all).
    static func constantNode(for type: Any.Type, value: Any?, compiler: PredicateCompiler) throws -> Node {
        let unwrapped = unwrappedType(type)
        if unwrapped == PersistentIdentifier.self || unwrapped == [PersistentIdentifier].self || unwrapped == Set<PersistentIdentifier>.self {
            // Converted per fetch once the compared entity is known (`identifierOperand`).
            guard value == nil else { throw Unsupported(description: "a captured identifier outside a cached predicate") }
            return Node(expression: .constant(.null), shape: .capturedIdentifiers)
        }
        if let modelType = unwrappedType(type) as? any PersistentModel.Type {
            let entity = try compiler.entityIndex(of: modelType)
            return Node(expression: try value.map(compiler.constant) ?? .constant(.null), shape: .row(entity: entity))
        }
        guard type == ComparisonResult.self || unwrappedType(type) is any _StorableValue.Type
            || unwrappedType(type) is any Encodable.Type
        else {
            throw Unsupported(description: "a captured \(type)")
        }
        return .value(try value.map(compiler.constant) ?? .constant(.null))
    }

    /// A captured value in the engine's form: a saved model is its row, an unsaved
    /// one cannot match stored rows (so the predicate falls back).
    func constant(_ value: Any) throws -> QueryExpression {
        .constant(try Self.value(of: value, in: container))
    }

    /// A captured value in the engine's form.
    static func value(of value: Any, in container: ModelContainer) throws -> Value {
        // The commonest kinds by their exact type first: comparing metadata is a few
        // instructions, where each failed cast below takes a few hundred (a `Date`,
        // third in line, cost about 1,100 instructions, four per window query in W5).
        // Bridged and other values go through the casts.
        switch ObjectIdentifier(type(of: value)) {
        case ObjectIdentifier(String.self): return .string(load(value, as: String.self))
        case ObjectIdentifier(Int.self): return .int(Int64(load(value, as: Int.self)))
        case ObjectIdentifier(Date.self): return .date(load(value, as: Date.self))
        case ObjectIdentifier(Double.self): return .double(load(value, as: Double.self))
        default: break
        }
        // A cast to a concrete type compares metadata, a cast to a protocol looks a
        // conformance up.
        if let string = value as? String { return .string(string) }
        if let int = value as? Int { return .int(Int64(int)) }
        if let date = value as? Date { return .date(date) }
        if let double = value as? Double { return .double(double) }
        // Most other captured values are plain storable values: one cast instead of three.
        if let storable = value as? any _StorableValue { return storable._storedValue }
        if let model = value as? any PersistentModel {
            let id = model.persistentModelID
            guard !id.isTemporary, container.isStoredHere(id) else {
                throw Unsupported(description: "a captured unsaved model")
            }
            return .reference(RowID(id.id.key))
        }
        if let result = value as? ComparisonResult { return .int(Int64(result.rawValue)) }
        if value is PersistentIdentifier || value is [PersistentIdentifier] || value is Set<PersistentIdentifier> {
            // Only a comparison with a model's persistentModelID converts identifiers.
            throw Unsupported(description: "a captured identifier compared with something other than a model's persistentModelID")
        }
        return ValueCoding.encode(value)
    }

    /// The payload of `value`, whose dynamic type is exactly `T`, copied out without
    /// a dynamic cast (`as! String` cost about 300 instructions per fetch).
    private static func load<T>(_ value: Any, as _: T.Type) -> T {
        func payload<V>(_ opened: V) -> T {
            precondition(V.self == T.self)
            return withUnsafePointer(to: opened) { UnsafeRawPointer($0).load(as: T.self) }
        }
        return _openExistential(value, do: payload)
    }
}

extension PredicateExpressions.NilLiteral: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {}

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        .value(.constant(.null))
    }
}

extension PredicateExpressions.KeyPath: CompilablePredicateExpression where Root: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.add(keyPath: keyPath)
        print.visit(root)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        let base = try compiler.compile(root)
        switch base.shape {
        case let .row(entity):
            let layout = compiler.layout(of: entity)
            switch layout.slots[keyPath] {
            case let .attribute(i)?:
                if let transformer = layout.attributes[i].transformer {
                    // Stored as the transformer's Data: only the models hold comparable values.
                    throw PredicateCompiler.Unsupported(description: "\(layout.attributes[i].name) is stored through the value transformer \(transformer)")
                }
                return .value(.attribute(base.expression, entity: entity, slot: i))
            case let .relationship(j)?:
                let relationship = layout.relationships[j]
                let destination = try compiler.entityIndex(of: relationship.destinationType)
                let slot = layout.attributes.count + j
                return relationship.isToMany
                    ? PredicateCompiler.Node(
                        expression: .toMany(base.expression, entity: entity, slot: slot, destination: destination),
                        shape: .rows(entity: destination))
                    : PredicateCompiler.Node(
                        expression: .toOne(base.expression, entity: entity, slot: slot, destination: destination),
                        shape: .row(entity: destination))
            case nil:
                if PredicateCompiler.isIdentifierKeyPath(keyPath, of: layout.modelType) {
                    return PredicateCompiler.Node(expression: base.expression, shape: .identifier(entity: entity))
                }
                throw SwiftDataError(
                    .unsupportedKeyPath,
                    "\(keyPath) is not a stored property of \(layout.name) (it is @Transient or computed); predicates can only use stored properties")
            }
        case let .rows(entity):
            switch ValueKeyPath(keyPath, on: Root.Output.self) {
            case .count?: return .value(.count(base.expression))
            case .isEmpty?: return .value(.isEmpty(base.expression))
            case .first?: return PredicateCompiler.Node(expression: .first(base.expression), shape: .row(entity: entity))
            case .last?: return PredicateCompiler.Node(expression: .last(base.expression), shape: .row(entity: entity))
            default: throw PredicateCompiler.Unsupported(description: "\(keyPath) on related models")
            }
        case .identifier, .capturedIdentifiers:
            throw PredicateCompiler.Unsupported(description: "\(keyPath) on an identifier")
        case .value:
            // A collection of Codable values is stored as one JSON value: its count and
            // elements are not the engine's to read.
            switch PredicateCompiler.isStoredNatively(Root.Output.self) ? ValueKeyPath(keyPath, on: Root.Output.self) : nil {
            case .count?: return .value(.count(base.expression))
            case .isEmpty?: return .value(.isEmpty(base.expression))
            case .first?: return .value(.first(base.expression))
            case .last?: return .value(.last(base.expression))
            case .localizedLowercase?: return .value(.localizedLowercase(base.expression))
            case .localizedUppercase?: return .value(.localizedUppercase(base.expression))
            case nil: return .value(try PredicateCompiler.codableMember(keyPath, of: base.expression))
            }
        }
    }
}

extension PredicateCompiler {
    /// Whether `keyPath` is `\.persistentModelID` of models of `type`. (Not `\.id`:
    /// as `Identifiable`'s requirement its key path names the requirement, which no
    /// key path made here equals.)
    static func isIdentifierKeyPath(_ keyPath: AnyKeyPath, of type: any PersistentModel.Type) -> Bool {
        func path<M: PersistentModel>(_: M.Type) -> AnyKeyPath { \M.persistentModelID }
        return keyPath == path(type)
    }

    /// A stored property of a `Codable` value (a composite attribute, or a member of
    /// one), read from the value's stored JSON; nested members become one path.
    static func codableMember<Root, Member>(_ keyPath: KeyPath<Root, Member>, of base: QueryExpression) throws -> QueryExpression {
        guard !isStoredNatively(Root.self), Root.self is any Codable.Type else {
            throw Unsupported(description: "\(keyPath) on a value")
        }
        let type = ValueCoding.valueType(of: Member.self)
        guard Value.canReadMember(as: type) else {
            throw Unsupported(description: "\(keyPath) reads a \(Member.self), which is compared on models")
        }
        guard let path = CodableMemberProbe.codingPath(of: keyPath) else {
            throw Unsupported(description: "\(keyPath) is not a stored property whose JSON member could be found")
        }
        if case let .member(inner, prefix, .codable) = base {
            return .member(inner, path: prefix + path, type: type)
        }
        return .member(base, path: path, type: type)
    }
}

/// The key paths on values (collections and strings) the engine evaluates itself.
enum ValueKeyPath {
    case count, isEmpty, first, last, localizedLowercase, localizedUppercase

    init?(_ keyPath: AnyKeyPath, on root: Any.Type) {
        if root == String.self {
            switch keyPath {
            case \String.count: self = .count
            case \String.isEmpty: self = .isEmpty
            case \String.localizedLowercase: self = .localizedLowercase
            case \String.localizedUppercase: self = .localizedUppercase
            default: return nil
            }
            return
        }
        guard let collection = root as? any _PredicateCollection.Type, let kind = collection._valueKeyPath(keyPath) else {
            return nil
        }
        self = kind
    }
}

/// Collections whose `count`, `isEmpty`, `first` and `last` predicates may use.
protocol _PredicateCollection {
    static func _valueKeyPath(_ keyPath: AnyKeyPath) -> ValueKeyPath?
}

extension Array: _PredicateCollection {
    static func _valueKeyPath(_ keyPath: AnyKeyPath) -> ValueKeyPath? {
        switch keyPath {
        case \Self.count: .count
        case \Self.isEmpty: .isEmpty
        case \Self.first: .first
        case \Self.last: .last
        default: nil
        }
    }
}

extension Set: _PredicateCollection {
    static func _valueKeyPath(_ keyPath: AnyKeyPath) -> ValueKeyPath? {
        switch keyPath {
        case \Self.count: .count
        case \Self.isEmpty: .isEmpty
        default: nil
        }
    }
}
