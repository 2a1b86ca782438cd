import OpenSwiftDataStore

/// Typed access to parsed JSON for the importer, each failure naming where in the
/// file it happened (`context`) and what was expected.
extension JSON {
    func member(_ key: String, in context: String) throws(ToolFailure) -> JSON {
        guard case .object = self else { throw ToolFailure("\(context): expected an object, found \(kindName)") }
        guard let value = self[key] else { throw ToolFailure("\(context): missing \"\(key)\"") }
        return value
    }

    func string(in context: String) throws(ToolFailure) -> String {
        guard case let .string(s) = self else { throw ToolFailure("\(context): expected a string, found \(kindName)") }
        return s
    }

    func bool(in context: String) throws(ToolFailure) -> Bool {
        guard case let .bool(b) = self else { throw ToolFailure("\(context): expected true or false, found \(kindName)") }
        return b
    }

    func integer(in context: String) throws(ToolFailure) -> Int64 {
        guard case let .integer(i) = self else { throw ToolFailure("\(context): expected an integer, found \(kindName)") }
        return i
    }

    func array(in context: String) throws(ToolFailure) -> [JSON] {
        guard case let .array(items) = self else { throw ToolFailure("\(context): expected an array, found \(kindName)") }
        return items
    }

    func members(in context: String) throws(ToolFailure) -> [(key: String, value: JSON)] {
        guard case let .object(members) = self else { throw ToolFailure("\(context): expected an object, found \(kindName)") }
        return members
    }

    /// A boolean member that may be left out, meaning false.
    func flag(_ key: String, in context: String) throws(ToolFailure) -> Bool {
        guard let value = self[key] else { return false }
        return try value.bool(in: "\(context), \"\(key)\"")
    }
}
