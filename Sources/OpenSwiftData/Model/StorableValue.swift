import Foundation
import OpenSwiftDataStore

/// A Swift type SwiftData stores natively, converted to and from the engine's `Value`.
///
/// `Codable` types that are not storable natively (structs, enums) are stored as
/// JSON by `ValueCoding`. Conversions never trap: a value of the wrong kind (which
/// only a damaged store can produce) reads as the type's zero value.
public protocol _StorableValue {
    /// The column type a property of this Swift type is declared with in the store
    /// schema.
    static var _valueType: ValueType { get }
    /// Reads a stored value back, falling back to the type's zero value when the value
    /// has another kind.
    init(_storedValue: Value)
    /// This value in the engine's stored form.
    var _storedValue: Value { get }
}

extension Bool: _StorableValue {
    /// Booleans are stored as `.bool`.
    public static var _valueType: ValueType { .bool }
    /// Reads `.bool`; any other kind reads as `false`.
    public init(_storedValue v: Value) { if case let .bool(b) = v { self = b } else { self = false } }
    /// The boolean as `.bool`.
    public var _storedValue: Value { .bool(self) }
}

/// Signed integers of every width share one stored form.
public protocol _StorableSignedInteger: _StorableValue, FixedWidthInteger, SignedInteger {}
extension _StorableSignedInteger {
    /// A signed integer column that records this type's bit width.
    public static var _valueType: ValueType { .int(bits: bitWidth) }
    /// Reads `.int` or `.uint`, truncating to this width; any other kind reads as `0`.
    public init(_storedValue v: Value) {
        switch v {
        case let .int(i): self = Self(truncatingIfNeeded: i)
        case let .uint(u): self = Self(truncatingIfNeeded: u)
        default: self = 0
        }
    }
    /// The integer widened to `.int(Int64)`.
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
    /// An unsigned integer column that records this type's bit width.
    public static var _valueType: ValueType { .uint(bits: bitWidth) }
    /// Reads `.uint` or `.int`, truncating to this width; any other kind reads as `0`.
    public init(_storedValue v: Value) {
        switch v {
        case let .uint(u): self = Self(truncatingIfNeeded: u)
        case let .int(i): self = Self(truncatingIfNeeded: i)
        default: self = 0
        }
    }
    /// The integer widened to `.uint(UInt64)`.
    public var _storedValue: Value { .uint(UInt64(self)) }
}
extension UInt: _StorableUnsignedInteger {}
extension UInt8: _StorableUnsignedInteger {}
extension UInt16: _StorableUnsignedInteger {}
extension UInt32: _StorableUnsignedInteger {}
extension UInt64: _StorableUnsignedInteger {}

extension Double: _StorableValue {
    /// Doubles are stored as `.double`.
    public static var _valueType: ValueType { .double }
    /// Reads `.double`, or converts an `.int`; any other kind (including `.uint`) reads
    /// as `0`.
    public init(_storedValue v: Value) {
        switch v {
        case let .double(d): self = d
        case let .int(i): self = Double(i)
        default: self = 0
        }
    }
    /// The number as `.double`.
    public var _storedValue: Value { .double(self) }
}

extension Float: _StorableValue {
    /// Declared as a `.float` column, though the value itself is stored as a `Double`.
    public static var _valueType: ValueType { .float }
    /// Reads the value as a `Double` and narrows it to `Float`.
    public init(_storedValue v: Value) { self = Float(Double(_storedValue: v)) }
    /// The number widened to `.double`, so floats and doubles share one stored form.
    public var _storedValue: Value { .double(Double(self)) }
}

extension String: _StorableValue {
    /// Strings are stored as `.string`.
    public static var _valueType: ValueType { .string }
    /// Reads `.string`; any other kind reads as the empty string.
    public init(_storedValue v: Value) { if case let .string(s) = v { self = s } else { self = "" } }
    /// The string as `.string`.
    public var _storedValue: Value { .string(self) }
}

extension Date: _StorableValue {
    /// Dates are stored as `.date`.
    public static var _valueType: ValueType { .date }
    /// Reads `.date`; any other kind reads as the reference date (1 January 2001, 00:00
    /// UTC).
    public init(_storedValue v: Value) { if case let .date(d) = v { self = d } else { self = Date(timeIntervalSinceReferenceDate: 0) } }
    /// The date as `.date`.
    public var _storedValue: Value { .date(self) }
}

extension Data: _StorableValue {
    /// Byte buffers are stored as `.data`.
    public static var _valueType: ValueType { .data }
    /// Reads `.data`; any other kind reads as empty data.
    public init(_storedValue v: Value) { if case let .data(d) = v { self = d } else { self = Data() } }
    /// The bytes as `.data`.
    public var _storedValue: Value { .data(self) }
}

extension UUID: _StorableValue {
    /// UUIDs are stored as `.uuid`.
    public static var _valueType: ValueType { .uuid }
    /// Reads `.uuid`; any other kind reads as the all-zero UUID.
    public init(_storedValue v: Value) { if case let .uuid(u) = v { self = u } else { self = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) } }
    /// The UUID as `.uuid`.
    public var _storedValue: Value { .uuid(self) }
}

extension URL: _StorableValue {
    /// URLs are stored as `.url`.
    public static var _valueType: ValueType { .url }
    /// Reads `.url`; any other kind reads as the file URL `/`.
    public init(_storedValue v: Value) { if case let .url(u) = v { self = u } else { self = URL(fileURLWithPath: "/") } }
    /// The URL as `.url`.
    public var _storedValue: Value { .url(self) }
}

extension Decimal: _StorableValue {
    /// Decimals are stored as `.decimal`, without going through `Double`.
    public static var _valueType: ValueType { .decimal }
    /// Reads `.decimal`; any other kind reads as `0`.
    public init(_storedValue v: Value) { if case let .decimal(d) = v { self = d } else { self = 0 } }
    /// The decimal as `.decimal`.
    public var _storedValue: Value { .decimal(self) }
}

extension Optional: _StorableValue where Wrapped: _StorableValue {
    /// An optional has its wrapped type's column type; optionality is recorded on the
    /// attribute.
    public static var _valueType: ValueType { Wrapped._valueType }
    /// Reads `.null` as `nil`, and anything else as the wrapped type.
    public init(_storedValue v: Value) { self = v.isNull ? nil : Wrapped(_storedValue: v) }
    /// The wrapped value's stored form, or `.null` for `nil`.
    public var _storedValue: Value { map { $0._storedValue } ?? .null }
}

extension Array: _StorableValue where Element: _StorableValue {
    /// An array column of the element's stored type.
    public static var _valueType: ValueType { .array(Element._valueType) }
    /// Reads `.array` element by element; any other kind reads as an empty array.
    public init(_storedValue v: Value) {
        if case let .array(items) = v { self = items.map(Element.init(_storedValue:)) } else { self = [] }
    }
    /// The elements in order as `.array`.
    public var _storedValue: Value { .array(map { $0._storedValue }) }
}

extension Set: _StorableValue where Element: _StorableValue {
    /// A set column of the element's stored type.
    public static var _valueType: ValueType { .set(Element._valueType) }
    /// Reads the stored `.array` of elements into a set; any other kind reads as an empty
    /// set.
    public init(_storedValue v: Value) {
        if case let .array(items) = v { self = Set(items.map(Element.init(_storedValue:))) } else { self = [] }
    }
    /// Sorted, so that equal sets are equal stored values.
    public var _storedValue: Value { .array(map { $0._storedValue }.sorted()) }
}

extension Dictionary: _StorableValue where Key: _StorableValue, Value: _StorableValue {
    /// A dictionary column of the key's and value's stored types.
    public static var _valueType: ValueType { .dictionary(key: Key._valueType, value: Value._valueType) }
    /// Reads `.dictionary` pair by pair; any other kind reads as an empty dictionary.
    public init(_storedValue v: OpenSwiftDataStore.Value) {
        self = [:]
        if case let .dictionary(pairs) = v {
            for pair in pairs { self[Key(_storedValue: pair.key)] = Value(_storedValue: pair.value) }
        }
    }
    /// The pairs as `.dictionary`, sorted so that equal dictionaries are equal stored
    /// values.
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
    /// The type inside the optional.
    static var _wrappedType: Any.Type { get }
    /// The `nil` value of this optional type.
    static var _none: Self { get }
    /// The wrapped value as `Any`, or `nil`.
    var _wrapped: Any? { get }
}

extension Optional: _OptionalType {
    /// `Wrapped`, the type inside the optional.
    public static var _wrappedType: Any.Type { Wrapped.self }
    /// `nil`.
    public static var _none: Self { nil }
    /// The wrapped value as `Any`, or `nil`.
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
    /// The model type of the array's elements.
    static var _elementType: any PersistentModel.Type { get }
    /// The array's models, as existentials.
    var _models: [any PersistentModel] { get }
}

extension Array: _ModelArray where Element: PersistentModel {
    /// `Element`, the model type of the relationship's destination.
    public static var _elementType: any PersistentModel.Type { Element.self }
    /// The array's models, in order.
    public var _models: [any PersistentModel] { map { $0 } }
}

/// The models a relationship value holds: a model, an optional model, or an array of them.
func models(in value: Any) -> [any PersistentModel] {
    if let model = value as? any PersistentModel { return [model] }
    if let array = value as? any _ModelArray { return array._models }
    if let optional = value as? any _OptionalType { return optional._wrapped.map(models(in:)) ?? [] }
    return []
}
