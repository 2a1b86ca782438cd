import Foundation
import Testing

@Suite struct QueryTests {
    /// Runs `osd query <document> <arguments>` and returns the `#id`s of the JSON lines.
    private func ids(_ path: String, _ arguments: [String]) throws -> [Int] {
        let result = try OSD.run(["query", path] + arguments + ["--json"])
        #expect(result.status == 0, "\(result.error)")
        return ParsedJSON.ids(try ParsedJSON.lines(result.output))
    }

    @Test func filterSortAndLimit() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd")
        try TripDocument.create(at: path)

        #expect(try ids(path, ["Trip", "--where", "days > 3 && booked == true"]) == [3, 4, 7])
        #expect(try ids(path, ["Trip", "--where", "days > 3 && booked == true", "--sort", "days:desc", "--limit", "2"]) == [3, 4])
        #expect(try ids(path, ["Trip", "--where", "!booked || days >= 10"]) == [2, 3, 5])
        #expect(try ids(path, ["Trip", "--where", "booked && (days < 4 || days == 5)"]) == [1, 4])
        #expect(try ids(path, ["Trip", "--sort", "name"]) == [5, 3, 7, 4, 2, 1])
        #expect(try ids(path, ["Trip", "--sort", "booked", "--sort", "days:desc"]) == [5, 2, 3, 4, 7, 1])
        #expect(try ids(path, ["Trip", "--limit", "2"]) == [1, 2])
    }

    @Test func literalsTakeTheTypeOfTheirAttribute() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd")
        try TripDocument.create(at: path)

        #expect(try ids(path, ["Trip", "--where", "destination.name == \"Paris\""]) == [1, 4])
        #expect(try ids(path, ["Trip", "--where", "destination == 3"]) == [3, 7])
        #expect(try ids(path, ["Trip", "--where", "price > 900"]) == [3, 5])
        #expect(try ids(path, ["Trip", "--where", "budget == 601"]) == [7])
        #expect(try ids(path, ["Trip", "--where", "big == 18446744073709551610"]) == [5])
        #expect(try ids(path, ["Trip", "--where", "start == nil"]) == [3])
        #expect(try ids(path, ["Trip", "--where", "start > '2024-06-18'"]) == [5, 7])
        #expect(try ids(path, ["Trip", "--where", "tags contains 't7' || name startsWith 'And'"]) == [5, 7])
        #expect(try ids(path, ["Trip", "--where", "#id >= 5 && id != nil"]) == [5, 7])
        #expect(try ids(path, ["Destination", "--where", "trips contains 3"]) == [3])
        #expect(try ids(path, ["Destination", "--where", "rating <= -1"]) == [])
    }

    @Test func tableOutputShowsHeaderRowsAndCount() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd")
        try TripDocument.create(at: path)

        let result = try OSD.run(["query", path, "Destination", "--where", "country != \"IT\"", "--sort", "rating"])
        #expect(result.status == 0)
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 5)
        #expect(lines[0].hasPrefix("#id  name   country  rating  trips"))
        #expect(lines[1].hasPrefix("4    Lima   PE       2       [#5]"))
        #expect(lines[3].hasPrefix("1    Paris  FR       5       [#1, #4]"))
        #expect(lines[4] == "(3 rows)")
    }

    @Test func mistakesAreClearErrors() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd")
        try TripDocument.create(at: path)

        let cases: [([String], String)] = [
            (["Trip", "--where", "days >"], "osd: --where at column 7: expected a value"),
            (["Trip", "--where", "days = 3"], "use == to compare"),
            (["Trip", "--where", "days => 3"], "--where at column 6: use >= to compare"),
            (["Trip", "--where", "days =< 3"], "--where at column 6: use <= to compare"),
            (["Trip", "--where", "(days > 3"], "expected ')'"),
            (["Trip", "--where", "1 < days < 5"], "comparisons do not chain"),
            (["Trip", "--where", "weight > 3"], "Trip has no attribute or relationship weight"),
            (["Trip", "--where", "days"], "days (Int) is not a condition"),
            (["Trip", "--where", "days == \"many\""], "\"many\" cannot be compared with days (Int)"),
            (["Trip", "--where", "name.length > 3"], "name is an attribute, not a relationship to follow"),
            (["Trip", "--sort", "days:up"], "the order is asc or desc"),
            (["Trip", "--sort", "weight"], "Trip has no attribute or relationship weight"),
            (["Ship"], "the document has no entity Ship (its entities: Destination, Trip)"),
        ]
        for (arguments, message) in cases {
            let result = try OSD.run(["query", path] + arguments)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.error.hasPrefix("osd: "), "\(arguments)")
            #expect(result.error.contains(message), "\(arguments): \(result.error)")
            #expect(result.output.isEmpty)
        }
        // Both spellings reach the real message (a bare `-1` is not taken for an option).
        for arguments in [["--limit=-1"], ["--limit", "-1"]] {
            let negative = try OSD.run(["query", path, "Trip"] + arguments)
            #expect(negative.status == 64)
            #expect(negative.error.contains("--limit must be 0 or more"), "\(arguments): \(negative.error)")
        }
    }

    /// Deep filters end in a clear error or an answer, never a stack overflow: `(` and
    /// `!` nest at most 64 deep, and long chains of `&&` and `||` are fine.
    @Test func deepFiltersAreBoundedAndLongChainsRun() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd")
        try TripDocument.create(at: path)

        let nots = String(repeating: "!", count: 600) + "booked"
        let parentheses = String(repeating: "(", count: 1_500) + "booked" + String(repeating: ")", count: 1_500)
        for filter in [nots, parentheses] {
            let result = try OSD.run(["query", path, "Trip", "--where", filter])
            #expect(result.status == 1)
            #expect(result.error.contains("nest deeper than 64 levels"), "\(result.error)")
        }
        // 64 levels are allowed: an even number of ! is the condition itself.
        #expect(try ids(path, ["Trip", "--where", String(repeating: "!", count: 64) + "booked"]) == ids(path, ["Trip", "--where", "booked"]))
        // 2,000 conditions joined by && and by ||.
        let conjunction = Array(repeating: "days > 3", count: 1_000).joined(separator: " && ") + " && " + Array(repeating: "booked", count: 1_000).joined(separator: " && ")
        #expect(try ids(path, ["Trip", "--where", conjunction]) == [3, 4, 7])
        let disjunction = (1...2_000).map { "days == \($0 + 100)" }.joined(separator: " || ") + " || days == 5"
        #expect(try ids(path, ["Trip", "--where", disjunction]) == ids(path, ["Trip", "--where", "days == 5"]))
    }
}

@Suite struct QueryPlanTests {
    private func run(_ path: String, _ arguments: [String]) throws -> (ids: [Int], plan: String) {
        let result = try OSD.run(["query", path] + arguments + ["--json", "--explain"])
        #expect(result.status == 0, "\(result.error)")
        return (ParsedJSON.ids(try ParsedJSON.lines(result.output)), result.error)
    }

    /// The CLI runs on the engine's planner: a filter on the indexed `days` or the
    /// unique `id` reads the index, and answers as a scan does. (`|| false` keeps a
    /// filter from the planner, which reads only top-level `&&` terms.)
    @Test func indexedQueriesAnswerAsScansDo() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd")
        try TripDocument.create(at: path)

        let cases: [(filter: String, rest: [String], plan: String)] = [
            ("days >= 3 && days < 7", [], "index (days) range, filter answered by the index"),
            ("days > 3", ["--sort", "days:desc"], "index (days) range, in sort order, filter answered by the index"),
            ("days > 3 && booked", ["--sort", "days", "--limit", "2"], "index (days) range, in sort order, filter tested on rows"),
            ("days == 5", [], "index (days) equality, filter answered by the index"),
            ("days <= 10 && name != \"x\"", ["--sort", "name"], "index (days) range, filter tested on rows"),
            // Both attributes of the R-tree (days, budget) bounded: its window.
            ("days >= 3 && budget < 1600 && days <= 10", [], "R-tree (days, budget) window, filter tested on rows"),
        ]
        for (filter, rest, plan) in cases {
            let indexed = try run(path, ["Trip", "--where", filter] + rest)
            let scanned = try run(path, ["Trip", "--where", "(\(filter)) || false"] + rest)
            #expect(indexed.ids == scanned.ids, "\(filter) \(rest)")
            #expect(!indexed.ids.isEmpty, "\(filter)")
            #expect(indexed.plan.contains("plan: Trip: \(plan)"), "\(indexed.plan)")
            // (With a limit, an index still gives the sort order, read whole.)
            #expect(scanned.plan.contains("plan: Trip: scan") || scanned.plan.contains("plan: Trip: index (days) ordered"), "\(scanned.plan)")
        }
    }

    @Test func aLimitedSortReadsTheIndexInOrder() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd")
        try TripDocument.create(at: path)

        for order in ["days", "days:desc"] {
            let all = try run(path, ["Trip", "--sort", order])
            #expect(all.plan.contains("plan: Trip: scan"), "\(all.plan)")
            for limit in 1...4 {
                let top = try run(path, ["Trip", "--sort", order, "--limit", "\(limit)"])
                #expect(top.ids == Array(all.ids.prefix(limit)), "\(order) \(limit)")
                #expect(top.plan.contains("plan: Trip: index (days) ordered, in sort order"), "\(top.plan)")
            }
        }
    }

    @Test func aUniqueKeyIsLookedUp() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd")
        try TripDocument.create(at: path)

        let paris = try run(path, ["Destination", "--where", "name == \"Paris\""])
        #expect(paris.ids == [1])
        #expect(paris.plan.contains("plan: Destination: unique index (name), filter answered by the index"), "\(paris.plan)")
        let none = try run(path, ["Destination", "--where", "name == \"Atlantis\""])
        #expect(none.ids.isEmpty)
    }

    @Test func anIdentifierIsLookedUp() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd")
        try TripDocument.create(at: path)

        let three = try run(path, ["Trip", "--where", "#id == 3"])
        #expect(three.ids == [3])
        #expect(three.plan.contains("plan: Trip: 1 #id, filter answered by the index"), "\(three.plan)")
        // #6 was deleted: no row, though the identifier was once used.
        #expect(try run(path, ["Trip", "--where", "#id == 6"]).ids.isEmpty)
        let booked = try run(path, ["Trip", "--where", "#id == 3 && booked"])
        #expect(booked.ids == (try run(path, ["Trip", "--where", "(#id == 3 && booked) || false"]).ids))
        #expect(booked.plan.contains("plan: Trip: 1 #id, filter tested on rows"), "\(booked.plan)")
    }
}
