import Foundation
import OpenSwiftDataStore

#if !canImport(Darwin)
/// The name a value transformer is registered under, as in Foundation on Apple
/// platforms.
public struct NSValueTransformerName: RawRepresentable, Hashable, Sendable {
    /// The registered name.
    public var rawValue: String
    /// Creates a transformer name from a string.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Creates a transformer name from a string.
    public init(_ rawValue: String) { self.rawValue = rawValue }
}

/// Converts values to a stored form and back, for attributes declared with
/// `@Attribute(.transformable(by:))`. Foundation on Linux has no
/// `ValueTransformer`; this is the part of its API SwiftData uses: subclass it,
/// override `transformedValue(_:)` (value to `Data`) and
/// `reverseTransformedValue(_:)`, and register an instance under the name the
/// attribute gives before opening a container.
open class ValueTransformer: @unchecked Sendable {
    /// Creates a transformer; subclasses add their own state.
    public init() {}

    /// The class of the values `transformedValue(_:)` returns; `Data` for stored attributes.
    open class func transformedValueClass() -> AnyClass { NSData.self }

    /// Whether `reverseTransformedValue(_:)` is supported; `true` unless overridden.
    /// SwiftData does not consult it: reading a transformable attribute always reverses.
    open class func allowsReverseTransformation() -> Bool { true }

    /// The stored form of `value`: `Data` (or nil) for a transformable attribute.
    open func transformedValue(_ value: Any?) -> Any? { value }

    /// The value `transformedValue(_:)` made `value` from.
    open func reverseTransformedValue(_ value: Any?) -> Any? { value }

    private static let registry = Locked<[NSValueTransformerName: ValueTransformer]>([:])

    /// Registers `transformer` under `name` (nil removes the name).
    public class func setValueTransformer(_ transformer: ValueTransformer?, forName name: NSValueTransformerName) {
        registry.withLock { $0[name] = transformer }
    }

    /// The transformer registered under `name`. (Foundation spells it
    /// `ValueTransformer(forName:)`, an Objective-C factory Swift cannot declare.)
    public class func valueTransformer(forName name: NSValueTransformerName) -> ValueTransformer? {
        registry.withLock { $0[name] }
    }

    /// The names transformers are registered under.
    public class func valueTransformerNames() -> [NSValueTransformerName] {
        registry.withLock { Array($0.keys) }
    }
}
#endif

extension Schema.Attribute.Option {
    /// The transformer name of a `.transformable(by:)` option.
    var transformerName: String? {
        if case let .transformable(name) = kind { return name }
        return nil
    }
}

/// Values of transformable attributes, through their registered transformers.
enum TransformedValue {
    static func transformer(named name: String) -> ValueTransformer? {
        ValueTransformer.valueTransformer(forName: NSValueTransformerName(rawValue: name))
    }

    /// The stored form of `value`: the transformer's `Data`, or nil.
    static func encode(_ value: Any, by name: String) -> Value {
        var value = value
        if let optional = value as? any _OptionalType {
            guard let wrapped = optional._wrapped else { return .null }
            value = wrapped
        }
        guard let data = transformer(named: name)?.transformedValue(value) as? Data else { return .null }
        return .data(data)
    }

    /// The value of type `T` stored as `stored`; nil (or a trap, for a non-optional
    /// `T`) when the transformer gives no `T`, as a missing value would.
    static func decode<T>(_ stored: Value, by name: String, as type: T.Type) -> T {
        if case let .data(data) = stored, let value = transformer(named: name)?.reverseTransformedValue(data) as? T {
            return value
        }
        if let none = (T.self as? any _OptionalType.Type)?._none as? T { return none }
        preconditionFailure("the value transformer \(name) gave no \(T.self) for a stored value")
    }
}
