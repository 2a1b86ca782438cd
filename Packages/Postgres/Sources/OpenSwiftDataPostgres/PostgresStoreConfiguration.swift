import Foundation
import Logging
import OpenSwiftData

/// Where a `PostgresStore` keeps its models: a PostgreSQL database.
///
/// ```swift
/// let container = try ModelContainer(
///     for: Trip.self, configurations: try PostgresStoreConfiguration(url: "postgres://app@db:5432/trips"))
/// ```
/// Connections are plain TCP without TLS (a database on a private network or
/// loopback); authentication is by password or trust. `logger` receives the store's
/// and postgres-nio's log records (queries at debug and trace level); it is not part
/// of the configuration's identity.
public struct PostgresStoreConfiguration: DataStoreConfiguration, Sendable {
    public typealias Store = PostgresStore

    public var name: String
    public var schema: Schema?
    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    /// Where the store logs: an app passes its own, with its level and handler.
    public var logger: Logger

    public init(
        name: String = "default", schema: Schema? = nil, host: String = "127.0.0.1", port: Int = 5432, username: String,
        password: String? = nil, database: String, logger: Logger = Logger(label: "OpenSwiftData.PostgresStore")
    ) {
        self.logger = logger
        self.name = name
        self.schema = schema
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
    }

    /// A configuration from a URL: `postgres://user[:password]@host[:port]/database`.
    /// - Throws: `PostgresStoreError.invalidURL` for anything else, naming the URL with
    ///   its password as `***` (errors end up in logs).
    public init(
        name: String = "default", schema: Schema? = nil, url: String,
        logger: Logger = Logger(label: "OpenSwiftData.PostgresStore")
    ) throws {
        guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme ?? ""),
              let host = components.host, !host.isEmpty, let user = components.user, !user.isEmpty
        else { throw PostgresStoreError.invalidURL(Self.redacted(url)) }
        let database = String(components.path.drop { $0 == "/" })
        self.init(
            name: name, schema: schema, host: host, port: components.port ?? 5432, username: user,
            password: components.password, database: database.isEmpty ? user : database, logger: logger)
    }

    /// `url` with its password, if it has one, as `***`: what logs and error messages
    /// may say of a database URL. A URL that does not parse keeps its scheme and what
    /// follows its last `@`; its credentials become `***`.
    public static func redacted(_ url: String) -> String {
        if var components = URLComponents(string: url) {
            guard components.password != nil else { return url }
            components.password = "***"
            if let text = components.string { return text }
        }
        guard let at = url.lastIndex(of: "@") else { return url }
        let scheme = url.range(of: "://").map { String(url[..<$0.upperBound]) } ?? ""
        return scheme + "***" + url[at...]
    }

    public func validate() throws {
        guard !host.isEmpty, (1...65535).contains(port), !username.isEmpty, !database.isEmpty else {
            throw PostgresStoreError.invalidURL("postgres://\(username)@\(host):\(port)/\(database)")
        }
    }

    /// Two configurations are the same store when they name the same database.
    public static func == (lhs: PostgresStoreConfiguration, rhs: PostgresStoreConfiguration) -> Bool {
        lhs.name == rhs.name && lhs.host == rhs.host && lhs.port == rhs.port && lhs.username == rhs.username
            && lhs.database == rhs.database
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(host)
        hasher.combine(port)
        hasher.combine(database)
    }
}

/// What `PostgresStore` reports beyond SwiftData's errors.
public enum PostgresStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The configuration's URL is not `postgres://user@host:port/database`.
    case invalidURL(String)
    /// The configuration has no schema (a container gives it one).
    case missingSchema
    /// The server could not be reached or refused the connection.
    case connection(String)
    /// The server refused a statement.
    case server(String)
    /// A value PostgreSQL's columns cannot take as stored here (`Decimal.nan`, a
    /// string holding a NUL character).
    case unsupportedValue(String)
    /// An entity, attribute or relationship name longer than the 63 bytes PostgreSQL
    /// keeps of an identifier (it would cut it silently, making two names one).
    case identifierTooLong(String)

    public var description: String {
        switch self {
        case let .invalidURL(url): "not a PostgreSQL URL: \(url)"
        case .missingSchema: "the configuration has no schema"
        case let .connection(message): "cannot connect: \(message)"
        case let .server(message): "the server refused: \(message)"
        case let .unsupportedValue(value): "PostgreSQL cannot store \(value) here"
        case let .identifierTooLong(name): "\(name) is longer than the 63 bytes PostgreSQL keeps of a name: shorten it (or use originalName to rename it)"
        }
    }
}
