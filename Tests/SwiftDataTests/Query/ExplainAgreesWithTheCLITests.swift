import Foundation
import SwiftData
import Testing

@Model final class Hike {
    #Index<Hike>([\.days])
    @Attribute(.unique) var name: String
    var days: Int
    var booked: Bool
    init(name: String, days: Int, booked: Bool) {
        self.name = name
        self.days = days
        self.booked = booked
    }
}

/// `ModelContext.explain` and `osd query --explain` report one engine path in one
/// text (#40, point 3): the same query on the same document gives the same report
/// and the same rows.
@Suite struct ExplainAgreesWithTheCLITests {
    /// The `osd` binary built beside the test bundle.
    static func osd() throws -> URL {
        let folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [folder, folder.deletingLastPathComponent()] {
            let url = candidate.appendingPathComponent("osd")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        throw CLIMissing(folder: folder.path)
    }

    struct CLIMissing: Error { var folder: String }

    /// `osd query <path> Hike --json --explain` with `arguments`: the names it printed
    /// and its `plan:` line.
    static func query(_ path: String, _ arguments: [String]) throws -> (names: [String], plan: String) {
        let process = Process()
        process.executableURL = try osd()
        process.arguments = ["query", path, "Hike", "--json", "--explain"] + arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        // One JSON object per row, a line each.
        let rows = try String(decoding: out, as: UTF8.self).split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        #expect(process.terminationStatus == 0, "\(err)")
        let plan = try #require(err.split(separator: "\n").first { $0.hasPrefix("plan: ") })
        return (rows.compactMap { $0["name"] as? String }, String(plan.dropFirst("plan: ".count)))
    }

    @Test func theSameQueryGivesTheSameReportAndRows() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = folder.file("hikes.store")
        do {
            let context = ModelContext(try ModelContainer(for: Hike.self, configurations: ModelConfiguration(url: url)))
            for n in 0..<40 { context.insert(Hike(name: "h\(n)", days: n % 10, booked: n % 3 == 0)) }
            try context.save()
        }
        let context = ModelContext(try ModelContainer(
            for: Hike.self, configurations: ModelConfiguration(url: url, allowsSave: false)))
        func report(_ descriptor: FetchDescriptor<Hike>) throws -> (names: [String], plan: String) {
            let text = try context.explain(descriptor).description
            let plan = try #require(text.split(separator: ";").first.map(String.init))
            return (try context.fetch(descriptor).map(\.name), plan)
        }
        var ranged = FetchDescriptor<Hike>(
            predicate: #Predicate { $0.days >= 3 && $0.days < 7 }, sortBy: [SortDescriptor(\.days), SortDescriptor(\.name)])
        ranged.fetchLimit = 2
        var tested = FetchDescriptor<Hike>(predicate: #Predicate { $0.days > 3 && $0.booked }, sortBy: [SortDescriptor(\.days)])
        tested.fetchLimit = 3
        let cases: [(FetchDescriptor<Hike>, [String])] = [
            (FetchDescriptor(predicate: #Predicate { $0.name == "h7" }), ["--where", "name == \"h7\""]),
            (FetchDescriptor(predicate: #Predicate { $0.days == 4 }), ["--where", "days == 4"]),
            (tested, ["--where", "days > 3 && booked", "--sort", "days", "--limit", "3"]),
            (FetchDescriptor(predicate: #Predicate { $0.booked }), ["--where", "booked"]),
        ]
        for (descriptor, arguments) in cases {
            let api = try report(descriptor)
            let cli = try Self.query(url.path, arguments)
            #expect(api.plan == cli.plan, "\(arguments)")
            #expect(api.names == cli.names, "\(arguments)")
        }
        // A two-key sort: the index on `days` gives the order of the first key only.
        // The walk stops after the window's rows and those tied with the last (the 4
        // hikes of 3 days, of the 16 in the range), which both then sort (`RowOrder`)
        // with the same tie rule.
        let api = try report(ranged)
        let cli = try Self.query(url.path, ["--where", "days >= 3 && days < 7", "--sort", "days", "--sort", "name", "--limit", "2"])
        #expect(api.plan == cli.plan)
        #expect(api.names == cli.names)
        #expect(api.names == ["h13", "h23"])
        #expect(cli.plan == "Hike: index (days) range in the order of the sort's first key, filter answered by the index")
        #expect(try context.explain(ranged).rowsExamined == 4)
        #expect(try Self.query(url.path, ["--where", "name == \"h7\""]).plan
            == "Hike: unique index (name), filter answered by the index")
        #expect(try Self.query(url.path, ["--where", "booked"]).plan == "Hike: scan, filter tested on rows")
    }
}
