import Foundation
import OpenSwiftDataStore

/// The values of one model at one moment, as contexts and stores pass them.
public protocol DataStoreSnapshot: Codable, Sendable {
    /// The identifier of the model the values belong to.
    var persistentIdentifier: PersistentIdentifier { get }
    /// The snapshot of a model's current values; the backing data of the models its
    /// relationships hold are added to `relatedBackingDatas`.
    init(from: any BackingData, relatedBackingDatas: inout [PersistentIdentifier: any BackingData])
    /// This snapshot under `persistentIdentifier`, with the identifiers its
    /// relationships hold mapped through `remappedIdentifiers`.
    func copy(
        persistentIdentifier: PersistentIdentifier, remappedIdentifiers: [PersistentIdentifier: PersistentIdentifier]?
    ) -> Self
}

/// The keys a snapshot is encoded under: its identifier, then one per property.
public enum DataStoreSnapshotCodingKey: CodingKey, Hashable, Sendable {
    /// The key of the snapshot's model identifier.
    case persistentIdentifier
    /// The key of one property's value: the property's name.
    case modeledProperty(String)

    /// The key for `stringValue`: the identifier's key for `"persistentIdentifier"`, else
    /// a property's.
    public init?(stringValue: String) {
        self = stringValue == "persistentIdentifier" ? .persistentIdentifier : .modeledProperty(stringValue)
    }

    /// Always `nil`: snapshot keys are names.
    public init?(intValue: Int) { nil }

    /// The key's name in the encoded object.
    public var stringValue: String {
        switch self {
        case .persistentIdentifier: "persistentIdentifier"
        case let .modeledProperty(name): name
        }
    }

    /// Always `nil`: snapshot keys are names.
    public var intValue: Int? { nil }
}

/// The snapshot SwiftData's own stores use, and custom stores can use as theirs:
/// every attribute's value and every relationship's related identifiers, by
/// property name.
///
/// Encoded (`Codable`) as an object: `persistentIdentifier`, then each property
/// under its name. Attribute values are tagged with their kind
/// (`{"string": "Lisbon"}`, `{"date": 752000000}` in seconds since 2001, `null`), so a
/// snapshot decodes without the schema; relationships are `{"toOne": identifier}`
/// or `{"toMany": [identifiers]}`.
public struct DefaultSnapshot: DataStoreSnapshot, Equatable {
    /// The identifier of the model the values belong to.
    public private(set) var persistentIdentifier: PersistentIdentifier

    /// How the entries are held: by name, or, as a store that reads rows column by
    /// column makes them, in the order of a list of names, which the context reads
    /// into a model without hashing a name (`orderedEntries(named:)`): a fetch of 100
    /// rows from PostgreSQL spent a sixth of its time hashing names (#43).
    private var storage: Storage

    private enum Storage: Sendable {
        case named([String: Entry])
        case ordered(names: [String], entries: [Entry])
    }

    /// By property name. (SPI, with `Entry`: stores that read and write values typed,
    /// in the engine's form.) Reading it from a snapshot made in order builds the
    /// table: a store reads its own snapshots by name.
    @_spi(DataStores) public var entries: [String: Entry] {
        get {
            switch storage {
            case let .named(entries): entries
            case let .ordered(names, entries): Dictionary(uniqueKeysWithValues: zip(names, entries))
            }
        }
        set { storage = .named(newValue) }
    }

    /// One property's value in a snapshot.
    @_spi(DataStores)
    public enum Entry: Hashable, Sendable {
        /// An attribute, in the engine's form.
        case value(Value)
        /// A to-one relationship: the related model's identifier, or `nil`.
        case toOne(PersistentIdentifier?)
        /// A to-many relationship: the related models' identifiers, in order.
        case toMany([PersistentIdentifier])
    }

    /// Creates a snapshot from entries already in the engine's form.
    @_spi(DataStores)
    public init(persistentIdentifier: PersistentIdentifier, entries: [String: Entry]) {
        self.persistentIdentifier = persistentIdentifier
        self.storage = .named(entries)
    }

    /// Creates a snapshot of entries in the order of `names` (distinct property
    /// names, as many as `orderedEntries`). A store that makes many snapshots of one
    /// entity passes one `names` array to all: the context then reads them in order.
    @_spi(DataStores)
    public init(persistentIdentifier: PersistentIdentifier, names: [String], orderedEntries: [Entry]) {
        precondition(names.count == orderedEntries.count, "a snapshot needs one entry a name")
        self.persistentIdentifier = persistentIdentifier
        self.storage = .ordered(names: names, entries: orderedEntries)
    }

    /// The entries, in the order of `names`, when the snapshot was made in that order.
    /// - Complexity: O(1) when `names` shares the snapshot's array, else O(*n*)
    ///   comparisons of names.
    func orderedEntries(named names: [String]) -> [Entry]? {
        guard case let .ordered(own, entries) = storage, own == names else { return nil }
        return entries
    }

    public static func == (lhs: DefaultSnapshot, rhs: DefaultSnapshot) -> Bool {
        lhs.persistentIdentifier == rhs.persistentIdentifier && lhs.entries == rhs.entries
    }

    /// OpenSwiftData: a snapshot made by a store from its own rows. Attribute values
    /// are any type a model property may have; a relationship's value is a
    /// `PersistentIdentifier` (to-one) or `[PersistentIdentifier]` (to-many).
    public init(persistentIdentifier: PersistentIdentifier, values: [String: (any DataStoreSnapshotValue)?]) {
        var entries: [String: Entry] = [:]
        for (name, value) in values {
            switch value {
            case nil: entries[name] = .value(.null)
            case let id as PersistentIdentifier: entries[name] = .toOne(id)
            case let ids as [PersistentIdentifier]: entries[name] = .toMany(ids)
            case let value?: entries[name] = .value(ValueCoding.encode(value))
            }
        }
        self.init(persistentIdentifier: persistentIdentifier, entries: entries)
    }

    /// Captures a model's current values, unsaved changes included.
    ///
    /// Related models already loaded are named by identifier, leaving out deleted
    /// ones, and their backing data is added to `relatedBackingDatas`; relationships
    /// not loaded yet are named by their stored references, without loading models.
    public init(from backingData: any BackingData, relatedBackingDatas: inout [PersistentIdentifier: any BackingData]) {
        guard let ours = backingData as? OurBackingData else {
            preconditionFailure("DefaultSnapshot reads OpenSwiftData's backing data only, not \(type(of: backingData))")
        }
        let backing = ours.erased
        let layout = backing.layout
        let values = backing.values
        var entries: [String: Entry] = [:]
        entries.reserveCapacity(layout.attributes.count + layout.relationships.count)
        for (i, attribute) in layout.attributes.enumerated() { entries[attribute.name] = .value(values[i]) }
        for (j, relationship) in layout.relationships.enumerated() {
            let ids: [PersistentIdentifier]
            if let models = backing.resolvedModels(j) {
                let live = models.filter { !$0.modelBacking.isDeleted }
                ids = live.map(\.persistentModelID)
                for model in live { relatedBackingDatas[model.persistentModelID] = model.anyBackingData }
            } else {
                // Not resolved: the stored references name the models, none need loading.
                ids = backing.context?.storedIdentifiers(values[layout.attributes.count + j], of: relationship) ?? []
            }
            entries[relationship.name] = relationship.isToMany ? .toMany(ids) : .toOne(ids.first)
        }
        self.init(persistentIdentifier: backing.identifier, entries: entries)
    }

    /// This snapshot under `persistentIdentifier`, with relationship identifiers mapped
    /// through `remappedIdentifiers` (unmapped ones are kept).
    public func copy(
        persistentIdentifier: PersistentIdentifier, remappedIdentifiers: [PersistentIdentifier: PersistentIdentifier]? = [:]
    ) -> DefaultSnapshot {
        guard let remapped = remappedIdentifiers, !remapped.isEmpty else {
            var copy = self
            copy.persistentIdentifier = persistentIdentifier
            return copy
        }
        var entries = self.entries
        for (name, entry) in entries {
            switch entry {
            case let .toOne(id?): entries[name] = .toOne(remapped[id] ?? id)
            case let .toMany(ids): entries[name] = .toMany(ids.map { remapped[$0] ?? $0 })
            default: continue
            }
        }
        return DefaultSnapshot(persistentIdentifier: persistentIdentifier, entries: entries)
    }

    /// OpenSwiftData: the names of the properties the snapshot holds, sorted.
    public var propertyNames: [String] { entries.keys.sorted() }

    /// OpenSwiftData: property `name`'s value as `type`: an attribute's value, or a
    /// relationship's `PersistentIdentifier` / `[PersistentIdentifier]`; nil when the
    /// snapshot has no such property or holds nil there.
    public func value<V>(forKey name: String, as type: V.Type = V.self) -> V? {
        let entry: Entry? = switch storage {
        case let .named(entries): entries[name]
        case let .ordered(names, entries): names.firstIndex(of: name).map { entries[$0] }
        }
        switch entry {
        case nil, .value(.null)?: return nil
        case let .value(stored)?: return ValueCoding.decode(stored, as: V?.self)
        case let .toOne(id)?: return id as? V
        case let .toMany(ids)?: return ids as? V
        }
    }

    // MARK: Codable

    /// Decodes a snapshot from the tagged form described above; no schema is needed.
    /// - Throws: `DecodingError` for a missing identifier or an entry of an unknown kind.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: DataStoreSnapshotCodingKey.self)
        persistentIdentifier = try c.decode(PersistentIdentifier.self, forKey: .persistentIdentifier)
        var entries: [String: Entry] = [:]
        for key in c.allKeys where key != .persistentIdentifier {
            entries[key.stringValue] = try c.decode(TaggedEntry.self, forKey: key).entry
        }
        self.storage = .named(entries)
    }

    /// Encodes the identifier, then the properties in name order, each tagged with its
    /// kind.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: DataStoreSnapshotCodingKey.self)
        try c.encode(persistentIdentifier, forKey: .persistentIdentifier)
        let entries = self.entries
        for name in entries.keys.sorted() {
            try c.encode(TaggedEntry(entry: entries[name]!), forKey: .modeledProperty(name))
        }
    }
}

/// A snapshot entry in its self-describing coded form (see `DefaultSnapshot`).
private struct TaggedEntry: Codable {
    let entry: DefaultSnapshot.Entry

    init(entry: DefaultSnapshot.Entry) { self.entry = entry }

    init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer(), single.decodeNil() {
            entry = .value(.null)
            return
        }
        let c = try decoder.container(keyedBy: TagKey.self)
        if c.contains(TagKey("toOne")) {
            entry = .toOne(try c.decodeIfPresent(PersistentIdentifier.self, forKey: TagKey("toOne")))
        } else if c.contains(TagKey("toMany")) {
            entry = .toMany(try c.decode([PersistentIdentifier].self, forKey: TagKey("toMany")))
        } else {
            entry = .value(try TaggedValue(from: decoder).value)
        }
    }

    func encode(to encoder: any Encoder) throws {
        switch entry {
        case let .value(value): try TaggedValue(value: value).encode(to: encoder)
        case let .toOne(id):
            var c = encoder.container(keyedBy: TagKey.self)
            try c.encode(id, forKey: TagKey("toOne"))
        case let .toMany(ids):
            var c = encoder.container(keyedBy: TagKey.self)
            try c.encode(ids, forKey: TagKey("toMany"))
        }
    }
}

/// An engine value as one-key object naming its kind, so it decodes without a schema.
/// (SPI: stores keep collections and `Codable` composites in this form.)
@_spi(DataStores)
public struct TaggedValue: Codable, Sendable {
    /// The engine value.
    public let value: Value

    /// Wraps an engine value for coding.
    public init(value: Value) { self.value = value }

    /// Decodes a one-key object naming a value's kind, or `null`.
    /// - Throws: `DecodingError` for an unknown kind or text that is not of that kind.
    public init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer(), single.decodeNil() {
            value = .null
            return
        }
        let c = try decoder.container(keyedBy: TagKey.self)
        guard c.allKeys.count == 1, let key = c.allKeys.first else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "a snapshot value names one kind"))
        }
        func text() throws -> String { try c.decode(String.self, forKey: key) }
        func bytes() throws -> Data {
            guard let data = Data(base64Encoded: try text()) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "not base64")
            }
            return data
        }
        switch key.stringValue {
        case "bool": value = .bool(try c.decode(Bool.self, forKey: key))
        case "int": value = .int(try c.decode(Int64.self, forKey: key))
        case "uint": value = .uint(try c.decode(UInt64.self, forKey: key))
        case "double": value = .double(try c.decode(Double.self, forKey: key))
        case "string": value = .string(try text())
        case "date": value = .date(Date(timeIntervalSinceReferenceDate: try c.decode(Double.self, forKey: key)))
        case "data": value = .data(try bytes())
        case "uuid":
            guard let uuid = UUID(uuidString: try text()) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "not a UUID")
            }
            value = .uuid(uuid)
        case "url":
            guard let url = URL(string: try text()) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "not a URL")
            }
            value = .url(url)
        case "decimal":
            guard let decimal = Decimal(string: try text(), locale: Locale(identifier: "en_US_POSIX")) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "not a decimal")
            }
            value = .decimal(decimal)
        case "array": value = .array(try c.decode([TaggedValue].self, forKey: key).map(\.value))
        case "dictionary":
            let pairs = try c.decode([[TaggedValue]].self, forKey: key)
            value = .dictionary(try pairs.map { pair in
                guard pair.count == 2 else {
                    throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "a pair has two values")
                }
                return Value.Pair(key: pair[0].value, value: pair[1].value)
            })
        case "codable": value = .codable(try bytes())
        default:
            throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "unknown value kind \(key.stringValue)")
        }
    }

    /// Encodes the value as a one-key object naming its kind, or as `null`.
    /// - Throws: `EncodingError` for a row reference, which has no snapshot form.
    public func encode(to encoder: any Encoder) throws {
        if case .null = value {
            var single = encoder.singleValueContainer()
            try single.encodeNil()
            return
        }
        var c = encoder.container(keyedBy: TagKey.self)
        switch value {
        case .null: break
        case let .bool(v): try c.encode(v, forKey: TagKey("bool"))
        case let .int(v): try c.encode(v, forKey: TagKey("int"))
        case let .uint(v): try c.encode(v, forKey: TagKey("uint"))
        case let .double(v): try c.encode(v, forKey: TagKey("double"))
        case let .string(v): try c.encode(v, forKey: TagKey("string"))
        case let .date(v): try c.encode(v.timeIntervalSinceReferenceDate, forKey: TagKey("date"))
        case let .data(v): try c.encode(v.base64EncodedString(), forKey: TagKey("data"))
        case let .uuid(v): try c.encode(v.uuidString, forKey: TagKey("uuid"))
        case let .url(v): try c.encode(v.absoluteString, forKey: TagKey("url"))
        case let .decimal(v): try c.encode(v.description, forKey: TagKey("decimal"))
        case let .array(v): try c.encode(v.map(TaggedValue.init(value:)), forKey: TagKey("array"))
        case let .dictionary(v):
            try c.encode(v.map { [TaggedValue(value: $0.key), TaggedValue(value: $0.value)] }, forKey: TagKey("dictionary"))
        case let .codable(v): try c.encode(v.base64EncodedString(), forKey: TagKey("codable"))
        case .reference, .references:
            throw EncodingError.invalidValue(value, .init(codingPath: encoder.codingPath, debugDescription: "a row reference is not a snapshot value"))
        }
    }
}

private struct TagKey: CodingKey {
    let stringValue: String
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    var intValue: Int? { nil }
    init?(intValue: Int) { nil }
}
