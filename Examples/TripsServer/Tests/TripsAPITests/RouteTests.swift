import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import SwiftData
import Testing
@testable import TripsAPI

/// Every route, its errors and its status codes, run in process over a document
/// store (HummingbirdTesting's router framework: no socket).
@Suite struct RouteTests {
    /// A fresh document and the application over it; the document goes after `body`.
    static func withApp(_ body: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("trips-routes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let container = try TripsApp.openStore(folder.appendingPathComponent("trips.store").path)
        var logger = Logger(label: "RouteTests")
        logger.logLevel = .warning
        try await TripsApp.application(over: container, logger: logger).test(.router, body)
    }

    static func trip(_ name: String, _ destination: String, price: Double, start: String = "2026-06-01T09:00:00Z",
                     latitude: Double = 38.72, longitude: Double = -9.14, notes: String? = nil) -> ByteBuffer {
        var fields = [
            "\"name\":\"\(name)\"", "\"destination\":\"\(destination)\"", "\"startDate\":\"\(start)\"", "\"price\":\(price)",
            "\"latitude\":\(latitude)", "\"longitude\":\(longitude)",
        ]
        if let notes { fields.append("\"notes\":\"\(notes)\"") }
        return ByteBuffer(string: "{" + fields.joined(separator: ",") + "}")
    }

    static func decode<T: Decodable>(_ type: T.Type, _ response: TestResponse) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(type, from: Data(buffer: response.body))
    }

    static func names(_ response: TestResponse) throws -> [String] { try decode([TripBody].self, response).map(\.name) }

    static let json: HTTPFields = [.contentType: "application/json"]

    @Test func healthAndStats() async throws {
        try await Self.withApp { client in
            try await client.execute(uri: "/health", method: .get) { response throws in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == "ok")
            }
            _ = try await client.execute(uri: "/trips", method: .post, headers: Self.json, body: Self.trip("A", "Lisbon", price: 1))
            try await client.execute(uri: "/stats", method: .get) { response throws in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == #"{"trips":1}"#)
            }
        }
    }

    /// POST creates (201) or replaces every field of the trip of its name (200): a
    /// left-out `notes` becomes null. PATCH changes only what it names.
    @Test func postCreatesOrReplacesAndPatchChangesOnlyItsFields() async throws {
        try await Self.withApp { client in
            try await client.execute(
                uri: "/trips", method: .post, headers: Self.json, body: Self.trip("Lisbon weekend", "Lisbon", price: 420, notes: "window seat")
            ) { response throws in
                #expect(response.status == .created)
                #expect(try Self.decode(TripBody.self, response).notes == "window seat")
            }
            try await client.execute(uri: "/trips", method: .post, headers: Self.json, body: Self.trip("Lisbon weekend", "Porto", price: 380)) { response throws in
                #expect(response.status == .ok)
                let trip = try Self.decode(TripBody.self, response)
                #expect(trip.destination == "Porto")
                #expect(trip.notes == nil)
            }
            try await client.execute(
                uri: "/trips/Lisbon%20weekend", method: .patch, headers: Self.json, body: ByteBuffer(string: #"{"price": 350, "notes": "aisle"}"#)
            ) { response throws in
                #expect(response.status == .ok)
                let trip = try Self.decode(TripBody.self, response)
                #expect(trip.price == 350)
                #expect(trip.notes == "aisle")
                #expect(trip.destination == "Porto")
            }
            try await client.execute(uri: "/trips/Lisbon%20weekend", method: .get) { response throws in
                #expect(response.status == .ok)
                #expect(try Self.decode(TripBody.self, response).price == 350)
            }
            try await client.execute(uri: "/stats", method: .get) { response throws in
                #expect(String(buffer: response.body) == #"{"trips":1}"#)
            }
        }
    }

    @Test func badBodiesAndUnknownTrips() async throws {
        try await Self.withApp { client in
            try await client.execute(uri: "/trips", method: .post, headers: Self.json, body: Self.trip("", "Lisbon", price: 1)) { response throws in
                #expect(response.status == .badRequest)
                #expect(String(buffer: response.body).contains("a trip needs a name"))
            }
            try await client.execute(uri: "/trips", method: .post, headers: Self.json, body: ByteBuffer(string: #"{"name": "x"}"#)) { response throws in
                #expect(response.status == .badRequest)
            }
            for method in [HTTPRequest.Method.get, .delete] {
                try await client.execute(uri: "/trips/nowhere", method: method) { response throws in
                    #expect(response.status == .notFound, "\(method)")
                }
            }
            try await client.execute(uri: "/trips/nowhere", method: .patch, headers: Self.json, body: ByteBuffer(string: #"{"price": 1}"#)) { response throws in
                #expect(response.status == .notFound)
            }
            _ = try await client.execute(uri: "/trips", method: .post, headers: Self.json, body: Self.trip("A", "Lisbon", price: 1))
            try await client.execute(uri: "/trips/A", method: .patch, headers: Self.json, body: ByteBuffer(string: #"{"price": "cheap"}"#)) { response throws in
                #expect(response.status == .badRequest)
            }
        }
    }

    @Test func deleteAnswers204ThenNotFound() async throws {
        try await Self.withApp { client in
            _ = try await client.execute(uri: "/trips", method: .post, headers: Self.json, body: Self.trip("Gone soon", "Faro", price: 9))
            try await client.execute(uri: "/trips/Gone%20soon", method: .delete) { response throws in
                #expect(response.status == .noContent)
            }
            try await client.execute(uri: "/trips/Gone%20soon", method: .delete) { response throws in
                #expect(response.status == .notFound)
            }
            try await client.execute(uri: "/trips/Gone%20soon", method: .get) { response throws in
                #expect(response.status == .notFound)
            }
        }
    }

    @Test func searchFiltersSortsAndPages() async throws {
        try await Self.withApp { client in
            let trips: [(String, String, Double, String)] = [
                ("a", "Lisbon", 300, "2026-05-01T00:00:00Z"), ("b", "Lisbon", 100, "2026-07-01T00:00:00Z"),
                ("c", "Porto", 200, "2026-08-01T00:00:00Z"), ("d", "Lisbon", 200, "2026-09-01T00:00:00Z"),
            ]
            for (name, destination, price, start) in trips {
                _ = try await client.execute(
                    uri: "/trips", method: .post, headers: Self.json, body: Self.trip(name, destination, price: price, start: start))
            }
            let cases: [(String, [String])] = [
                ("/trips", ["a", "b", "c", "d"]),
                ("/trips?destination=Lisbon&sort=price", ["b", "d", "a"]),
                ("/trips?sort=-price&limit=2", ["a", "c"]),
                ("/trips?sort=price&offset=1&limit=2", ["c", "d"]),
                ("/trips?minPrice=150&maxPrice=250", ["c", "d"]),
                ("/trips?after=2026-06-01T00:00:00Z&sort=startDate", ["b", "c", "d"]),
                // Seconds since 1970 too (2026-08-15).
                ("/trips?after=1786752000", ["d"]),
            ]
            for (uri, expected) in cases {
                try await client.execute(uri: uri, method: .get) { response throws in
                    #expect(response.status == .ok, "\(uri)")
                    #expect(try Self.names(response) == expected, "\(uri)")
                }
            }
        }
    }

    /// A query parameter that does not parse, or is out of range, is 400 naming it.
    @Test func badQueryParametersAre400NamingThem() async throws {
        try await Self.withApp { client in
            let cases = [
                ("/trips?minPrice=abc", "minPrice"), ("/trips?maxPrice=", "maxPrice"), ("/trips?sort=bogus", "sort"),
                ("/trips?limit=-5", "limit"), ("/trips?limit=501", "limit"), ("/trips?offset=-1", "offset"),
                ("/trips?after=June", "after"), ("/trips/nearby?lat=100&lon=0", "lat"), ("/trips/nearby?lat=0&lon=0&radius=-1", "radius"),
                ("/trips/nearby?lon=0", "nearby needs lat and lon"), ("/changes?after=not-a-token", "not a change token"),
                ("/changes?limit=0", "limit"),
            ]
            for (uri, named) in cases {
                try await client.execute(uri: uri, method: .get) { response throws in
                    #expect(response.status == .badRequest, "\(uri)")
                    #expect(String(buffer: response.body).contains(named), "\(uri): \(String(buffer: response.body))")
                }
            }
        }
    }

    @Test func nearbyIsNearestFirst() async throws {
        try await Self.withApp { client in
            let places: [(String, Double, Double)] = [("Lisbon", 38.72, -9.14), ("Porto", 41.15, -8.61), ("Madrid", 40.42, -3.70)]
            for (name, latitude, longitude) in places {
                _ = try await client.execute(
                    uri: "/trips", method: .post, headers: Self.json,
                    body: Self.trip(name, name, price: 1, latitude: latitude, longitude: longitude))
            }
            // From Coimbra: Porto (about 100 km), then Lisbon (about 175 km); Madrid is beyond 300 km.
            try await client.execute(uri: "/trips/nearby?lat=40.21&lon=-8.43&radius=300000", method: .get) { response throws in
                #expect(response.status == .ok)
                #expect(try Self.names(response) == ["Porto", "Lisbon"])
            }
            try await client.execute(uri: "/trips/nearby?lat=40.21&lon=-8.43&radius=300000&limit=1", method: .get) { response throws in
                #expect(try Self.names(response) == ["Porto"])
            }
        }
    }

    /// The change feed pages through history: each page's `next` token continues it.
    @Test func changeFeedPagesInOrder() async throws {
        struct Feed: Decodable {
            struct Change: Decodable { var kind: String }
            var changes: [Change]
            var next: String?
        }
        try await Self.withApp { client in
            for name in ["a", "b"] {
                _ = try await client.execute(uri: "/trips", method: .post, headers: Self.json, body: Self.trip(name, "Lisbon", price: 1))
            }
            _ = try await client.execute(uri: "/trips/a", method: .patch, headers: Self.json, body: ByteBuffer(string: #"{"price": 2}"#))
            _ = try await client.execute(uri: "/trips/b", method: .delete)
            var kinds: [String] = []
            var after: String?
            for _ in 0..<10 {
                let uri = "/changes?limit=1" + (after.map { "&after=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0) } ?? "")
                let feed = try await client.execute(uri: uri, method: .get) { response throws in
                    #expect(response.status == .ok)
                    return try Self.decode(Feed.self, response)
                }
                if feed.changes.isEmpty { break }
                kinds += feed.changes.map(\.kind)
                after = feed.next
            }
            #expect(kinds == ["insert", "insert", "update", "delete"])
        }
    }
}
