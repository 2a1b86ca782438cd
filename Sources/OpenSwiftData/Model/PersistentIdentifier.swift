import Foundation
import Synchronization

/// The identity of a model: its entity, its store, and its row.
///
/// Temporary from `insert(_:)` until the first save, permanent afterwards (the
/// model's `persistentModelID` changes then, as on Apple platforms).
public struct PersistentIdentifier: Hashable, Identifiable, Comparable, Codable, Sendable {
    /// The opaque value an identifier is made of: its store, entity and row key.
    public struct ID: Hashable, Sendable {
        /// The store and entity, shared by every identifier a container or layout makes.
        let scope: IdentifierScope
        /// Positive: a permanent row; negative: a temporary one.
        let key: Int64

        var storeIdentifier: String? { scope.storeIdentifier }
        var entityName: String { scope.entityName }

        /// Hashes the row key only: contexts look identifiers up constantly, and
        /// hashing the two strings cost more than the rest of the lookup.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(key)
        }

        /// The hash sets and dictionaries use: the row key mixed with their seed by
        /// a 64-bit finalizer (MurmurHash3's), where `Hasher` ran SipHash (about 150
        /// instructions in four calls) for every lookup: a quarter of a cascade delete.
        /// Equal identifiers have equal keys, so equal hashes; the per-table seed keeps
        /// tables from sharing collision patterns.
        public func _rawHashValue(seed: Int) -> Int { Self.hash(key: key, seed: seed) }

        @inline(__always)
        static func hash(key: Int64, seed: Int) -> Int {
            var x = UInt64(bitPattern: key) ^ UInt64(bitPattern: Int64(seed))
            x = (x ^ (x >> 33)) &* 0xFF51_AFD7_ED55_8CCD
            x = (x ^ (x >> 33)) &* 0xC4CE_B9FE_1A85_EC53
            return Int(bitPattern: UInt(truncatingIfNeeded: x ^ (x >> 33)))
        }

        /// Equal keys in the same scope object, or in scopes of equal strings (an
        /// identifier decoded or made elsewhere has a scope of its own).
        public static func == (lhs: ID, rhs: ID) -> Bool {
            lhs.key == rhs.key && (lhs.scope === rhs.scope || lhs.scope.sameNames(as: rhs.scope))
        }
    }

    /// The identifier's opaque value, which `Identifiable` asks for.
    public let id: PersistentIdentifier.ID

    /// Hashes the row key only, like `ID`.
    public func hash(into hasher: inout Hasher) { id.hash(into: &hasher) }

    /// `ID`'s cheap hash (see there).
    public func _rawHashValue(seed: Int) -> Int { id._rawHashValue(seed: seed) }

    /// The name of the model's entity (its model type's name).
    public var entityName: String { id.entityName }
    /// The identifier of the store that keeps the model; `nil` while the identifier is
    /// temporary.
    public var storeIdentifier: String? { id.storeIdentifier }
    /// Whether the identifier names a model that has not been saved yet.
    public var isTemporary: Bool { id.key < 0 }

    init(storeIdentifier: String?, entityName: String, key: Int64) {
        self.init(scope: IdentifierScope(storeIdentifier: storeIdentifier, entityName: entityName), key: key)
    }

    init(scope: IdentifierScope, key: Int64) {
        self.id = ID(scope: scope, key: key)
    }

    /// A fresh temporary identifier in `scope` (of no store), unique in the process.
    static func temporary(in scope: IdentifierScope) -> PersistentIdentifier {
        let key = temporaryCounter.add(1, ordering: .relaxed).newValue
        return PersistentIdentifier(scope: scope, key: -key)
    }

    private static let temporaryCounter = Atomic<Int64>(0)

    /// Orders identifiers by entity name, then store identifier, then primary key
    /// (the row key, for the built-in store).
    public static func < (lhs: PersistentIdentifier, rhs: PersistentIdentifier) -> Bool {
        if lhs.id.entityName != rhs.id.entityName { return lhs.id.entityName < rhs.id.entityName }
        if lhs.id.storeIdentifier != rhs.id.storeIdentifier {
            return (lhs.id.storeIdentifier ?? "") < (rhs.id.storeIdentifier ?? "")
        }
        let (a, b) = (lhs.id.scope.primaryKey, rhs.id.scope.primaryKey)
        if a != nil || b != nil { return (a ?? "", lhs.id.key) < (b ?? "", rhs.id.key) }
        return lhs.id.key < rhs.id.key
    }

    private enum CodingKeys: String, CodingKey {
        case entityName, storeIdentifier, primaryKey
    }

    /// A row key is encoded as a number; a custom store's other primary keys
    /// (`identifier(for:entityName:primaryKey:)`) as their text.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let store = try c.decodeIfPresent(String.self, forKey: .storeIdentifier)
        let entity = try c.decode(String.self, forKey: .entityName)
        if let key = try? c.decode(Int64.self, forKey: .primaryKey) {
            self.init(storeIdentifier: store, entityName: entity, key: key)
        } else {
            self.init(storeIdentifier: store, entityName: entity, primaryKey: try c.decode(String.self, forKey: .primaryKey))
        }
    }

    /// Encodes the entity name, store identifier and primary key, so `init(from:)` gives
    /// back an equal identifier.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id.entityName, forKey: .entityName)
        try c.encodeIfPresent(id.storeIdentifier, forKey: .storeIdentifier)
        if let primaryKey = id.scope.primaryKey {
            try c.encode(primaryKey, forKey: .primaryKey)
        } else {
            try c.encode(id.key, forKey: .primaryKey)
        }
    }
}

extension PersistentIdentifier: CustomStringConvertible {
    /// `t` marks a temporary identifier, `p` a permanent one, as SwiftData prints them.
    public var description: String {
        if let primaryKey = id.scope.primaryKey { return "\(entityName)/p\(primaryKey)" }
        return "\(entityName)/\(isTemporary ? "t" : "p")\(abs(id.key))"
    }
}

/// The store and entity of identifiers, held once and shared: an identifier is then a
/// reference and a row key (16 bytes, one retain to copy), where two strings made it 40
/// bytes with two retains, in every registry entry and list of a context. Containers
/// make one per entity and layouts one for temporary identifiers; identifiers from
/// elsewhere (decoded ones) have their own, and compare by their strings.
///
/// A custom store's primary key that is not a non-negative integer (a `UUID`, a
/// string) lives in a scope of its own, as text; the identifier's key is then a
/// hash of that text, so hashing stays the row key's.
final class IdentifierScope: Sendable {
    let storeIdentifier: String?
    let entityName: String
    /// The primary key's text, for identifiers whose key is not a row key.
    let primaryKey: String?
    /// Made by a container (one per entity) or a layout (for temporary identifiers):
    /// it lives as long as any context of that container, so a context's registry
    /// need not retain it (`UnretainedModels.Entry`).
    let isShared: Bool

    init(storeIdentifier: String?, entityName: String, primaryKey: String? = nil, isShared: Bool = false) {
        self.storeIdentifier = storeIdentifier
        self.entityName = entityName
        self.primaryKey = primaryKey
        self.isShared = isShared
    }

    func sameNames(as other: IdentifierScope) -> Bool {
        entityName == other.entityName && storeIdentifier == other.storeIdentifier && primaryKey == other.primaryKey
    }
}
