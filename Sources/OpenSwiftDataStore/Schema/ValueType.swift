/// The declared type of an attribute, as the engine sees it.
///
/// It is recorded in the runtime schema (and later in documents) so a reader can
/// interpret stored values without the application's Swift types.
public indirect enum ValueType: Hashable, Sendable, CustomStringConvertible {
    case bool
    case int(bits: Int)
    case uint(bits: Int)
    case float
    case double
    case string
    case date
    case data
    case uuid
    case url
    case decimal
    case array(ValueType)
    case set(ValueType)
    case dictionary(key: ValueType, value: ValueType)
    /// A `Codable` struct or enum, named by its Swift type for diagnostics only.
    case codable(String)

    public var description: String {
        switch self {
        case .bool: "Bool"
        case let .int(bits): bits == 64 ? "Int" : "Int\(bits)"
        case let .uint(bits): bits == 64 ? "UInt" : "UInt\(bits)"
        case .float: "Float"
        case .double: "Double"
        case .string: "String"
        case .date: "Date"
        case .data: "Data"
        case .uuid: "UUID"
        case .url: "URL"
        case .decimal: "Decimal"
        case let .array(e): "[\(e)]"
        case let .set(e): "Set<\(e)>"
        case let .dictionary(k, v): "[\(k): \(v)]"
        case let .codable(name): name
        }
    }
}
