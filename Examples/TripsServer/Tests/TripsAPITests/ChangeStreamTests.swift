import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import SwiftData
import Testing
@testable import TripsAPI

/// `/changes` as server-sent events, in process (HummingbirdTesting's router
/// framework): the history so far, then changes as they are saved, resumed after
/// `Last-Event-ID` or `?after=`; over a document and over PostgreSQL, where a stream
/// on one server carries what another server saved.
@Suite struct ChangeStreamTests {
    static let stream: HTTPFields = [.accept: "text/event-stream"]

    /// One server-sent event: its type, data and id lines.
    struct Event: Equatable {
        var event: String?
        var data: String?
        var id: String?
    }

    static func events(_ response: TestResponse) -> [Event] {
        String(buffer: response.body).components(separatedBy: "\n\n").compactMap { block in
            guard !block.isEmpty else { return nil }
            var event = Event()
            for line in block.split(separator: "\n") {
                if line.hasPrefix("event: ") { event.event = String(line.dropFirst(7)) }
                if line.hasPrefix("data: ") { event.data = String(line.dropFirst(6)) }
                if line.hasPrefix("id: ") { event.id = String(line.dropFirst(4)) }
            }
            return event
        }
    }

    static func kind(_ event: Event) throws -> String {
        try JSONDecoder().decode(ChangeBody.self, from: Data(try #require(event.data).utf8)).kind
    }

    /// Runs `request` while `meanwhile` runs, failing after 15 s (the stream never ended).
    static func streaming<R: Sendable>(
        _ request: @escaping @Sendable () async throws -> R, meanwhile: @escaping @Sendable () async throws -> Void
    ) async throws -> R {
        try await withThrowingTaskGroup(of: R?.self) { group in
            group.addTask { try await request() }
            group.addTask {
                try await meanwhile()
                try await Task.sleep(for: .seconds(15))
                throw StreamNeverEnded()
            }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let result { return result }
            }
            throw StreamNeverEnded()
        }
    }

    struct StreamNeverEnded: Error {}

    static func post(_ client: any TestClientProtocol, _ name: String) async throws {
        let status = try await client.execute(
            uri: "/trips", method: .post, headers: RouteTests.json, body: RouteTests.trip(name, "Lisbon", price: 1)
        ) { $0.status }
        #expect(status == .created)
    }

    /// The history so far, then a save made while the stream waits.
    static func streamsHistoryThenNewSaves(_ reader: any TestClientProtocol, writer: any TestClientProtocol) async throws {
        try await post(writer, "a")
        try await post(writer, "b")
        let response = try await streaming({
            try await reader.execute(uri: "/changes?limit=3", method: .get, headers: Self.stream) { response in
                (response.status, response.headers[.contentType], Self.events(response))
            }
        }, meanwhile: {
            // The stream has sent a and b and waits.
            try await Task.sleep(for: .milliseconds(300))
            try await post(writer, "c")
        })
        #expect(response.0 == .ok)
        #expect(response.1 == "text/event-stream")
        let events = response.2
        #expect(events.count == 3)
        #expect(events.allSatisfy { $0.event == "change" })
        #expect(try events.map(Self.kind) == ["insert", "insert", "insert"])
        // Each transaction's (last) event carries its token, in order.
        let tokens = try events.map { try ChangeFeed.token(from: try #require($0.id)) }
        #expect(tokens == tokens.sorted() && Set(tokens).count == 3)
    }

    @Test func aStreamSendsHistoryThenWaitsForNewSaves() async throws {
        try await RouteTests.withApp { client in
            try await Self.streamsHistoryThenNewSaves(client, writer: client)
        }
    }

    @Test func aStreamResumesAfterLastEventIDOrAfter() async throws {
        try await RouteTests.withApp { client in
            for name in ["a", "b", "c"] { try await Self.post(client, name) }
            let all = try await client.execute(uri: "/changes?limit=3", method: .get, headers: Self.stream) { Self.events($0) }
            let ids = all.compactMap(\.id)
            try #require(ids.count == 3)
            // EventSource reconnects with the URL it had and the last id it received.
            var resume = Self.stream
            resume[.init("Last-Event-ID")!] = ids[0]
            let afterHeader = try await client.execute(uri: "/changes?limit=2", method: .get, headers: resume) { Self.events($0) }
            #expect(afterHeader.compactMap(\.id) == Array(ids[1...]))
            let escaped = ids[1].addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ids[1]
            let afterQuery = try await client.execute(uri: "/changes?limit=1&after=\(escaped)", method: .get, headers: Self.stream) {
                Self.events($0)
            }
            #expect(afterQuery.compactMap(\.id) == [ids[2]])
            // The header wins over the query, which is the URL the stream began with.
            let both = try await client.execute(
                uri: "/changes?limit=1&after=\(escaped)", method: .get, headers: [.accept: "text/event-stream", .init("Last-Event-ID")!: ids[0]]
            ) { Self.events($0) }
            #expect(both.compactMap(\.id) == [ids[1]])
        }
    }

    @Test func aBadResumeTokenIs400AndTheJSONFormIsUnchanged() async throws {
        try await RouteTests.withApp { client in
            try await Self.post(client, "a")
            var bad = Self.stream
            bad[.init("Last-Event-ID")!] = "not-a-token"
            let status = try await client.execute(uri: "/changes", method: .get, headers: bad) { $0.status }
            #expect(status == .badRequest)
            let json = try await client.execute(uri: "/changes", method: .get) { response in
                (response.headers[.contentType], try RouteTests.decode(ChangeFeedPage.self, response))
            }
            #expect(json.0?.hasPrefix("application/json") == true)
            #expect(json.1.changes.map(\.kind) == ["insert"])
            #expect(json.1.next != nil)
        }
    }

    struct ChangeFeedPage: Decodable {
        var changes: [ChangeBody]
        var next: String?
    }

    /// Two servers on one database: a stream on the first carries what the second saves.
    @Test(.enabled(if: TestPostgres.url != nil, "no PostgreSQL server"))
    func aStreamOnOneServerCarriesSavesMadeThroughAnother() async throws {
        let url = try TestPostgres.makeDatabase()
        var logger = Logger(label: "ChangeStreamTests")
        logger.logLevel = .warning
        let first = TripsApp.application(over: try TripsApp.openStore(url), logger: logger)
        let second = TripsApp.application(over: try TripsApp.openStore(url), logger: logger)
        try await first.test(.router) { reader in
            try await second.test(.router) { writer in
                try await Self.streamsHistoryThenNewSaves(reader, writer: writer)
            }
        }
    }
}

/// The PostgreSQL server of the repository's test script, started once for this
/// process (or named by `OSD_POSTGRES_URL`); nil without server binaries.
enum TestPostgres {
    static let url: String? = start()

    private static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    private static func start() -> String? {
        if let url = ProcessInfo.processInfo.environment["OSD_POSTGRES_URL"], !url.isEmpty { return url }
        let script = repository.appendingPathComponent("Scripts/postgres-test-server.sh").path
        let (status, output) = shell(["bash", script, "start", "--watch", String(ProcessInfo.processInfo.processIdentifier)])
        guard status == 0, let url = output.split(separator: " ").first else { return nil }
        return String(url)
    }

    /// A new, empty database on the server: its URL.
    static func makeDatabase() throws -> String {
        let base = try #require(url)
        let name = "trips_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        let psql = versions.max { $0.compare($1, options: .numeric) == .orderedAscending }
            .map { "/usr/lib/postgresql/\($0)/bin/psql" } ?? "psql"
        let (status, output) = shell([psql, base, "-v", "ON_ERROR_STOP=1", "-q", "-c", "CREATE DATABASE \(name)"])
        try #require(status == 0, "CREATE DATABASE failed: \(output)")
        return base[..<base.lastIndex(of: "/")!] + "/" + name
    }

    private static func shell(_ arguments: [String]) -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return (-1, "\(error)") }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
