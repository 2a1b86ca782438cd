import Foundation
import OpenSwiftDataPostgres
import SwiftData
import Testing

/// PostgresStore over TLS, against the test server, whose certificate a CA the script
/// made signed. Encryption is checked on the server's side (`pg_stat_ssl` of the
/// connections to the test's own database), with a plain connection as the control.
@Suite struct PostgresTLSTests {
    static let serverHasTLS = PostgresServer.caCertificate != nil
    static let schema = Schema([Voyage.self, Leg.self, Traveller.self])

    /// `ssl` of every connection to `url`'s database (the container's, while it is open).
    static func sslOfConnections(to url: String) throws -> [String] {
        let database = String(url[url.index(after: url.lastIndex(of: "/")!)...])
        let rows = try PostgresServer.query(
            "SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.datname = '\(database)'")
        return rows.split(separator: "\n").map(String.init)
    }

    static func saveAndFetch(_ configuration: PostgresStoreConfiguration) throws -> ModelContainer {
        let container = try ModelContainer(for: schema, configurations: [configuration])
        let context = ModelContext(container)
        context.insert(Voyage(code: "T1", destination: "Tallinn", startDate: StoreConformanceTests.start, price: 1, seats: 2))
        try context.save()
        let fetched = try ModelContext(container).fetch(FetchDescriptor<Voyage>())
        #expect(fetched.map(\.destination) == ["Tallinn"])
        return container
    }

    static func requireTLS() throws -> String {
        if !serverHasTLS { Issue.record("OSD_REQUIRE_POSTGRES is set and the server has no TLS (is openssl installed?)") }
        return try #require(PostgresServer.caCertificate)
    }

    @Test(.enabled(if: serverHasTLS || StoreKindTests.postgresRequired, "the test server has no TLS (install openssl): PostgresStore's TLS cases are skipped"))
    func requireEncryptsAndDisableDoesNot() throws {
        _ = try Self.requireTLS()
        let encrypted = try PostgresServer.makeDatabase()
        var configuration = try PostgresStoreConfiguration(url: encrypted)
        configuration.tls = .require
        let container = try Self.saveAndFetch(configuration)
        let ssl = try Self.sslOfConnections(to: encrypted)
        #expect(!ssl.isEmpty && ssl.allSatisfy { $0 == "t" }, "\(ssl)")
        // The control: the same check sees a plain connection as plain.
        let plain = try PostgresServer.makeDatabase()
        let plainContainer = try Self.saveAndFetch(try PostgresStoreConfiguration(url: plain))
        let plainSSL = try Self.sslOfConnections(to: plain)
        #expect(!plainSSL.isEmpty && plainSSL.allSatisfy { $0 == "f" }, "\(plainSSL)")
        withExtendedLifetime((container, plainContainer)) {}
    }

    @Test(.enabled(if: serverHasTLS || StoreKindTests.postgresRequired, "the test server has no TLS (install openssl): PostgresStore's TLS cases are skipped"))
    func verifyFullAgainstTheServersCA() throws {
        let ca = try Self.requireTLS()
        let url = try PostgresServer.makeDatabase()
        let configuration = try PostgresStoreConfiguration(url: url + "?sslmode=verify-full&sslrootcert=\(ca)")
        #expect(configuration.tls == .verifyFull(caCertificatePath: ca))
        let container = try Self.saveAndFetch(configuration)
        let ssl = try Self.sslOfConnections(to: url)
        #expect(!ssl.isEmpty && ssl.allSatisfy { $0 == "t" }, "\(ssl)")
        withExtendedLifetime(container) {}
    }

    @Test(.enabled(if: serverHasTLS || StoreKindTests.postgresRequired, "the test server has no TLS (install openssl): PostgresStore's TLS cases are skipped"))
    func anotherCAIsRefused() throws {
        _ = try Self.requireTLS()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("osd-other-ca-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (status, output) = PostgresServer.shell([
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
            "-subj", "/CN=Another CA", "-keyout", folder + "/ca.key", "-out", folder + "/ca.crt",
        ])
        try #require(status == 0, "openssl: \(output)")
        let url = try PostgresServer.makeDatabase()
        for mode in [PostgresStoreConfiguration.TLSMode.verifyFull(caCertificatePath: folder + "/ca.crt"), .verifyCA(caCertificatePath: folder + "/ca.crt")] {
            var configuration = try PostgresStoreConfiguration(url: url)
            configuration.tls = mode
            #expect {
                try ModelContainer(for: Self.schema, configurations: [configuration])
            } throws: { error in
                guard case let .tls(message)? = error as? PostgresStoreError else { return false }
                return message.uppercased().contains("CERTIFICATE")
            }
        }
        let ssl = try Self.sslOfConnections(to: url)
        #expect(ssl.isEmpty, "a refused server's connection is closed: \(ssl)")
    }

    @Test func urlParametersGiveTheModes() throws {
        let base = "postgres://app:s3cret@db.example/trips"
        #expect(try PostgresStoreConfiguration(url: base).tls == .disable)
        #expect(try PostgresStoreConfiguration(url: base + "?sslmode=disable").tls == .disable)
        #expect(try PostgresStoreConfiguration(url: base + "?sslmode=prefer").tls == .prefer)
        #expect(try PostgresStoreConfiguration(url: base + "?sslmode=require").tls == .require)
        #expect(try PostgresStoreConfiguration(url: base + "?sslmode=verify-ca").tls == .verifyCA(caCertificatePath: nil))
        #expect(try PostgresStoreConfiguration(url: base + "?sslmode=verify-full&sslrootcert=system").tls == .verifyFull(caCertificatePath: nil))
        #expect(try PostgresStoreConfiguration(url: base + "?sslrootcert=/etc/ca.crt&sslmode=verify-full").tls == .verifyFull(caCertificatePath: "/etc/ca.crt"))
        // TLS is how to reach a database, not which: the same store either way.
        #expect(try PostgresStoreConfiguration(url: base + "?sslmode=require") == PostgresStoreConfiguration(url: base))
        for (query, reason) in [("sslmode=allow", "'allow' is not supported"), ("sslmode=bogus", "'bogus' is not supported"), ("sslrootcert=/ca.crt", "sslrootcert needs sslmode=verify-ca or verify-full")] {
            #expect {
                try PostgresStoreConfiguration(url: base + "?" + query)
            } throws: { error in
                let text = String(describing: error)
                guard case .invalidURL? = error as? PostgresStoreError else { return false }
                return text.contains(reason) && !text.contains("s3cret")
            }
        }
    }

    /// A CA file that is not there: a TLS error naming it, before any connection.
    @Test func aMissingCAFileIsATLSError() {
        let configuration = PostgresStoreConfiguration(
            port: 1, username: "osd", database: "trips", tls: .verifyFull(caCertificatePath: "/nonexistent/ca.crt"))
        #expect {
            try ModelContainer(for: Self.schema, configurations: [configuration])
        } throws: { error in
            guard case let .tls(message)? = error as? PostgresStoreError else { return false }
            return message.contains("/nonexistent/ca.crt")
        }
    }
}
