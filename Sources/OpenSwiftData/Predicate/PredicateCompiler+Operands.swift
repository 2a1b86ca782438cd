import Foundation
import OpenSwiftDataStore

// Variables, constants and key paths: the leaves of a predicate.

extension PredicateExpressions.Variable: CompilablePredicateExpression {
    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        try compiler.variable(key)
    }
}

extension PredicateExpressions.Value: CompilablePredicateExpression {
    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        if let model = value as? any PersistentModel {
            // A captured model matches stored rows only once saved in this container.
            let id = model.persistentModelID
            guard !id.isTemporary, id.storeIdentifier == compiler.container.storeIdentifier else {
                throw PredicateCompiler.Unsupported(description: "a captured unsaved model")
            }
            let entity = try compiler.entityIndex(of: Swift.type(of: model))
            return PredicateCompiler.Node(expression: .constant(.reference(RowID(id.id.key))), shape: .row(entity: entity))
        }
        if let result = value as? ComparisonResult {
            return .value(.constant(.int(Int64(result.rawValue))))
        }
        guard value is any _StorableValue || value is any Encodable else {
            throw PredicateCompiler.Unsupported(description: "a captured \(Output.self)")
        }
        return .value(.constant(ValueCoding.encode(value)))
    }
}

extension PredicateExpressions.NilLiteral: CompilablePredicateExpression {
    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        .value(.constant(.null))
    }
}

extension PredicateExpressions.KeyPath: CompilablePredicateExpression {
    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        let base = try compiler.compile(root)
        switch base.shape {
        case let .row(entity):
            let layout = compiler.layout(of: entity)
            switch layout.slots[keyPath] {
            case let .attribute(i)?:
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
        case .value:
            switch ValueKeyPath(keyPath, on: Root.Output.self) {
            case .count?: return .value(.count(base.expression))
            case .isEmpty?: return .value(.isEmpty(base.expression))
            case .first?: return .value(.first(base.expression))
            case .last?: return .value(.last(base.expression))
            case .localizedLowercase?: return .value(.localizedLowercase(base.expression))
            case .localizedUppercase?: return .value(.localizedUppercase(base.expression))
            case nil: throw PredicateCompiler.Unsupported(description: "\(keyPath) on a value")
            }
        }
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
