import Foundation
import OpenSwiftDataStore

/// A Swift type SwiftData stores natively, converted to and from the engine's `Value`.
///
/// `Codable` types that are not storable natively (structs, enums) are stored as
/// JSON by `ValueCoding`. Conversions never trap: a value of the wrong kind (which
/// only a damaged store can produce) reads as the type's zero value.
public protocol _StorableValue {
    static var _valueType: ValueType { get }
    init(_storedValue: Value)
    var _storedValue: Value { get }
}

extension Bool: _StorableValue {
    public static var _valueType: ValueType { .bool }
    public init(_storedValue v: Value) { if case let .bool(b) = v { self = b } else { self = false } }
    public var _storedValue: Value { .bool(self) }
}

/// Signed integers of every width share one stored form.
public protocol _StorableSignedInteger: _StorableValue, FixedWidthInteger, SignedInteger {}
extension _StorableSignedInteger {
    public static var _valueType: ValueType { .int(bits: bitWidth) }
    public init(_storedValue v: Value) {
        switch v {
        case let .int(i): self = Self(truncatingIfNeeded: i)
        case let .uint(u): self = Self(truncatingIfNeeded: u)
        default: self = 0
        }
    }
    public var _storedValue: Value { .int(Int64(self)) }
}
extension Int: _StorableSignedInteger {}
extension Int8: _StorableSignedInteger {}
extension Int16: _StorableSignedInteger {}
extension Int32: _StorableSignedInteger {}
extension Int64: _StorableSignedInteger {}

/// Unsigned integers of every width share one stored form.
public protocol _StorableUnsignedInteger: _StorableValue, FixedWidthInteger, UnsignedInteger {}
extension _StorableUnsignedInteger {
    public static var _valueType: ValueType { .uint(bits: bitWidth) }
    public init(_storedValue v: Value) {
        switch v {
        case let .uint(u): self = Self(truncatingIfNeeded: u)
        case let .int(i): self = Self(truncatingIfNeeded: i)
        default: self = 0
        }
    }
    public var _storedValue: Value { .uint(UInt64(self)) }
}
extension UInt: _StorableUnsignedInteger {}
extension UInt8: _StorableUnsignedInteger {}
extension UInt16: _StorableUnsignedInteger {}
extension UInt32: _StorableUnsignedInteger {}
extension UInt64: _StorableUnsignedInteger {}

extension Double: _StorableValue {
    public static var _valueType: ValueType { .double }
    public init(_storedValue v: Value) {
        switch v {
        case let .double(d): self = d
        case let .int(i): self = Double(i)
        default: self = 0
        }
    }
    public var _storedValue: Value { .double(self) }
}

extension Float: _StorableValue {
    public static var _valueType: ValueType { .float }
    public init(_storedValue v: Value) { self = Float(Double(_storedValue: v)) }
    public var _storedValue: Value { .double(Double(self)) }
}

extension String: _StorableValue {
    public static var _valueType: ValueType { .string }
    public init(_storedValue v: Value) { if case let .string(s) = v { self = s } else { self = "" } }
    public var _storedValue: Value { .string(self) }
}

extension Date: _StorableValue {
    public static var _valueType: ValueType { .date }
    public init(_storedValue v: Value) { if case let .date(d) = v { self = d } else { self = Date(timeIntervalSinceReferenceDate: 0) } }
    public var _storedValue: Value { .date(self) }
}

extension Data: _StorableValue {
    public static var _valueType: ValueType { .data }
    public init(_storedValue v: Value) { if case let .data(d) = v { self = d } else { self = Data() } }
    public var _storedValue: Value { .data(self) }
}

extension UUID: _StorableValue {
    public static var _valueType: ValueType { .uuid }
    public init(_storedValue v: Value) { if case let .uuid(u) = v { self = u } else { self = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) } }
    public var _storedValue: Value { .uuid(self) }
}

extension URL: _StorableValue {
    public static var _valueType: ValueType { .url }
    public init(_storedValue v: Value) { if case let .url(u) = v { self = u } else { self = URL(fileURLWithPath: "/") } }
    public var _storedValue: Value { .url(self) }
}

extension Decimal: _StorableValue {
    public static var _valueType: ValueType { .decimal }
    public init(_storedValue v: Value) { if case let .decimal(d) = v { self = d } else { self = 0 } }
    public var _storedValue: Value { .decimal(self) }
}

extension Optional: _StorableValue where Wrapped: _StorableValue {
    public static var _valueType: ValueType { Wrapped._valueType }
    public init(_storedValue v: Value) { self = v.isNull ? nil : Wrapped(_storedValue: v) }
    public var _storedValue: Value { map { $0._storedValue } ?? .null }
}

extension Array: _StorableValue where Element: _StorableValue {
    public static var _valueType: ValueType { .array(Element._valueType) }
    public init(_storedValue v: Value) {
        if case let .array(items) = v { self = items.map(Element.init(_storedValue:)) } else { self = [] }
    }
    public var _storedValue: Value { .array(map { $0._storedValue }) }
}

extension Set: _StorableValue where Element: _StorableValue {
    public static var _valueType: ValueType { .set(Element._valueType) }
    public init(_storedValue v: Value) {
        if case let .array(items) = v { self = Set(items.map(Element.init(_storedValue:))) } else { self = [] }
    }
    /// Sorted, so that equal sets are equal stored values.
    public var _storedValue: Value { .array(map { $0._storedValue }.sorted()) }
}

extension Dictionary: _StorableValue where Key: _StorableValue, Value: _StorableValue {
    public static var _valueType: ValueType { .dictionary(key: Key._valueType, value: Value._valueType) }
    public init(_storedValue v: OpenSwiftDataStore.Value) {
        self = [:]
        if case let .dictionary(pairs) = v {
            for pair in pairs { self[Key(_storedValue: pair.key)] = Value(_storedValue: pair.value) }
        }
    }
    public var _storedValue: OpenSwiftDataStore.Value {
        .dictionary(map { .init(key: $0.key._storedValue, value: $0.value._storedValue) }.sorted())
    }
}

extension _StorableValue {
    /// `value`, known to be of this type, in its stored form, without a dynamic cast.
    /// The caller guarantees `T == Self` (both are the type of one property).
    /// (`_identityCast` checks the types and reinterprets the value in place: two
    /// closures over a rebound pointer cost about 250 instructions per write.)
    static func _encode<T>(_ value: T) -> Value {
        _identityCast(value, to: Self.self)._storedValue
    }

    /// A stored value as `T`, known to be this type, without a dynamic cast.
    static func _decode<T>(_ value: Value, as type: T.Type) -> T {
        _identityCast(Self(_storedValue: value), to: T.self)
    }
}

/// Converts any property value to and from its stored form.
enum ValueCoding {
    /// Whether values of `type` can be stored at all.
    static func isStorable(_ type: Any.Type) -> Bool {
        type is any _StorableValue.Type || type is any Codable.Type
    }

    static func valueType(of type: Any.Type) -> ValueType {
        if let storable = type as? any _StorableValue.Type { return storable._valueType }
        return .codable(String(describing: unwrappedType(type)))
    }

    static func encode(_ value: Any) -> Value {
        if let storable = value as? any _StorableValue { return storable._storedValue }
        if let encodable = value as? any Encodable {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            guard let data = try? encoder.encode(encodable), data != Data("null".utf8) else { return .null }
            return .codable(data)
        }
        return .null
    }

    static func decode<V>(_ value: Value, as type: V.Type) -> V {
        if let storable = type as? any _StorableValue.Type {
            return storable.init(_storedValue: value) as! V
        }
        if let decodable = type as? any Decodable.Type {
            let data: Data
            if case let .codable(bytes) = value { data = bytes } else { data = Data("null".utf8) }
            if let decoded = try? JSONDecoder().decode(decodable, from: data) as? V { return decoded }
        }
        if let optional = type as? any _OptionalType.Type { return optional._none as! V }
        preconditionFailure("SwiftData cannot read a stored \(value) as \(V.self)")
    }
}

/// Lets generic code see through `Optional` without knowing its `Wrapped` type.
public protocol _OptionalType {
    static var _wrappedType: Any.Type { get }
    static var _none: Self { get }
    var _wrapped: Any? { get }
}

extension Optional: _OptionalType {
    public static var _wrappedType: Any.Type { Wrapped.self }
    public static var _none: Self { nil }
    public var _wrapped: Any? { self.map { $0 as Any } }
}

/// `type` without its `Optional` layers.
func unwrappedType(_ type: Any.Type) -> Any.Type {
    var t = type
    while let optional = t as? any _OptionalType.Type { t = optional._wrappedType }
    return t
}

/// Lets generic code read and build to-many relationship arrays.
public protocol _ModelArray {
    static var _elementType: any PersistentModel.Type { get }
    var _models: [any PersistentModel] { get }
}

extension Array: _ModelArray where Element: PersistentModel {
    public static var _elementType: any PersistentModel.Type { Element.self }
    public var _models: [any PersistentModel] { map { $0 } }
}

/// The models a relationship value holds: a model, an optional model, or an array of them.
func models(in value: Any) -> [any PersistentModel] {
    if let model = value as? any PersistentModel { return [model] }
    if let array = value as? any _ModelArray { return array._models }
    if let optional = value as? any _OptionalType { return optional._wrapped.map(models(in:)) ?? [] }
    return []
}
