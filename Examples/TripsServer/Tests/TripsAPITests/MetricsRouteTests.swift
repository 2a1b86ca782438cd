import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Prometheus
import SwiftData
import Testing
@testable import TripsAPI

/// `GET /metrics`: the store's metrics and the HTTP requests', in Prometheus's text
/// format, as a scraper reads them.
@Suite struct MetricsRouteTests {
    /// The process's metrics backend, bootstrapped once, before the test's store opens.
    static let registry = TripsApp.bootstrapMetrics()

    /// The sample lines of `metric` whose labels include every one of `labels`.
    static func samples(_ text: String, _ metric: String, _ labels: [String]) -> [Double] {
        text.split(separator: "\n").compactMap { line in
            guard line.hasPrefix(metric + "{"), labels.allSatisfy({ line.contains($0) }) else { return nil }
            return line.split(separator: " ").last.flatMap { Double($0) }
        }
    }

    @Test func metricsCountTheStoresSavesAndFetchesAndTheRequests() async throws {
        let registry = Self.registry
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("trips-metrics-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // Its own configuration name ("metered", from the file's), so the other suites'
        // stores, which report to the same registry, do not add to its counts.
        let container = try TripsApp.openStore(folder.appendingPathComponent("metered.store").path)
        var logger = Logger(label: "MetricsRouteTests")
        logger.logLevel = .warning
        try await TripsApp.application(over: container, logger: logger, metrics: registry).test(.router) { client in
            for name in ["A", "B"] {
                _ = try await client.execute(
                    uri: "/trips", method: .post, headers: RouteTests.json, body: RouteTests.trip(name, "Lisbon", price: 1))
            }
            _ = try await client.execute(uri: "/trips?destination=Lisbon", method: .get)
            try await client.execute(uri: "/metrics", method: .get) { response throws in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
                let text = String(buffer: response.body)
                let store = ["store=\"document\"", "configuration=\"metered\""]
                #expect(Self.samples(text, "openswiftdata_saves_total", store) == [2], "\(text)")
                #expect(Self.samples(text, "openswiftdata_save_duration_count", store) == [2])
                #expect(Self.samples(text, "openswiftdata_fetches_total", store).first ?? 0 >= 1)
                #expect(Self.samples(text, "openswiftdata_save_failures_total", store).allSatisfy { $0 == 0 })
                // Hummingbird's request metrics, from the middleware.
                #expect(text.contains("hb_requests"), "\(text.prefix(2_000))")
            }
        }
    }
}
