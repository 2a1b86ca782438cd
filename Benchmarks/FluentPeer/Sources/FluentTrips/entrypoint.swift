import Fluent
import FluentPostgresDriver
import Foundation
import Vapor

/// `DATABASE_URL=postgres://user@host:port/db?sslmode=disable FluentTrips serve --hostname 127.0.0.1 --port 8081`
///
/// Creates the table if it is missing (`CreateTrips`), then serves. Dates go as
/// ISO 8601 text, as the example's JSON has them. Connections: at most 4 per event
/// loop, one loop per core (fluent-postgres-driver's default is 1 a loop), so 8 on
/// two cores, as the example's PostgresStore pools 8 a container.
@main
enum Entrypoint {
    static func main() async throws {
        var environment = try Environment.detect()
        try LoggingSystem.bootstrap(from: &environment)
        let app = try await Application.make(environment)
        do {
            guard let url = Environment.get("DATABASE_URL") else {
                app.logger.critical("DATABASE_URL is not set: postgres://user@host:port/database")
                throw Abort(.internalServerError)
            }
            var configuration = try SQLPostgresConfiguration(url: url)
            configuration.searchPath = ["public"]
            app.databases.use(.postgres(configuration: configuration, maxConnectionsPerEventLoop: 4), as: .psql)
            app.migrations.add(CreateTrips())
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            ContentConfiguration.global.use(encoder: encoder, for: .json)
            ContentConfiguration.global.use(decoder: decoder, for: .json)
            routes(app)
            try await app.autoMigrate()
            try await app.execute()
        } catch {
            // A clear line and status 1 (a server that cannot be reached, say), not a trap.
            app.logger.critical("FluentTrips stopped: \(String(reflecting: error))")
            try? await app.asyncShutdown()
            exit(1)
        }
        try await app.asyncShutdown()
    }
}
