import Foundation
import OpenSwiftDataStore

/// Finds where a stored property of a `Codable` attribute value lives in the value's
/// stored JSON, so that a predicate can read it there instead of making models.
///
/// Key paths carry no names on Linux, and property names are not JSON keys once a
/// type declares its own `CodingKeys`. So the probe decodes the type from a decoder
/// that hands every primitive it is asked for a distinct marker, noting the coding
/// path it handed it at, then reads the key path on the decoded value: the marker
/// found there names the member. It decodes several times, with other markers each
/// time and with bit patterns for Booleans, and accepts a member only when every
/// round names the same one, so an `init(from:)` that changes what it reads (or two
/// properties holding one value) makes the predicate fall back instead of matching
/// the wrong member. A last round reports the member (and each member on its way)
/// missing: the engine reads a missing member as nil, so a type that fills in a
/// default instead (`decodeIfPresent(…) ?? 0`, a fallback key) falls back too.
///
/// The probe runs the type's `init(from:)` on markers: an initializer that traps on
/// values it does not expect (a force-unwrap, a `precondition`) traps here as well.
///
/// Only stored properties are probed (`MemoryLayout.offset(of:)` is nil for computed
/// ones), so no computed property runs on the markers. Arrays and dictionaries
/// decode empty (and are never matched: every empty collection looks alike), and an
/// enum that rejects the marker decodes as one of its cases when it is
/// `CaseIterable`; any other decoding error means "not found", and the predicate
/// falls back to evaluating models.
enum CodableMemberProbe {
    /// The coding keys (outermost first) of the member `keyPath` reads, or nil when
    /// the probe cannot tell.
    static func codingPath<Root, Member>(of keyPath: KeyPath<Root, Member>) -> [String]? {
        guard MemoryLayout<Root>.offset(of: keyPath) != nil, let decodable = Root.self as? any Decodable.Type else {
            return nil
        }
        var candidates: Set<[String]>?
        var roundCount = 1
        var booleanRounds = 1
        var number = 0
        while number < roundCount {
            let round = ProbeRound(number: number, booleanRounds: booleanRounds)
            guard let instance = try? decodable.init(from: ProbeDecoder(round: round, path: [])) as? Root else {
                return nil
            }
            if number == 0 {
                // Enough rounds to give every Boolean its own pattern, and its complement.
                let count = round.count(of: .bool)
                booleanRounds = max(1, Int.bitWidth - count.leadingZeroBitCount)
                roundCount = 1 + 2 * booleanRounds
            }
            let found = ValueCoding.encode(instance[keyPath: keyPath])
            guard !found.isNull else { return nil }
            let paths = Set(round.handedOut.filter { $0.value == found }.map(\.path))
            candidates = candidates.map { $0.intersection(paths) } ?? paths
            if candidates?.isEmpty ?? true { return nil }
            number += 1
        }
        guard let candidates, candidates.count == 1, let path = candidates.first else { return nil }
        // Where the JSON lacks the member, or a member on the way (written by an older
        // version of the type, say), the engine reads nil: the type must agree, by
        // failing to decode or by leaving the property nil, not by filling in a default.
        for length in 1...max(path.count, 1) {
            let round = ProbeRound(number: 0, booleanRounds: booleanRounds, absent: Array(path.prefix(length)))
            if let instance = try? decodable.init(from: ProbeDecoder(round: round, path: [])) as? Root,
               !ValueCoding.encode(instance[keyPath: keyPath]).isNull {
                return nil
            }
        }
        return path
    }
}

/// One decoding pass of the probe: which marker it handed out where.
private final class ProbeRound {
    enum Kind: Hashable { case bool, signed, unsigned, floating, string, enumeration, other }

    struct ProbeFailed: Error {}

    /// Containers nest at most this deep, and a round decodes at most this many
    /// values, so a recursive type cannot make the probe recurse forever.
    static let maximumDepth = 32
    static let maximumDecodes = 10_000

    let number: Int
    let booleanRounds: Int
    /// The coding path this round reports missing (nil in JSON terms).
    let absent: [String]?
    private(set) var handedOut: [(path: [String], value: Value)] = []
    private var counters: [Kind: Int] = [:]
    private var decodes = 0

    init(number: Int, booleanRounds: Int, absent: [String]? = nil) {
        self.number = number
        self.booleanRounds = booleanRounds
        self.absent = absent
    }

    func isAbsent(_ path: [String]) -> Bool { path == absent }

    func count(of kind: Kind) -> Int { counters[kind, default: 0] }

    /// The next marker number (from 1) for `kind`.
    private func next(_ kind: Kind) -> Int {
        counters[kind, default: 0] += 1
        return counters[kind]!
    }

    private var isEven: Bool { number % 2 == 0 }

    func decode<T: Decodable>(_ type: T.Type, at path: [String]) throws -> T {
        decodes += 1
        guard decodes <= Self.maximumDecodes else { throw ProbeFailed() }
        if isAbsent(path) {
            throw DecodingError.keyNotFound(ProbeKey(stringValue: path.last ?? ""), .init(codingPath: [], debugDescription: "probed as missing"))
        }
        if let marker = try marker(for: type, at: path) {
            handedOut.append((path, marker.stored))
            guard let value = marker.value as? T else { throw ProbeFailed() }
            return value
        }
        guard path.count < Self.maximumDepth else { throw ProbeFailed() }
        let value: T
        do {
            value = try T(from: ProbeDecoder(round: self, path: path))
        } catch {
            // An enum that rejects the marker: a case that changes from round to round,
            // so that a property that is not decoded never looks like this one.
            guard let cases = T.self as? any CaseIterable.Type, let some = someCase(of: cases) as? T else { throw error }
            value = some
        }
        let stored = ValueCoding.encode(value)
        // Empty collections look alike and like an undecoded property's default.
        if !Self.emptyValues.contains(stored) { handedOut.append((path, stored)) }
        return value
    }

    private static let emptyValues: Set<Value> = [
        .array([]), .dictionary([]), .codable(Data("[]".utf8)), .codable(Data("{}".utf8)),
    ]

    private func someCase<C: CaseIterable>(of type: C.Type) -> Any? {
        let cases = Array(C.allCases)
        return cases.isEmpty ? nil : cases[(number + next(.enumeration)) % cases.count]
    }

    /// A marker for a primitive `type`, and its stored form; nil for other types.
    private func marker(for type: Any.Type, at path: [String]) throws -> (value: Any, stored: Value)? {
        if type == Bool.self {
            let j = next(.bool)
            let bit = number == 0 ? true
                : number <= booleanRounds ? (j >> (number - 1)) & 1 == 1
                : (j >> (number - 1 - booleanRounds)) & 1 == 0
            return (bit, .bool(bit))
        }
        if let signed = type as? any _StorableSignedInteger.Type { return try signedMarker(signed) }
        if let unsigned = type as? any _StorableUnsignedInteger.Type { return try unsignedMarker(unsigned) }
        if type == Double.self || type == Float.self || type == Date.self {
            let j = Double(next(.floating))
            let seconds = isEven ? j + 0.5 : -4 * j - 0.25
            if type == Float.self { return (Float(seconds), .double(seconds)) }
            if type == Date.self {
                let date = Date(timeIntervalSinceReferenceDate: seconds)
                return (date, .date(date))
            }
            return (seconds, .double(seconds))
        }
        if type == String.self {
            // Mixed case, an accent and outer spaces: case mapping, normalizing or
            // trimming in `init(from:)` changes the marker, so it is not matched.
            let text = " Probe\u{E9}-\(number)-\(next(.string)) "
            return (text, .string(text))
        }
        if type == UUID.self || type == Data.self || type == URL.self || type == Decimal.self {
            let j = next(.other)
            let bytes: [UInt8] = [0xFC, UInt8(truncatingIfNeeded: number), UInt8(truncatingIfNeeded: j), UInt8(truncatingIfNeeded: j >> 8)]
            if type == UUID.self {
                let uuid = UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
                return (uuid, .uuid(uuid))
            }
            if type == Data.self { return (Data(bytes), .data(Data(bytes))) }
            if type == URL.self {
                guard let url = URL(string: "probe://\(number)/\(j)") else { throw ProbeFailed() }
                return (url, .url(url))
            }
            let decimal = Decimal(j * 2 + number)
            return (decimal, .decimal(decimal))
        }
        return nil
    }

    private func signedMarker<I: _StorableSignedInteger>(_ type: I.Type) throws -> (value: Any, stored: Value) {
        let j = Int64(next(.signed))
        guard let value = I(exactly: isEven ? 2 * j + 1 : -(3 * j + 2)) else { throw ProbeFailed() }
        return (value, value._storedValue)
    }

    private func unsignedMarker<I: _StorableUnsignedInteger>(_ type: I.Type) throws -> (value: Any, stored: Value) {
        let j = Int64(next(.unsigned))
        guard let value = I(exactly: isEven ? 2 * j + 1 : 250 - 3 * j) else { throw ProbeFailed() }
        return (value, value._storedValue)
    }
}

/// The decoder the probe hands to `init(from:)`: every key is present, and every
/// value is a marker.
private struct ProbeDecoder: Decoder {
    let round: ProbeRound
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(round: ProbeRound, codingPath: [any CodingKey]) {
        self.round = round
        self.codingPath = codingPath
    }

    init(round: ProbeRound, path: [String]) {
        self.init(round: round, codingPath: path.map(ProbeKey.init(stringValue:)))
    }

    var path: [String] { codingPath.map(\.stringValue) }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(ProbeKeyedContainer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        ProbeEmptyContainer(codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        ProbeSingleValueContainer(decoder: self)
    }
}

private struct ProbeKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { return nil }
}

private struct ProbeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: ProbeDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }
    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool { !decoder.round.isAbsent(path(key)) }
    func decodeNil(forKey key: Key) throws -> Bool { decoder.round.isAbsent(path(key)) }

    private func path(_ key: Key) -> [String] { decoder.path + [key.stringValue] }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decoder.round.decode(type, at: path(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decoder.round.decode(type, at: path(key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decoder.round.decode(type, at: path(key)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decoder.round.decode(type, at: path(key)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decoder.round.decode(type, at: path(key)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decoder.round.decode(type, at: path(key)) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decoder.round.decode(type, at: path(key)) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decoder.round.decode(type, at: path(key)) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decoder.round.decode(type, at: path(key)) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decoder.round.decode(type, at: path(key)) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decoder.round.decode(type, at: path(key)) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decoder.round.decode(type, at: path(key)) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decoder.round.decode(type, at: path(key)) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decoder.round.decode(type, at: path(key)) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decoder.round.decode(type, at: path(key)) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        if decoder.round.isAbsent(path(key)) {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "probed as missing"))
        }
        return try ProbeDecoder(round: decoder.round, codingPath: codingPath + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        ProbeEmptyContainer(codingPath: codingPath + [key])
    }

    func superDecoder() throws -> any Decoder {
        ProbeDecoder(round: decoder.round, codingPath: codingPath + [ProbeKey(stringValue: "super")])
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        ProbeDecoder(round: decoder.round, codingPath: codingPath + [key])
    }
}

private struct ProbeSingleValueContainer: SingleValueDecodingContainer {
    let decoder: ProbeDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { decoder.round.isAbsent(decoder.path) }
    func decode(_ type: Bool.Type) throws -> Bool { try decoder.round.decode(type, at: decoder.path) }
    func decode(_ type: String.Type) throws -> String { try decoder.round.decode(type, at: decoder.path) }
    func decode(_ type: Double.Type) throws -> Double { try decoder.round.decode(type, at: decoder.path) }
    func decode(_ type: Float.Type) throws -> Float { try decoder.round.decode(type, at: decoder.path) }
    func decode(_ type: Int.Type) throws -> Int { try decoder.round.decode(type, at: decoder.path) }
    func decode(_ type: Int8.Type) throws -> Int8 { try decoder.round.decode(type, at: decoder.path) }
    func decode(_ type: Int16.Type) throws -> Int16 { try decoder.round.decode(type, at: decoder.path) }
    func decode(_ type: Int32.Type) throws -> Int32 { try decoder.round.decode(type, at: decoder.path) }
    func decode(_ type: Int64.Type) throws -> Int64 { try decoder.round.decode(type, at: decoder.path) }
    func decode(_ type: UInt.Type) throws -> UInt { try decoder.round.decode(type, at: decoder.path) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decoder.round.decode(type, at: decoder.path) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decoder.round.decode(type, at: decoder.path) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decoder.round.decode(type, at: decoder.path) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decoder.round.decode(type, at: decoder.path) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.round.decode(type, at: decoder.path) }
}

/// Arrays (and anything else read through an unkeyed container) decode empty, so
/// that a recursive type cannot make the probe recurse.
private struct ProbeEmptyContainer: UnkeyedDecodingContainer {
    let codingPath: [any CodingKey]
    var count: Int? { 0 }
    var isAtEnd: Bool { true }
    var currentIndex: Int { 0 }

    private func end() -> DecodingError {
        DecodingError.valueNotFound(Any.self, .init(codingPath: codingPath, debugDescription: "probe containers are empty"))
    }

    mutating func decodeNil() throws -> Bool { throw end() }
    mutating func decode(_ type: Bool.Type) throws -> Bool { throw end() }
    mutating func decode(_ type: String.Type) throws -> String { throw end() }
    mutating func decode(_ type: Double.Type) throws -> Double { throw end() }
    mutating func decode(_ type: Float.Type) throws -> Float { throw end() }
    mutating func decode(_ type: Int.Type) throws -> Int { throw end() }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { throw end() }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { throw end() }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { throw end() }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { throw end() }
    mutating func decode(_ type: UInt.Type) throws -> UInt { throw end() }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { throw end() }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { throw end() }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { throw end() }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { throw end() }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { throw end() }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        throw end()
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { throw end() }
    mutating func superDecoder() throws -> any Decoder { throw end() }
}
