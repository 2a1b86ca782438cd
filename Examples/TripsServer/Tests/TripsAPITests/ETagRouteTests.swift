import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import TripsAPI

/// `ETag` on reads and `If-Match` on changes: a client's read-modify-write either
/// lands on the version it read or is refused with 412, so no update is lost.
@Suite struct ETagRouteTests {
    static func tag(_ response: TestResponse) -> String? { response.headers[.eTag] }

    static func patch(_ body: String, ifMatch: String?) -> (HTTPFields, ByteBuffer) {
        var headers = RouteTests.json
        if let ifMatch { headers[.ifMatch] = ifMatch }
        return (headers, ByteBuffer(string: body))
    }

    /// The tag follows the content: it changes with a change, comes back with the old
    /// content, and PATCH answers the tag the next GET gives.
    @Test func theTagFollowsTheContent() async throws {
        try await RouteTests.withApp { client in
            let created = try await client.execute(
                uri: "/trips", method: .post, headers: RouteTests.json, body: RouteTests.trip("A", "Lisbon", price: 10)
            ) { $0.status }
            #expect(created == .created)
            let first = try await client.execute(uri: "/trips/A", method: .get) { Self.tag($0) }
            let again = try await client.execute(uri: "/trips/A", method: .get) { Self.tag($0) }
            #expect(first != nil)
            #expect(first == again)
            let (headers, body) = Self.patch(#"{"price": 11}"#, ifMatch: nil)
            let patched = try await client.execute(uri: "/trips/A", method: .patch, headers: headers, body: body) { response in
                #expect(response.status == .ok)
                return Self.tag(response)
            }
            #expect(patched != nil)
            #expect(patched != first)
            #expect(try await client.execute(uri: "/trips/A", method: .get) { Self.tag($0) } == patched)
            let (back, backBody) = Self.patch(#"{"price": 10}"#, ifMatch: nil)
            _ = try await client.execute(uri: "/trips/A", method: .patch, headers: back, body: backBody) { $0.status }
            #expect(try await client.execute(uri: "/trips/A", method: .get) { Self.tag($0) } == first)
        }
    }

    /// A PATCH whose `If-Match` names a version no longer stored changes nothing and
    /// answers 412 with the current tag; the current tag, `*`, or a list holding it pass.
    @Test func aStaleIfMatchIs412AndChangesNothing() async throws {
        try await RouteTests.withApp { client in
            _ = try await client.execute(uri: "/trips", method: .post, headers: RouteTests.json, body: RouteTests.trip("A", "Lisbon", price: 10))
            let read = try #require(try await client.execute(uri: "/trips/A", method: .get) { Self.tag($0) })
            let (headers, body) = Self.patch(#"{"notes": "first"}"#, ifMatch: read)
            let current = try #require(try await client.execute(uri: "/trips/A", method: .patch, headers: headers, body: body) { response in
                #expect(response.status == .ok)
                return Self.tag(response)
            })
            let (stale, staleBody) = Self.patch(#"{"notes": "second"}"#, ifMatch: read)
            try await client.execute(uri: "/trips/A", method: .patch, headers: stale, body: staleBody) { response in
                #expect(response.status == .preconditionFailed)
                #expect(Self.tag(response) == current)
            }
            try await client.execute(uri: "/trips/A", method: .get) { response throws in
                #expect(try RouteTests.decode(TripBody.self, response).notes == "first")
            }
            // Weak tags never match (strong comparison); `*` and a list holding the tag do.
            let cases: [(String, HTTPResponse.Status)] = [
                ("W/" + current, .preconditionFailed), ("\"0\", " + current, .ok), ("*", .ok),
            ]
            for (condition, status) in cases {
                let (headers, body) = Self.patch(#"{"price": 12}"#, ifMatch: condition)
                try await client.execute(uri: "/trips/A", method: .patch, headers: headers, body: body) { response in
                    #expect(response.status == status, "If-Match: \(condition)")
                }
            }
        }
    }

    /// DELETE with a stale `If-Match` leaves the trip (412); with the current tag it deletes.
    @Test func deleteHonoursIfMatch() async throws {
        try await RouteTests.withApp { client in
            _ = try await client.execute(uri: "/trips", method: .post, headers: RouteTests.json, body: RouteTests.trip("A", "Lisbon", price: 10))
            let read = try #require(try await client.execute(uri: "/trips/A", method: .get) { Self.tag($0) })
            let (headers, body) = Self.patch(#"{"price": 11}"#, ifMatch: nil)
            let current = try #require(try await client.execute(uri: "/trips/A", method: .patch, headers: headers, body: body) { Self.tag($0) })
            try await client.execute(uri: "/trips/A", method: .delete, headers: [.ifMatch: read]) { response in
                #expect(response.status == .preconditionFailed)
            }
            try await client.execute(uri: "/trips/A", method: .delete, headers: [.ifMatch: current]) { response in
                #expect(response.status == .noContent)
            }
            try await client.execute(uri: "/trips/A", method: .get) { response in
                #expect(response.status == .notFound)
            }
        }
    }

    /// Clients appending tokens to one trip's notes at once (GET, then PATCH with
    /// `If-Match`, again on 412 or 409): every token lands exactly once.
    @Test func concurrentReadModifyWritesLoseNothing() async throws {
        struct Notes: Decodable { var notes: String? }
        try await RouteTests.withApp { client in
            _ = try await client.execute(uri: "/trips", method: .post, headers: RouteTests.json, body: RouteTests.trip("Shared", "Porto", price: 1))
            let writers = 4, appends = 15
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        for append in 0..<appends {
                            while true {
                                let (tag, notes) = try await client.execute(uri: "/trips/Shared", method: .get) { response throws in
                                    (Self.tag(response), try RouteTests.decode(Notes.self, response).notes)
                                }
                                let token = "w\(writer)-\(append)"
                                let next = (notes.map { $0 + " " } ?? "") + token
                                let (headers, body) = Self.patch(#"{"notes": "\#(next)"}"#, ifMatch: tag)
                                let status = try await client.execute(uri: "/trips/Shared", method: .patch, headers: headers, body: body) { $0.status }
                                if status == .ok { break }
                                // Another writer's append landed between this GET and PATCH: read again.
                                #expect(status == .preconditionFailed || status == .conflict, "\(status)")
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let notes = try await client.execute(uri: "/trips/Shared", method: .get) { response throws in
                try RouteTests.decode(Notes.self, response).notes
            }
            let tokens = (notes ?? "").split(separator: " ").map(String.init)
            #expect(tokens.count == writers * appends)
            #expect(Set(tokens) == Set((0..<writers).flatMap { w in (0..<appends).map { "w\(w)-\($0)" } }))
        }
    }
}
