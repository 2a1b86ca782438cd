import Foundation
import Hummingbird
import OpenSwiftDataPostgres
import SwiftData

/// The API: `/trips` (list, search, create), `/trips/:name` (read, change, delete),
/// `/trips/nearby`, `/changes` (the change feed, as JSON pages or a stream of
/// server-sent events), `/health`.
struct TripRoutes: Sendable {
    let container: ModelContainer

    func add(to router: Router<BasicRequestContext>) {
        router.get("health") { _, _ in "ok" }
        router.get("stats") { _, _ -> Stats in Stats(trips: try await repository().count()) }
        router.get("trips") { request, _ -> [TripBody] in
            let query = Query(request)
            var search = TripRepository.Search()
            search.destination = query.text("destination")
            search.minimumPrice = try query.number("minPrice", as: Double.self)
            search.maximumPrice = try query.number("maxPrice", as: Double.self)
            search.startsAfter = try query.date("after")
            if let sort = query.text("sort") {
                guard TripRepository.Search.sorts.contains(sort) else {
                    throw HTTPError(.badRequest, message: "sort: one of \(TripRepository.Search.sorts.joined(separator: ", ")), not \(sort)")
                }
                search.sort = sort
            }
            search.limit = try query.number("limit", as: Int.self, in: 1...500) ?? 50
            search.offset = try query.number("offset", as: Int.self, in: 0...Int.max) ?? 0
            return try await repository().trips(matching: search)
        }
        router.post("trips") { request, context -> EditedResponse<TripBody> in
            let body = try await request.decode(as: TripBody.self, context: context)
            guard !body.name.isEmpty else { throw HTTPError(.badRequest, message: "a trip needs a name") }
            do {
                // 201 for a new trip, 200 for one it replaced (an upsert on the unique name).
                let (trip, created) = try await repository().save(body)
                return EditedResponse(status: created ? .created : .ok, response: trip)
            } catch {
                throw Self.clientError(error) ?? error
            }
        }
        router.get("trips/nearby") { request, _ -> [TripBody] in
            let query = Query(request)
            guard let latitude = try query.number("lat", as: Double.self, in: -90...90),
                  let longitude = try query.number("lon", as: Double.self, in: -180...180) else {
                throw HTTPError(.badRequest, message: "nearby needs lat and lon")
            }
            let metres = try query.number("radius", as: Double.self, in: 0...20_100_000) ?? 50_000
            let limit = try query.number("limit", as: Int.self, in: 1...500) ?? 10
            do {
                return try await repository().nearby(latitude: latitude, longitude: longitude, metres: metres, limit: limit)
            } catch DataStoreError.unsupportedFeature {
                throw HTTPError(.notImplemented, message: "this store has no spatial index")
            }
        }
        // GET, and PATCH's answer, carry the trip's `ETag`; PATCH and DELETE with
        // `If-Match` change nothing (412) unless the trip is still the version it names.
        router.get("trips/:name") { _, context -> EditedResponse<TripBody> in
            let name = try Self.name(context)
            guard let trip = try await repository().trip(named: name) else { throw HTTPError(.notFound) }
            return Self.tagged(trip)
        }
        router.patch("trips/:name") { request, context -> EditedResponse<TripBody> in
            let name = try Self.name(context)
            let change = try await request.decode(as: TripChange.self, context: context)
            do {
                guard let trip = try await repository().change(name, change, ifMatch: IfMatch(request)) else { throw HTTPError(.notFound) }
                return Self.tagged(trip)
            } catch is SaveConflictError {
                // Another request or server saved this trip since this request read it: nothing changed.
                throw HTTPError(.conflict, message: "\(name) changed meanwhile: read it again")
            } catch let error as TripPreconditionFailed {
                throw Self.preconditionFailed(name, error)
            } catch {
                throw Self.clientError(error) ?? error
            }
        }
        router.delete("trips/:name") { request, context -> HTTPResponse.Status in
            let name = try Self.name(context)
            do {
                return try await repository().delete(name, ifMatch: IfMatch(request)) ? .noContent : .notFound
            } catch is SaveConflictError {
                throw HTTPError(.conflict, message: "\(name) changed meanwhile: read it again")
            } catch let error as TripPreconditionFailed {
                throw Self.preconditionFailed(name, error)
            }
        }
        router.get("changes") { request, context -> Response in
            if ChangeStream.isWanted(by: request) { return try await changeStream(request) }
            let after = try request.uri.queryParameters.get("after").map(ChangeFeed.token(from:))
            do {
                let (changes, last) = try await repository().changes(
                    after: after, limit: try Query(request).number("limit", as: Int.self, in: 1...1_000) ?? 500)
                return try ChangeFeed(changes: changes, next: try (last ?? after).map(ChangeFeed.text(of:)))
                    .response(from: request, context: context)
            } catch DataStoreError.unsupportedFeature {
                throw HTTPError(.notImplemented, message: "this store keeps no history")
            }
        }
    }

    /// `/changes` as server-sent events (`ChangeStream`): after the `Last-Event-ID`
    /// header's token, else `after`'s, else from the start; `limit` ends the stream
    /// once that many changes were sent (at the end of a transaction).
    private func changeStream(_ request: Request) async throws -> Response {
        let after = try (ChangeStream.lastEventID(of: request) ?? request.uri.queryParameters.get("after"))
            .map(ChangeFeed.token(from:))
        let limit = try Query(request).number("limit", as: Int.self, in: 1...Int.max)
        do {
            // Asked once first, so a store without history, or an expired token,
            // answers as the JSON form does rather than in the stream.
            _ = try await repository().changes(after: after, limit: 1)
        } catch DataStoreError.unsupportedFeature {
            throw HTTPError(.notImplemented, message: "this store keeps no history")
        }
        return Response(
            status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
            body: ChangeStream.body(container, after: after, limit: limit))
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

    /// The trip with its `ETag` header.
    static func tagged(_ trip: TripBody) -> EditedResponse<TripBody> {
        EditedResponse(headers: [.eTag: TripETag(trip).value], response: trip)
    }

    /// 412, with the trip's current tag, so the client knows what it did not read.
    static func preconditionFailed(_ name: String, _ error: TripPreconditionFailed) -> HTTPError {
        HTTPError(.preconditionFailed, headers: [.eTag: error.current.value], message: "\(name) is not the version If-Match names: read it again")
    }

    /// The `:name` of the path, percent-decoded ("Lisbon%20weekend" is "Lisbon weekend").
    static func name(_ context: BasicRequestContext) throws -> String {
        let raw = try context.parameters.require("name")
        guard let name = raw.removingPercentEncoding else { throw HTTPError(.badRequest, message: "name: bad percent-encoding") }
        return name
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

/// Query parameters read strictly: a parameter that is there but does not parse is
/// the client's mistake, answered 400 naming it, never silently ignored.
struct Query {
    private let value: (String) -> String?

    init(_ request: Request) {
        let parameters = request.uri.queryParameters
        value = { parameters.get($0) }
    }

    func text(_ name: String) -> String? {
        value(name)
    }

    func number<T: LosslessStringConvertible & Comparable>(_ name: String, as _: T.Type, in range: ClosedRange<T>? = nil) throws -> T? {
        guard let text = value(name) else { return nil }
        guard let value = T(text), range.map({ $0.contains(value) }) ?? true else {
            let bounds = range.map { " in \($0.lowerBound)...\($0.upperBound)" } ?? ""
            throw HTTPError(.badRequest, message: "\(name): expected a \(T.self)\(bounds), got \(text)")
        }
        return value
    }

    /// An ISO 8601 date and time (as the bodies use), or seconds since 1970.
    func date(_ name: String) throws -> Date? {
        guard let text = value(name) else { return nil }
        if let seconds = Double(text) { return Date(timeIntervalSince1970: seconds) }
        if let date = try? Date(text, strategy: .iso8601) { return date }
        throw HTTPError(.badRequest, message: "\(name): expected an ISO 8601 date (2026-06-01T00:00:00Z) or seconds since 1970, got \(text)")
    }
}
