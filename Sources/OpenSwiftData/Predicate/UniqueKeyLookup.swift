import Foundation
import OpenSwiftDataStore

// The first piece of the native query path: a predicate that pins a unique
// attribute to a constant (`$0.name == key`, either side) is answered from the
// unique index instead of a scan. The full predicate still runs on the one
// candidate, so the shortcut can narrow the rows but never change the answer.

/// A predicate node that may pin one key path to a constant.
protocol EqualityPinning {
    /// The key path and the constant, when the node is `keyPath == constant`.
    var pinnedKeyPath: (keyPath: AnyKeyPath, constant: Any)? { get }
}

protocol KeyPathOnVariable {
    var anyKeyPath: AnyKeyPath? { get }
}

protocol ConstantValue {
    var anyValue: Any { get }
}

extension PredicateExpressions.KeyPath: KeyPathOnVariable {
    var anyKeyPath: AnyKeyPath? {
        root is any VariableNode ? keyPath : nil
    }
}

protocol VariableNode {}
extension PredicateExpressions.Variable: VariableNode {}

extension PredicateExpressions.Value: ConstantValue {
    var anyValue: Any { value }
}

extension PredicateExpressions.Equal: EqualityPinning {
    var pinnedKeyPath: (keyPath: AnyKeyPath, constant: Any)? {
        if let path = (lhs as? any KeyPathOnVariable)?.anyKeyPath, let value = rhs as? any ConstantValue {
            return (path, value.anyValue)
        }
        if let path = (rhs as? any KeyPathOnVariable)?.anyKeyPath, let value = lhs as? any ConstantValue {
            return (path, value.anyValue)
        }
        return nil
    }
}

extension PredicateExpressions.Conjunction: EqualityPinning {
    var pinnedKeyPath: (keyPath: AnyKeyPath, constant: Any)? {
        (lhs as? any EqualityPinning)?.pinnedKeyPath ?? (rhs as? any EqualityPinning)?.pinnedKeyPath
    }
}

enum UniqueKeyLookup {
    /// The candidate rows for `predicate` if a unique index narrows them, else nil
    /// (meaning: scan).
    static func candidates<T: PersistentModel>(
        for predicate: Predicate<T>?, layout: EntityLayout, entity: Int, in version: StoreVersion
    ) -> [RowID]? {
        guard let predicate, let pin = (predicate.expression as? any EqualityPinning)?.pinnedKeyPath,
              case let .attribute(slot)? = layout.slots[pin.keyPath],
              let constraint = layout.uniqueness.firstIndex(of: [slot])
        else { return nil }
        let key = ValueCoding.encode(pin.constant)
        guard !key.isNull else { return nil }
        return version.lookup(unique: [key], constraint: constraint, of: entity).map { [$0] } ?? []
    }
}
