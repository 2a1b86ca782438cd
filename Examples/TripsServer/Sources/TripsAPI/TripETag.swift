import Foundation
import Hummingbird

/// A trip's entity tag: a hash of its content, so a client can read a trip (GET gives
/// `ETag`), change it and send the change with `If-Match`, and learn with 412 that
/// another client or server changed the trip in between, rather than overwrite that
/// change. A hash of the content, not a version counter, because the model has none and
/// two servers over one database compute the same tag from the same row.
struct TripETag: Equatable, Sendable {
    /// The tag as it goes in a header: a strong tag, quoted hexadecimal.
    let value: String

    init(_ trip: TripBody) {
        // Every field, in a fixed order, with the exact bits of each number: equal
        // content gives equal tags on every server.
        var hash = FNV1a()
        hash.add(trip.name)
        hash.add(trip.destination)
        hash.add(trip.startDate.timeIntervalSinceReferenceDate.bitPattern)
        hash.add(trip.price.bitPattern)
        hash.add(trip.latitude.bitPattern)
        hash.add(trip.longitude.bitPattern)
        if let notes = trip.notes {
            hash.add(UInt8(1))
            hash.add(notes)
        } else {
            hash.add(UInt8(0))
        }
        value = "\"" + String(hash.value, radix: 16) + "\""
    }
}

/// The `If-Match` of a request (RFC 9110, 13.1.1): `*` or a list of tags. Strong
/// comparison, so a weak tag (`W/"…"`) never matches.
struct IfMatch: Sendable {
    private let tags: [String]

    /// The request's condition, or nil when it sent no `If-Match`.
    init?(_ request: Request) {
        let fields = request.headers[values: .ifMatch]
        guard !fields.isEmpty else { return nil }
        tags = fields.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// Whether a trip whose tag is `tag` may be changed.
    func allows(_ tag: TripETag) -> Bool {
        tags.contains("*") || tags.contains(tag.value)
    }
}

/// The trip is not the version the request's `If-Match` names: nothing changed (412).
struct TripPreconditionFailed: Error {
    /// The tag of the trip as it is now.
    let current: TripETag
}

/// 64-bit FNV-1a: small and the same in every process (Swift's `Hasher` is seeded
/// per process, so it cannot make a tag two servers agree on).
private struct FNV1a {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(_ byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }

    mutating func add(_ number: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { add(UInt8(truncatingIfNeeded: number >> UInt64(shift))) }
    }

    /// The string's UTF-8 bytes after its length, so ("ab", "c") and ("a", "bc") differ.
    mutating func add(_ text: String) {
        add(UInt64(text.utf8.count))
        for byte in text.utf8 { add(byte) }
    }
}
