import Foundation
import Synchronization

/// The identity of a model: its entity, its store, and its row.
///
/// Temporary from `insert(_:)` until the first save, permanent afterwards (the
/// model's `persistentModelID` changes then, as on Apple platforms).
public struct PersistentIdentifier: Hashable, Identifiable, Comparable, Codable, Sendable {
    public struct ID: Hashable, Sendable {
        let storeIdentifier: String?
        let entityName: String
        /// Positive: a permanent row; negative: a temporary one.
        let key: Int64

        /// Hashes the row key only: contexts look identifiers up constantly, and
        /// hashing the two strings cost more than the rest of the lookup.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(key)
        }
    }

    public let id: PersistentIdentifier.ID

    public var entityName: String { id.entityName }
    public var storeIdentifier: String? { id.storeIdentifier }
    /// Whether the identifier names a model that has not been saved yet.
    public var isTemporary: Bool { id.key < 0 }

    init(storeIdentifier: String?, entityName: String, key: Int64) {
        self.id = ID(storeIdentifier: storeIdentifier, entityName: entityName, key: key)
    }

    /// A fresh temporary identifier, unique in the process.
    static func temporary(entityName: String) -> PersistentIdentifier {
        let key = temporaryCounter.add(1, ordering: .relaxed).newValue
        return PersistentIdentifier(storeIdentifier: nil, entityName: entityName, key: -key)
    }

    private static let temporaryCounter = Atomic<Int64>(0)

    public static func < (lhs: PersistentIdentifier, rhs: PersistentIdentifier) -> Bool {
        if lhs.id.entityName != rhs.id.entityName { return lhs.id.entityName < rhs.id.entityName }
        if lhs.id.storeIdentifier != rhs.id.storeIdentifier {
            return (lhs.id.storeIdentifier ?? "") < (rhs.id.storeIdentifier ?? "")
        }
        return lhs.id.key < rhs.id.key
    }

    private enum CodingKeys: String, CodingKey {
        case entityName, storeIdentifier, primaryKey
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            storeIdentifier: try c.decodeIfPresent(String.self, forKey: .storeIdentifier),
            entityName: try c.decode(String.self, forKey: .entityName),
            key: try c.decode(Int64.self, forKey: .primaryKey))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id.entityName, forKey: .entityName)
        try c.encodeIfPresent(id.storeIdentifier, forKey: .storeIdentifier)
        try c.encode(id.key, forKey: .primaryKey)
    }
}

extension PersistentIdentifier: CustomStringConvertible {
    /// `t` marks a temporary identifier, `p` a permanent one, as SwiftData prints them.
    public var description: String {
        "\(entityName)/\(isTemporary ? "t" : "p")\(abs(id.key))"
    }
}
