import Foundation
import Logging
import OpenSwiftData

/// Where a `PostgresStore` keeps its models: a PostgreSQL database.
///
/// ```swift
/// let container = try ModelContainer(
///     for: Trip.self, configurations: try PostgresStoreConfiguration(url: "postgres://app@db:5432/trips"))
/// ```
/// Connections are plain TCP unless `tls` says otherwise (a database across a network
/// someone else can read wants `.verifyFull`); authentication is by password or trust.
/// `poolSize` bounds the connections the store opens. `readReplicas` adds hot standbys
/// that serve fetches. `logger` receives the store's and postgres-nio's log records
/// (queries at debug and trace level). Neither `tls`, `poolSize`, the replicas nor
/// `logger`, nor the password, is part of the configuration's identity: they say how
/// to reach the database, not which it is.
public struct PostgresStoreConfiguration: DataStoreConfiguration, Sendable {
    public typealias Store = PostgresStore

    public var name: String
    public var schema: Schema?
    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    /// Whether the connection is encrypted and what it checks of the server's certificate.
    public var tls: TLSMode
    /// Where the store logs: an app passes its own, with its level and handler.
    public var logger: Logger
    /// The most connections the store opens to the server at once (its pool's size;
    /// 8 unless set). Each fetch, and each save's transaction, takes one for its
    /// length, so this many run in parallel and more wait their turn. Connections open
    /// as calls need them and close after a minute unused.
    ///
    /// Calls block their thread while they run, so a container has at most as many
    /// in flight as threads calling it: `@ModelActor`s share Swift's cooperative pool,
    /// one thread per core. Several app servers over one database share PostgreSQL's
    /// `max_connections` (100 by default): keep their pools' sum below it.
    public var poolSize: Int = PostgresStoreConfiguration.defaultPoolSize

    /// The pool size a configuration has unless told otherwise.
    public static let defaultPoolSize = 8

    /// Hot standbys of the database that serve fetches (none unless set), each with a
    /// pool of `poolSize` connections and the primary's user, password, database and
    /// TLS mode. A fetch goes to a standby that has replayed every save
    /// `replicaConsistency` says it must see, else to the primary; saves and history
    /// always go to the primary. A standby that fails a fetch is left alone for a few
    /// seconds while the primary serves.
    public var readReplicas: [ReadReplica] = []

    /// Which saves a fetch served by a read replica is sure to see (`.store` unless
    /// set: a context sees what any context of its container saved, as without replicas).
    public var replicaConsistency: ReplicaConsistency = .store

    /// A hot standby's address (`readReplicas`).
    public struct ReadReplica: Hashable, Sendable {
        public var host: String
        public var port: Int

        public init(host: String, port: Int = 5432) {
            self.host = host
            self.port = port
        }
    }

    /// Which saves a fetch from a read replica sees, at least. Saves made by other
    /// processes (other app servers) are seen once a standby has replayed them, a
    /// moment after they return: across processes, replicas make reads eventually
    /// consistent.
    public enum ReplicaConsistency: Hashable, Sendable {
        /// Every save made through this store, by any context of its container: a
        /// context sees another's save the moment it returns, as SwiftData promises.
        /// While a standby replays the container's last save, fetches go to the primary.
        case store
        /// Its own context's saves only (read-your-writes): more fetches served by the
        /// standbys, for an app whose contexts each serve one user or request and never
        /// hand a save to another context.
        case context
    }

    /// How a connection uses TLS: libpq's `sslmode` values, but for `allow`.
    public enum TLSMode: Hashable, Sendable {
        /// Plain TCP: for loopback or a private network.
        case disable
        /// TLS when the server offers it, plain TCP when it does not; nothing verified.
        case prefer
        /// TLS or no connection, without verifying the certificate: encrypted, but not
        /// proof against someone in the middle.
        case require
        /// TLS with the server's certificate chain verified against the CA certificates
        /// (PEM) at `caCertificatePath`, or the system's when `nil`; any host name.
        case verifyCA(caCertificatePath: String? = nil)
        /// As `verifyCA`, and the certificate must name the host connected to (a DNS
        /// name, or an IP address in its subject alternative names).
        case verifyFull(caCertificatePath: String? = nil)
    }

    public init(
        name: String = "default", schema: Schema? = nil, host: String = "127.0.0.1", port: Int = 5432, username: String,
        password: String? = nil, database: String, tls: TLSMode = .disable,
        logger: Logger = Logger(label: "OpenSwiftData.PostgresStore")
    ) {
        self.tls = tls
        self.logger = logger
        self.name = name
        self.schema = schema
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
    }

    /// A configuration from a URL: `postgres://user[:password]@host[:port]/database`,
    /// with libpq's TLS parameters if wanted: `?sslmode=disable|prefer|require|verify-ca|verify-full`
    /// and `sslrootcert=/path/to/ca.crt` (or `system`, the system's CAs, as when it is
    /// left out), and `replica=host[:port]` once for each read replica (`readReplicas`).
    /// Without `sslmode` the connection is plain, as before these parameters; other
    /// parameters are ignored.
    /// - Throws: `PostgresStoreError.invalidURL` for anything else, naming the URL with
    ///   its password as `***` (errors end up in logs) and what is wrong with a parameter.
    public init(
        name: String = "default", schema: Schema? = nil, url: String,
        logger: Logger = Logger(label: "OpenSwiftData.PostgresStore")
    ) throws {
        guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme ?? ""),
              let host = components.host, !host.isEmpty, let user = components.user, !user.isEmpty
        else { throw PostgresStoreError.invalidURL(Self.redacted(url)) }
        let database = String(components.path.drop { $0 == "/" })
        let tls = try Self.tlsMode(from: components.queryItems ?? [], url: url)
        self.init(
            name: name, schema: schema, host: host, port: components.port ?? 5432, username: user,
            password: components.password, database: database.isEmpty ? user : database, tls: tls, logger: logger)
        readReplicas = try (components.queryItems ?? []).filter { $0.name == "replica" }.map { item in
            try Self.replica(item.value ?? "", url: url)
        }
    }

    /// A `replica=host[:port]` parameter's standby.
    private static func replica(_ text: String, url: String) throws -> ReadReplica {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), !parts[0].isEmpty else {
            throw PostgresStoreError.invalidURL("\(Self.redacted(url)) (replica needs host or host:port, not '\(text)')")
        }
        guard parts.count == 2 else { return ReadReplica(host: String(parts[0])) }
        guard let port = Int(parts[1]), (1...65535).contains(port) else {
            throw PostgresStoreError.invalidURL("\(Self.redacted(url)) (replica port '\(parts[1])' is not in 1...65535)")
        }
        return ReadReplica(host: String(parts[0]), port: port)
    }

    /// The mode a URL's `sslmode` and `sslrootcert` ask for. A root certificate with no
    /// mode that verifies is refused rather than ignored: its writer meant the server
    /// to be checked, and libpq's default (`prefer`) would not check it.
    private static func tlsMode(from items: [URLQueryItem], url: String) throws -> TLSMode {
        func invalid(_ reason: String) -> PostgresStoreError { .invalidURL("\(Self.redacted(url)) (\(reason))") }
        let mode = items.last { $0.name == "sslmode" }.map { $0.value ?? "" }
        let root = items.last { $0.name == "sslrootcert" }.map { $0.value ?? "" }
        let caPath: String? = switch root {
        case nil, "system"?: nil
        case let path?: path
        }
        if root == "" { throw invalid("sslrootcert needs a file's path, or system") }
        switch mode {
        case nil, "disable"?, "prefer"?, "require"?:
            if root != nil { throw invalid("sslrootcert needs sslmode=verify-ca or verify-full") }
            return switch mode {
            case "prefer"?: .prefer
            case "require"?: .require
            default: .disable
            }
        case "verify-ca"?: return .verifyCA(caCertificatePath: caPath)
        case "verify-full"?: return .verifyFull(caCertificatePath: caPath)
        case let other?:
            throw invalid("sslmode \(other.isEmpty ? "is empty" : "'\(other)' is not supported"): use disable, prefer, require, verify-ca or verify-full")
        }
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
        guard poolSize >= 1 else { throw PostgresStoreError.invalidConfiguration("poolSize is \(poolSize): at least 1 connection") }
        for replica in readReplicas where replica.host.isEmpty || !(1...65535).contains(replica.port) {
            throw PostgresStoreError.invalidConfiguration("read replica \(replica.host):\(replica.port) is not a host and port")
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
    /// The configuration's URL is not `postgres://user@host:port/database`, or one of
    /// its parameters is wrong (the text ends with what is wrong, in parentheses).
    case invalidURL(String)
    /// The configuration has no schema (a container gives it one).
    case missingSchema
    /// A setting of the configuration is out of its range (the text says which).
    case invalidConfiguration(String)
    /// The server could not be reached or refused the connection.
    case connection(String)
    /// The connection's TLS failed: the server offers none, its certificate did not
    /// verify, or the CA certificates could not be loaded. (Not retried without TLS.)
    case tls(String)
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
        case let .invalidConfiguration(reason): "invalid configuration: \(reason)"
        case let .connection(message): "cannot connect: \(message)"
        case let .tls(message): "cannot connect over TLS: \(message)"
        case let .server(message): "the server refused: \(message)"
        case let .unsupportedValue(value): "PostgreSQL cannot store \(value) here"
        case let .identifierTooLong(name): "\(name) is longer than the 63 bytes PostgreSQL keeps of a name: shorten it (or use originalName to rename it)"
        }
    }
}
