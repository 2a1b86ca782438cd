import OpenSwiftDataStore

/// Finds entities by name, with a message that lists the ones there are.
enum EntityLookup {
    static func index(of name: String, in schema: StoreSchema) throws(ToolFailure) -> Int {
        guard let e = schema.entityIndex(named: name) else {
            let names = schema.entities.map(\.name).joined(separator: ", ")
            throw ToolFailure("the document has no entity \(name) (its entities: \(names.isEmpty ? "none" : names))")
        }
        return e
    }
}
