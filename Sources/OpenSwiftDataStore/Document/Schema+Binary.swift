import Foundation

/// The self-describing schema section: enough for a reader without the
/// application's types to name every entity, attribute and relationship.
extension ByteWriter {
    mutating func valueType(_ type: ValueType) {
        switch type {
        case .bool: byte(1)
        case let .int(bits):
            byte(2)
            byte(UInt8(bits))
        case let .uint(bits):
            byte(3)
            byte(UInt8(bits))
        case .float: byte(4)
        case .double: byte(5)
        case .string: byte(6)
        case .date: byte(7)
        case .data: byte(8)
        case .uuid: byte(9)
        case .url: byte(10)
        case .decimal: byte(11)
        case let .array(element):
            byte(12)
            valueType(element)
        case let .set(element):
            byte(13)
            valueType(element)
        case let .dictionary(key, value):
            byte(14)
            valueType(key)
            valueType(value)
        case let .codable(name):
            byte(15)
            string(name)
        }
    }

    mutating func schema(_ schema: StoreSchema) {
        varint(schema.entities.count)
        for entity in schema.entities {
            string(entity.name)
            varint(entity.attributes.count)
            for attribute in entity.attributes {
                string(attribute.name)
                valueType(attribute.type)
                byte((attribute.isOptional ? 1 : 0) | (attribute.isUnique ? 2 : 0) | (attribute.isExternalStorage ? 4 : 0))
            }
            varint(entity.relationships.count)
            for relationship in entity.relationships {
                string(relationship.name)
                string(relationship.destination)
                byte(relationship.isToMany ? 1 : 0)
                optionalString(relationship.inverse)
                string(relationship.deleteRule.rawValue)
            }
            varint(entity.uniqueness.count)
            for slots in entity.uniqueness {
                varint(slots.count)
                for slot in slots { varint(slot) }
            }
            varint(entity.indices.count)
            for index in entity.indices {
                string(index.kind.rawValue)
                varint(index.slots.count)
                for slot in index.slots { varint(slot) }
            }
        }
    }
}

extension ByteReader {
    mutating func slot(below slotCount: Int) throws(Failure) -> Int {
        let slot = try count()
        guard slot < slotCount else { throw fail("slot \(slot) out of range (the entity has \(slotCount))") }
        return slot
    }

    mutating func valueType(depth: Int = 0) throws(Failure) -> ValueType {
        guard depth < Self.maximumDepth else { throw fail("value types nested too deeply") }
        switch try byte() {
        case 1: return .bool
        case 2: return .int(bits: Int(try byte()))
        case 3: return .uint(bits: Int(try byte()))
        case 4: return .float
        case 5: return .double
        case 6: return .string
        case 7: return .date
        case 8: return .data
        case 9: return .uuid
        case 10: return .url
        case 11: return .decimal
        case 12: return .array(try valueType(depth: depth + 1))
        case 13: return .set(try valueType(depth: depth + 1))
        case 14:
            let key = try valueType(depth: depth + 1)
            return .dictionary(key: key, value: try valueType(depth: depth + 1))
        case 15: return .codable(try string())
        case let tag: throw fail("unknown value type tag \(tag)")
        }
    }

    mutating func schema() throws(Failure) -> StoreSchema {
        var entities: [EntityDescription] = []
        let entityCount = try count(limit: 1 << 16)
        for _ in 0..<entityCount {
            let name = try string()
            var attributes: [AttributeDescription] = []
            for _ in 0..<(try count(limit: 1 << 16)) {
                let attributeName = try string()
                let type = try valueType()
                let flags = try byte()
                attributes.append(AttributeDescription(
                    name: attributeName, type: type, isOptional: flags & 1 != 0,
                    isUnique: flags & 2 != 0, isExternalStorage: flags & 4 != 0))
            }
            var relationships: [RelationshipDescription] = []
            for _ in 0..<(try count(limit: 1 << 16)) {
                let relationshipName = try string()
                let destination = try string()
                let isToMany = try byte() & 1 != 0
                let inverse = try optionalString()
                let ruleName = try string()
                guard let rule = RelationshipDescription.DeleteRule(rawValue: ruleName) else {
                    throw fail("unknown delete rule \(ruleName)")
                }
                relationships.append(RelationshipDescription(
                    name: relationshipName, destination: destination, isToMany: isToMany, inverse: inverse, deleteRule: rule))
            }
            let slotCount = attributes.count + relationships.count
            var uniqueness: [[Int]] = []
            for _ in 0..<(try count(limit: 1 << 16)) {
                var slots: [Int] = []
                for _ in 0..<(try count(limit: 1 << 16)) { slots.append(try slot(below: slotCount)) }
                uniqueness.append(slots)
            }
            var indices: [IndexDescription] = []
            for _ in 0..<(try count(limit: 1 << 16)) {
                let kindName = try string()
                guard let kind = IndexDescription.Kind(rawValue: kindName) else { throw fail("unknown index kind \(kindName)") }
                var slots: [Int] = []
                for _ in 0..<(try count(limit: 1 << 16)) { slots.append(try slot(below: slotCount)) }
                indices.append(IndexDescription(kind: kind, slots: slots))
            }
            entities.append(EntityDescription(
                name: name, attributes: attributes, relationships: relationships, uniqueness: uniqueness, indices: indices))
        }
        guard Set(entities.map(\.name)).count == entities.count else { throw fail("two entities share a name") }
        return StoreSchema(entities: entities)
    }
}

extension StoreSchema {
    /// The first 8 bytes of the SHA-256 of the schema section, in hex: two
    /// documents with the same fingerprint have the same schema.
    public var fingerprint: String {
        var writer = ByteWriter()
        writer.schema(self)
        return SHA256Hasher.hash(data: writer.bytes).prefix(8).map { String(format: "%02x", $0) }.joined()
    }
}
