import Foundation
import OpenSwiftDataStore

/// Reads a snapshot of any `DataStoreSnapshot` type as a `DefaultSnapshot`, by
/// encoding it into an encoder that keeps what it is given: the snapshot's
/// `Codable` form, under `DataStoreSnapshotCodingKey`s, is how a custom snapshot type
/// tells contexts its values (`persistentIdentifier`, then one entry per property:
/// an attribute's value, a relationship's `PersistentIdentifier` or
/// `[PersistentIdentifier]`).
enum SnapshotReader {
    /// - Throws: `DataStoreError.unsupportedFeature` when the snapshot encodes no
    ///   `persistentIdentifier`, or encodes itself other than as keyed entries.
    static func read(_ snapshot: some DataStoreSnapshot) throws -> DefaultSnapshot {
        if let snapshot = snapshot as? DefaultSnapshot { return snapshot }
        let capture = Capture()
        try snapshot.encode(to: capture)
        guard !capture.unsupported, let identifier = capture.identifier else { throw DataStoreError.unsupportedFeature }
        return DefaultSnapshot(persistentIdentifier: identifier, entries: capture.entries)
    }

    private final class Capture: Encoder {
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }
        var identifier: PersistentIdentifier?
        var entries: [String: DefaultSnapshot.Entry] = [:]
        /// Set when the snapshot encodes in a shape contexts cannot read.
        var unsupported = false

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(Entries<Key>(capture: self))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            unsupported = true
            return Discard()
        }

        func singleValueContainer() -> any SingleValueEncodingContainer {
            unsupported = true
            return Discard()
        }

        func take<T: Encodable>(_ value: T, forKey key: String) {
            if key == DataStoreSnapshotCodingKey.persistentIdentifier.stringValue, let id = value as? PersistentIdentifier {
                identifier = id
            } else if let id = value as? PersistentIdentifier {
                entries[key] = .toOne(id)
            } else if let ids = value as? [PersistentIdentifier] {
                entries[key] = .toMany(ids)
            } else {
                entries[key] = .value(ValueCoding.encode(value))
            }
        }
    }

    private struct Entries<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let capture: Capture
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil(forKey key: Key) throws { capture.entries[key.stringValue] = .value(.null) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { capture.take(value, forKey: key.stringValue) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { capture.take(value, forKey: key.stringValue) }
        mutating func encode(_ value: String, forKey key: Key) throws { capture.take(value, forKey: key.stringValue) }
        mutating func encode(_ value: Double, forKey key: Key) throws { capture.take(value, forKey: key.stringValue) }
        mutating func encode(_ value: Float, forKey key: Key) throws { capture.take(value, forKey: key.stringValue) }
        mutating func encode(_ value: Int, forKey key: Key) throws { capture.take(value, forKey: key.stringValue) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { capture.take(value, forKey: key.stringValue) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { capture.take(value, forKey: key.stringValue) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { capture.take(value, forKey: key.stringValue) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { capture.take(value, forKey: key.stringValue) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { capture.take(value, forKey: key.stringValue) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { capture.take(value, forKey: key.stringValue) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { capture.take(value, forKey: key.stringValue) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { capture.take(value, forKey: key.stringValue) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { capture.take(value, forKey: key.stringValue) }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type, forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> {
            capture.unsupported = true
            return KeyedEncodingContainer(Entries<NestedKey>(capture: Capture()))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            capture.unsupported = true
            return Discard()
        }

        mutating func superEncoder() -> any Encoder {
            capture.unsupported = true
            return Capture()
        }

        mutating func superEncoder(forKey key: Key) -> any Encoder {
            capture.unsupported = true
            return Capture()
        }
    }

    /// Swallows what a snapshot encodes in a shape contexts do not read.
    private struct Discard: UnkeyedEncodingContainer, SingleValueEncodingContainer {
        var codingPath: [any CodingKey] { [] }
        var count: Int { 0 }
        mutating func encodeNil() throws {}
        mutating func encode<T: Encodable>(_ value: T) throws {}
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(Entries<NestedKey>(capture: Capture()))
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { Discard() }
        mutating func superEncoder() -> any Encoder { Capture() }
    }
}
