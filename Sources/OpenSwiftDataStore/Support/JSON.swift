/// A JSON value that keeps what general JSON libraries lose and exports need:
/// integers apart from floating-point numbers, 64-bit integers exactly, and the
/// order of object members, so the same document always exports the same bytes.
/// The CLI's export and import use it, and queries read `Codable` members with it.
public indirect enum JSON: Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    /// An integer above `Int64.max`.
    case unsignedInteger(UInt64)
    /// A number written with a fraction or an exponent.
    case number(Double)
    case string(String)
    case array([JSON])
    /// Members in the order they were written.
    case object([(key: String, value: JSON)])

    /// The member named `key` of an object.
    public subscript(key: String) -> JSON? {
        guard case let .object(members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// What kind of JSON value this is, for error messages.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer, .unsignedInteger: "an integer"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
