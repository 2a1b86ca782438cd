import Fluent
import Foundation
import Vapor

/// The routes the load scripts drive, as TripsServer answers them: `POST /trips`
/// (201 for a new trip, 200 for one of its name replaced), `GET /trips/:name`,
/// `GET /trips?destination=&sort=&limit=`, `GET /stats`, `GET /health`.
func routes(_ app: Application) {
    app.get("health") { _ in "ok" }

    app.get("stats") { request async throws -> Stats in
        Stats(trips: try await Trip.query(on: request.db).count())
    }

    app.post("trips") { request async throws -> Response in
        let body = try request.content.decode(TripBody.self)
        guard !body.name.isEmpty else { throw Abort(.badRequest, reason: "a trip needs a name") }
        // An upsert on the unique name, as Fluent apps write one: find, then update or
        // create; a create that loses a race for the name updates the winner's row.
        for attempt in 1...2 {
            let existing = try await Trip.query(on: request.db).filter(\.$name == body.name).first()
            let trip = existing ?? Trip()
            trip.take(body)
            do {
                try await trip.save(on: request.db)
            } catch let error as any DatabaseError where error.isConstraintFailure && attempt == 1 {
                continue
            }
            return try await TripBody(trip).encodeResponse(status: existing == nil ? .created : .ok, for: request)
        }
        throw Abort(.conflict)
    }

    app.get("trips", ":name") { request async throws -> TripBody in
        let name = try request.parameters.require("name")
        guard let trip = try await Trip.query(on: request.db).filter(\.$name == name).first() else { throw Abort(.notFound) }
        return TripBody(trip)
    }

    app.get("trips") { request async throws -> [TripBody] in
        var query = Trip.query(on: request.db)
        if let destination = request.query[String.self, at: "destination"] { query = query.filter(\.$destination == destination) }
        if let low = request.query[Double.self, at: "minPrice"] { query = query.filter(\.$price >= low) }
        if let high = request.query[Double.self, at: "maxPrice"] { query = query.filter(\.$price <= high) }
        switch request.query[String.self, at: "sort"] ?? "name" {
        case "price": query = query.sort(\.$price).sort(\.$name)
        case "-price": query = query.sort(\.$price, .descending).sort(\.$name)
        case "startDate": query = query.sort(\.$startDate).sort(\.$name)
        case "-startDate": query = query.sort(\.$startDate, .descending).sort(\.$name)
        case "name": query = query.sort(\.$name)
        case let other: throw Abort(.badRequest, reason: "sort: price, -price, startDate, -startDate or name, not \(other)")
        }
        let limit = max(1, min(request.query[Int.self, at: "limit"] ?? 50, 500))
        let offset = max(0, request.query[Int.self, at: "offset"] ?? 0)
        return try await query.range(offset..<(offset + limit)).all().map(TripBody.init)
    }
}

struct Stats: Content {
    var trips: Int
}
