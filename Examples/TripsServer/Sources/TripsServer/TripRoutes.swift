import Foundation
import Hummingbird
import OpenSwiftDataPostgres
import SwiftData

/// The API: `/trips` (list, search, create), `/trips/:name` (read, change, delete),
/// `/trips/nearby`, `/changes` (the change feed), `/health`.
struct TripRoutes: Sendable {
    let container: ModelContainer

    func add(to router: Router<BasicRequestContext>) {
        router.get("health") { _, _ in "ok" }
        router.get("stats") { _, _ -> Stats in Stats(trips: try await repository().count()) }
        router.get("trips") { request, _ -> [TripBody] in
            let query = request.uri.queryParameters
            var search = TripRepository.Search()
            search.destination = query.get("destination")
            search.minimumPrice = query.get("minPrice", as: Double.self)
            search.maximumPrice = query.get("maxPrice", as: Double.self)
            search.startsAfter = query.get("after", as: Double.self).map(Date.init(timeIntervalSince1970:))
            search.sort = query.get("sort") ?? "name"
            search.limit = query.get("limit", as: Int.self) ?? 50
            search.offset = query.get("offset", as: Int.self) ?? 0
            return try await repository().trips(matching: search)
        }
        router.post("trips") { request, context -> EditedResponse<TripBody> in
            let body = try await request.decode(as: TripBody.self, context: context)
            guard !body.name.isEmpty else { throw HTTPError(.badRequest, message: "a trip needs a name") }
            do {
                return EditedResponse(status: .created, response: try await repository().save(body))
            } catch {
                throw Self.clientError(error) ?? error
            }
        }
        router.get("trips/nearby") { request, _ -> [TripBody] in
            let query = request.uri.queryParameters
            guard let latitude = query.get("lat", as: Double.self), let longitude = query.get("lon", as: Double.self) else {
                throw HTTPError(.badRequest, message: "nearby needs lat and lon")
            }
            do {
                return try await repository().nearby(
                    latitude: latitude, longitude: longitude, metres: query.get("radius", as: Double.self) ?? 50_000,
                    limit: query.get("limit", as: Int.self) ?? 10)
            } catch DataStoreError.unsupportedFeature {
                throw HTTPError(.notImplemented, message: "this store has no spatial index")
            }
        }
        router.get("trips/:name") { _, context -> TripBody in
            let name = try context.parameters.require("name")
            guard let trip = try await repository().trip(named: name) else { throw HTTPError(.notFound) }
            return trip
        }
        router.patch("trips/:name") { request, context -> TripBody in
            let name = try context.parameters.require("name")
            let change = try await request.decode(as: TripChange.self, context: context)
            do {
                guard let trip = try await repository().change(name, change) else { throw HTTPError(.notFound) }
                return trip
            } catch is SaveConflictError {
                // Another request or server saved this trip since this request read it: nothing changed.
                throw HTTPError(.conflict, message: "\(name) changed meanwhile: read it again")
            } catch {
                throw Self.clientError(error) ?? error
            }
        }
        router.delete("trips/:name") { _, context -> HTTPResponse.Status in
            let name = try context.parameters.require("name")
            do {
                return try await repository().delete(name) ? .noContent : .notFound
            } catch is SaveConflictError {
                throw HTTPError(.conflict, message: "\(name) changed meanwhile: read it again")
            }
        }
        router.get("changes") { request, _ -> ChangeFeed in
            let after = try request.uri.queryParameters.get("after").map(ChangeFeed.token(from:))
            do {
                let (changes, last) = try await repository().changes(
                    after: after, limit: request.uri.queryParameters.get("limit", as: Int.self) ?? 500)
                return ChangeFeed(changes: changes, next: try (last ?? after).map(ChangeFeed.text(of:)))
            } catch DataStoreError.unsupportedFeature {
                throw HTTPError(.notImplemented, message: "this store keeps no history")
            }
        }
    }

    /// A save refused for what the client sent, as a 4xx: a value the store cannot
    /// keep (PostgreSQL: a NUL character, an indexed string over 2,000 bytes) is 400, a
    /// change that would give the trip another trip's unique key 409. Nothing was saved.
    static func clientError(_ error: any Error) -> HTTPError? {
        if case let .unsupportedValue(reason)? = error as? PostgresStoreError {
            return HTTPError(.badRequest, message: "the store cannot keep this value: \(reason)")
        }
        if SwiftDataError.uniqueConstraintViolation ~= error {
            return HTTPError(.conflict, message: "another trip holds that unique value")
        }
        return nil
    }

    /// One actor per request: its own context over the shared container.
    private func repository() -> TripRepository {
        TripRepository(modelContainer: container)
    }
}

/// How many trips the store holds.
struct Stats: ResponseEncodable {
    var trips: Int
}

/// A page of the change feed; `next` is the token to ask after.
struct ChangeFeed: ResponseEncodable {
    var changes: [ChangeBody]
    var next: String?

    static func text(of token: DefaultHistoryToken) throws -> String {
        try JSONEncoder().encode(token).base64EncodedString()
    }

    /// The token `text` stands for; anything else (not base64, or base64 of
    /// something that is not a token) is the client's mistake: 400.
    static func token(from text: String) throws -> DefaultHistoryToken {
        guard let data = Data(base64Encoded: text), let token = try? JSONDecoder().decode(DefaultHistoryToken.self, from: data) else {
            throw HTTPError(.badRequest, message: "not a change token")
        }
        return token
    }
}

extension TripBody: ResponseEncodable {}
