import Foundation
import GraphModelTesting
import SwiftData
import Testing

/// Issue #3: for every operator family and every access path, the planner's results
/// equal a reference — materialize every model, `Predicate.evaluate` it, sort with
/// Foundation, window — on randomized data, across thousands of generated predicates
/// and sort/limit/offset combinations. Everything is drawn from fixed seeds, so a
/// failure names the seed and the predicate's number and reproduces exactly.
@Suite struct QueryEquivalenceTests {
    /// Saved data only: the native filter, the unique-index path and sorting on stored values.
    @Test(arguments: [UInt64(1), 2, 3, 4])
    func savedData(seed: UInt64) throws {
        let run = try QEquivalenceRun(seed: seed, pending: .none)
        try run.check(predicates: 650)
        run.report()
    }

    /// Unsaved inserts, updates (including of the unique key) and deletes of items,
    /// with `includePendingChanges` on and off.
    @Test(arguments: [UInt64(11), 12])
    func pendingItemChanges(seed: UInt64) throws {
        let run = try QEquivalenceRun(seed: seed, pending: .items)
        try run.check(predicates: 200)
        run.report()
    }

    /// Unsaved changes to the *related* models only (owners renamed or deleted, parts
    /// reweighed or deleted) while the items themselves stay unchanged.
    @Test(arguments: [UInt64(21)])
    func pendingRelatedChanges(seed: UInt64) throws {
        let run = try QEquivalenceRun(seed: seed, pending: .related)
        try run.check(predicates: 150)
        run.report()
    }
}

// MARK: - Data

enum QPendingKind {
    case none, items, related
}

/// The constants a generated predicate may use: values present in the data and absent ones.
struct QPools {
    var codes: [String] = []
    var categories = ["Paris", "paris", "Zürich", "Zurich", "Oslo", "oslo", "", "Lima", "Rome", "ZÜRICH", "par", "zü"]
    var tags = ["red", "Red", "green", "blue", "grün", "", "a b", "purple", "re", "GRUN"]
    var notes = ["", "hello", "Hello World", "ünïcode", "note", "note 2", "Straße", "absent", "o", "STRASSE"]
    var names = ["Ann", "ann", "Bob", "Émile", "", "Zoë", "emile", "Nobody", "A"]
    var labels = ["bolt", "Bolt", "nut", "screw", "", "Ösen", "osen", "washer"]
    var prices: [Double] = [-1, 0, 0.1, 1e9, -0.0]
    var dates: [Date] = [QData.baseDate.addingTimeInterval(-86_400), QData.baseDate.addingTimeInterval(0.5)]
    var ints: [Int] = [-6, 0, 1, 2, 3, 4, 5, 10, 61, 1_000]
}

enum QData {
    static let baseDate = Date(timeIntervalSince1970: 1_700_000_000)
    static let categories = ["Paris", "paris", "Zürich", "Oslo", "oslo", "", "Lima", "Zurich"]
    static let tags = ["red", "Red", "green", "blue", "grün", "", "a b"]
    static let notes = ["", "hello", "Hello World", "ünïcode", "note", "note 2", "Straße"]
    static let names = ["Ann", "ann", "Bob", "Émile", "", "Zoë", "Bob"]
    static let labels = ["bolt", "Bolt", "nut", "screw", "", "Ösen"]

    static func code(_ prefix: String, _ i: Int) -> String {
        let digits = String(i)
        return prefix + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    static func randomItem(code: String, rng: inout QSplitMix64) -> QItem {
        let dayOffset = Double(Int.random(in: 0...40, using: &rng)) * 86_400
        let extra: Double = Int.random(in: 0...4, using: &rng) == 0 ? 3_600 : 0
        let note: String? = switch Int.random(in: 0...7, using: &rng) {
        case 0, 1: nil
        case 2: "note \(Int.random(in: 0...9, using: &rng))"
        default: notes.randomElement(using: &rng)!
        }
        return QItem(
            code: code,
            category: categories.randomElement(using: &rng)!,
            price: Double(Int.random(in: -20...400, using: &rng)) * 0.25,
            qty: Int.random(in: -5...60, using: &rng),
            flag: Bool.random(using: &rng),
            note: note,
            tags: (0..<Int.random(in: 0...3, using: &rng)).map { _ in tags.randomElement(using: &rng)! },
            date: baseDate.addingTimeInterval(dayOffset + extra),
            rank: Int.random(in: 0...9, using: &rng) < 3 ? nil : Int.random(in: 0...12, using: &rng),
            place: randomPlace(rng: &rng),
            home: Int.random(in: 0...3, using: &rng) == 0 ? nil : randomPlace(rng: &rng))
    }

    static func randomPlace(rng: inout QSplitMix64) -> QPlace {
        QPlace(
            city: categories.randomElement(using: &rng)!,
            zip: Int.random(in: 0...3, using: &rng) == 0 ? nil : Int.random(in: 0...12, using: &rng),
            visited: Bool.random(using: &rng),
            rated: Bool.random(using: &rng),
            since: baseDate.addingTimeInterval(Double(Int.random(in: -3...3, using: &rng)) * 86_400),
            geo: QGeo(lat: Double(Int.random(in: -8...8, using: &rng)) * 0.5, lon: Double(Int.random(in: -2...2, using: &rng))),
            kind: QPlaceKind.allCases.randomElement(using: &rng)!)
    }

    static func randomParts(rng: inout QSplitMix64) -> [QPart] {
        (0..<Int.random(in: 0...4, using: &rng)).map { _ in
            QPart(label: labels.randomElement(using: &rng)!, weight: Int.random(in: -3...20, using: &rng))
        }
    }
}

// MARK: - One run: a populated context and the checks

final class QEquivalenceRun {
    let seed: UInt64
    let pending: QPendingKind
    let container: ModelContainer
    let context: ModelContext
    var pools = QPools()
    var pendingInserts = 0
    /// Saved items with unsaved changes: every fetch tests them on their current values.
    var changedItems = 0

    // Statistics.
    var predicates = 0
    var comparisons = 0
    var bothThrew = 0
    var native = 0
    var fallbacks: [String: Int] = [:]
    var accessPaths: [String: Int] = [:]
    /// How often each expression node type occurs in the generated predicates.
    var families: [String: Int] = [:]
    var uniqueChecks = 0
    var mismatches = 0
    var explainThrew = 0
    var reported = 0

    init(seed: UInt64, pending: QPendingKind) throws {
        self.seed = seed
        self.pending = pending
        container = try ModelContainer(
            for: QItem.self, QOwner.self, QPart.self,
            configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        context = ModelContext(container)
        try populate()
        pendingInserts = context.insertedModelsArray.filter { $0 is QItem }.count
        changedItems = context.changedModelsArray.filter { $0 is QItem }.count
    }

    private func populate() throws {
        var rng = QSplitMix64(seed: seed &* 0x5851_F42D_4C95_7F2D &+ 7)
        var owners: [QOwner] = []
        for i in 0..<20 {
            let name = Int.random(in: 0...2, using: &rng) == 0 ? "\(QData.names.randomElement(using: &rng)!) \(i % 5)"
                : QData.names.randomElement(using: &rng)!
            let owner = QOwner(name: name, age: Int.random(in: 18...80, using: &rng))
            context.insert(owner)
            owners.append(owner)
        }
        var items: [QItem] = []
        for i in 0..<300 {
            let item = QData.randomItem(code: QData.code("I", i), rng: &rng)
            context.insert(item)
            // Owners 15..<20 never get items; a fifth of the items have no owner.
            if Int.random(in: 0...4, using: &rng) != 0 { item.owner = owners[Int.random(in: 0..<15, using: &rng)] }
            let parts = QData.randomParts(rng: &rng)
            for part in parts { context.insert(part) }
            item.parts = parts
            items.append(item)
        }
        try context.save()
        pools.codes = items.map(\.code) + ["I9999", "", "i0001", "N0000", "U0001"]
        pools.prices += items.prefix(40).map(\.price)
        pools.dates += items.prefix(20).map(\.date)
        pools.ints += items.prefix(10).map(\.qty)
        pools.names += owners.map(\.name)

        switch pending {
        case .none:
            break
        case .items:
            // Pending inserts, some with owners and parts.
            for i in 0..<20 {
                let item = QData.randomItem(code: QData.code("N", i), rng: &rng)
                context.insert(item)
                if Bool.random(using: &rng) { item.owner = owners.randomElement(using: &rng)! }
                let parts = QData.randomParts(rng: &rng)
                for part in parts { context.insert(part) }
                item.parts = parts
                pools.codes.append(item.code)
            }
            // Pending updates of saved items, a few of them to the unique key.
            var shuffled = items.shuffled(using: &rng)
            for (n, item) in shuffled.prefix(40).enumerated() {
                let fresh = QData.randomItem(code: item.code, rng: &rng)
                switch n % 8 {
                case 0: item.price = fresh.price; item.qty = fresh.qty
                case 1: item.category = fresh.category
                case 2: item.note = fresh.note; item.rank = fresh.rank
                case 3: item.tags = fresh.tags; item.flag.toggle(); item.place = fresh.place; item.home = fresh.home
                case 4: item.date = fresh.date; item.owner = Bool.random(using: &rng) ? nil : owners.randomElement(using: &rng)!
                case 5:
                    item.code = QData.code("U", n)
                    pools.codes.append(item.code)
                case 6:
                    let part = QPart(label: "new", weight: 7)
                    context.insert(part)
                    item.parts.append(part)
                default:
                    item.qty = fresh.qty; item.category = fresh.category; item.price = fresh.price
                }
            }
            shuffled.removeFirst(40)
            // Pending deletes (their parts cascade).
            for item in shuffled.prefix(15) { context.delete(item) }
        case .related:
            // Only related models change; every item stays as saved.
            for owner in owners.prefix(4) { owner.name = "Renamed \(owner.name)"; owner.age += 1 }
            pools.names += owners.prefix(4).map(\.name)
            context.delete(owners[5])
            context.delete(owners[6])
            let parts = try context.fetch(FetchDescriptor<QPart>())
            for part in parts.prefix(30) { part.weight += 5; part.label = "changed" }
            for part in parts.dropFirst(30).prefix(10) { context.delete(part) }
        }
    }

    // MARK: Checking

    struct Window: CustomStringConvertible {
        var sorts: [SortDescriptor<QItem>]
        var sortText: [String]
        var limit: Int?
        var offset: Int?

        var description: String {
            "sortBy: [\(sortText.joined(separator: ", "))], fetchLimit: \(limit.map { "\($0)" } ?? "nil"), fetchOffset: \(offset.map { "\($0)" } ?? "nil")"
        }
    }

    func randomWindow(_ rng: inout QSplitMix64) -> Window {
        var window = Window(sorts: [], sortText: [], limit: nil, offset: nil)
        for _ in 0..<Int.random(in: 0...3, using: &rng) {
            let order: SortOrder = Bool.random(using: &rng) ? .forward : .reverse
            let o = order == .forward ? "forward" : "reverse"
            switch Int.random(in: 0...14, using: &rng) {
            case 0, 1: window.sorts.append(SortDescriptor(\QItem.category, order: order)); window.sortText.append("\\.category \(o)")
            case 2:
                window.sorts.append(SortDescriptor(\QItem.category, comparator: .lexical, order: order))
                window.sortText.append("\\.category .lexical \(o)")
            case 3, 4: window.sorts.append(SortDescriptor(\QItem.price, order: order)); window.sortText.append("\\.price \(o)")
            case 5, 6: window.sorts.append(SortDescriptor(\QItem.qty, order: order)); window.sortText.append("\\.qty \(o)")
            case 7, 8: window.sorts.append(SortDescriptor(\QItem.date, order: order)); window.sortText.append("\\.date \(o)")
            case 9, 10: window.sorts.append(SortDescriptor(\QItem.rank, order: order)); window.sortText.append("\\.rank \(o)")
            case 11: window.sorts.append(SortDescriptor(\QItem.code, order: order)); window.sortText.append("\\.code \(o)")
            case 13:
                // A member of a composite attribute: sorted on models.
                window.sorts.append(SortDescriptor(\QItem.place.city, comparator: .lexical, order: order))
                window.sortText.append("\\.place.city .lexical \(o)")
            case 12:
                window.sorts.append(SortDescriptor(\QItem.note, comparator: .lexical, order: order))
                window.sortText.append("\\.note .lexical \(o)")
            default:
                window.sorts.append(SortDescriptor(\QItem.owner?.name, order: order))
                window.sortText.append("\\.owner?.name \(o)")
            }
        }
        // Ties: our sort is stable in row order, Foundation's in input order; a final
        // unique key makes both total.
        window.sorts.append(SortDescriptor(\QItem.code))
        window.sortText.append("\\.code")
        if Bool.random(using: &rng) { window.limit = Int.random(in: 1...50, using: &rng) }
        if Bool.random(using: &rng) { window.offset = Int.random(in: 0...40, using: &rng) }
        return window
    }

    func check(predicates count: Int) throws {
        var rng = QSplitMix64(seed: seed)
        let generator = QPredicateGenerator(seed: seed &+ 0x1234_5678, pools: pools)
        let allWith = try context.fetch(FetchDescriptor<QItem>())
        var without = FetchDescriptor<QItem>()
        without.includePendingChanges = false
        let allWithout = try context.fetch(without)
        for index in 0..<count {
            let (predicate, pinsCode) = generator.next()
            predicates += 1
            QRender.tally(predicate.expression, into: &families)
            let includePending = pending == .none || Int.random(in: 0...3, using: &rng) != 0
            let all = includePending ? allWith : allWithout
            let filtered: Result<[QItem], any Error> = Result { try all.filter { try predicate.evaluate($0) } }
            let plain = Window(sorts: [], sortText: [], limit: nil, offset: nil)
            let windowed = randomWindow(&rng)
            var last = FetchDescriptor<QItem>()
            for (n, window) in [plain, windowed].enumerated() {
                var descriptor = FetchDescriptor<QItem>(predicate: predicate, sortBy: window.sorts)
                descriptor.fetchLimit = window.limit
                descriptor.fetchOffset = window.offset
                descriptor.includePendingChanges = includePending
                let expected = filtered.map { apply(window, to: $0) }
                compare(index, predicate, window, includePending, expected: expected, descriptor: descriptor, plain: n == 0)
                last = descriptor
            }
            // How the windowed fetch ran, and the unique-key access path.
            let explanation = Result { try context.explain(last) }
            switch (filtered, explanation) {
            case let (.success, .success(explanation)):
                let expectedCount = filtered.map { apply(windowed, to: $0).count }
                if case let .success(count) = expectedCount, count != explanation.resultCount {
                    fail("explain's resultCount differs from the reference (\(count)) — seed \(seed) (\(pending)) predicate #\(index), \(windowed)\n\(explanation)\n\(QRender.describe(predicate))")
                }
            case (.failure, .failure): break
            case let (.failure, .success(explanation)) where explanation.accessPath != .scan: break
            default:
                fail("explain throws iff the reference throws — seed \(seed) (\(pending)) predicate #\(index)\nreference: \(filtered.map(\.count))\nexplain: \(explanation)\n\(QRender.describe(predicate))")
            }
            if case let .success(explanation) = explanation {
                let path = switch explanation.accessPath {
                case .scan: "scan"
                case .uniqueIndex: "unique index"
                case let .index(names, lookup): "index \(names) \(lookup)"
                case .identifiers: "identifiers"
                case let .spatialIndex(names): "R-tree \(names)"
                }
                accessPaths[path, default: 0] += 1
                switch explanation.filtering {
                case .native, .exactKey: native += 1
                case let .fallback(reason): fallbacks[reason, default: 0] += 1
                case .none: break
                }
                if pinsCode {
                    uniqueChecks += 1
                    let bound = 1 + changedItems + (includePending ? pendingInserts : 0)
                    if explanation.accessPath != .uniqueIndex(["code"]) || explanation.rowsExamined > bound {
                        fail("seed \(seed) (\(pending)) predicate #\(index): expected a unique-index lookup examining ≤ \(bound) rows; got \(explanation)\n\(QRender.describe(predicate))")
                    }
                }
            } else {
                explainThrew += 1
            }
        }
    }

    func apply(_ window: Window, to models: [QItem]) -> [QItem] {
        let sorted = window.sorts.isEmpty ? models : models.sorted(using: window.sorts)
        let offset = min(window.offset ?? 0, sorted.count)
        let end = window.limit.map { min(sorted.count, offset + $0) } ?? sorted.count
        return Array(sorted[offset..<end])
    }

    private func show(_ result: Result<[String], any Error>) -> String {
        switch result {
        case let .success(codes): "\(codes.count) \(codes)"
        case let .failure(error): "threw \(error)"
        }
    }

    private func compare(
        _ index: Int, _ predicate: Predicate<QItem>, _ window: Window, _ includePending: Bool,
        expected: Result<[QItem], any Error>, descriptor: FetchDescriptor<QItem>, plain: Bool
    ) {
        comparisons += 1
        let expectedCodes = expected.map { $0.map(\.code) }
        func where_() -> String {
            "seed \(seed) (\(pending)) predicate #\(index), includePendingChanges: \(includePending), \(window)\n\(QRender.describe(predicate))"
        }
        // fetch
        let ours = Result { try context.fetch(descriptor).map(\.code) }
        switch (expectedCodes, ours) {
        case let (.success(a), .success(b)) where a == b: break
        case (.failure, .failure): bothThrew += 1
        case (.failure, .success) where narrowedByIndex(descriptor):
            // Documented policy: rows an index excludes are not evaluated, so an error
            // their evaluation would raise is not raised (as in SQL engines).
            return
        default:
            fail("fetch differs from the reference — \(where_())\nreference: \(show(expectedCodes))\nfetch:     \(show(ours))")
            return
        }
        // fetchCount on the plain descriptor, fetchIdentifiers on the windowed one.
        if plain {
            let count = Result { try context.fetchCount(descriptor) }
            switch (expected, count) {
            case let (.success(a), .success(b)) where a.count == b: break
            case (.failure, .failure): break
            case (.failure, .success) where narrowedByIndex(descriptor): break
            default:
                fail("fetchCount differs from the reference — \(where_())\nreference: \(show(expectedCodes))\nfetchCount: \(count)")
            }
            return
        }
        // fetchIdentifiers (refuses to sort unsaved inserts)
        let identifiers = Result { try context.fetchIdentifiers(descriptor) }
        if includePending, pendingInserts > 0, !descriptor.sortBy.isEmpty {
            if case let .failure(error) = identifiers, let error = error as? SwiftDataError, error == .sortingPendingChangesWithIdentifiers {
                return
            }
            fail("fetchIdentifiers should refuse to sort unsaved inserts — \(where_())\ngot: \(identifiers)")
            return
        }
        switch (expected, identifiers) {
        case let (.success(a), .success(b)) where a.map(\.persistentModelID) == b: break
        case (.failure, .failure): break
        case (.failure, .success) where narrowedByIndex(descriptor): break
        default:
            fail("fetchIdentifiers differs from the reference — \(where_())\nreference: \(show(expectedCodes))\nfetchIdentifiers: \(identifiers.map(\.count))")
        }
    }

    /// Whether the fetch reads candidates through an index rather than every row.
    private func narrowedByIndex(_ descriptor: FetchDescriptor<QItem>) -> Bool {
        guard let explanation = try? context.explain(descriptor) else { return false }
        return explanation.accessPath != .scan
    }

    private func fail(_ message: String) {
        mismatches += 1
        // QEQ_LOG=<file> appends every mismatch, beyond the ones recorded as issues.
        if let path = ProcessInfo.processInfo.environment["QEQ_LOG"], let data = (message + "\n\n").data(using: .utf8) {
            if let handle = FileHandle(forWritingAtPath: path) {
                handle.seekToEndOfFile()
                handle.write(data)
                handle.closeFile()
            } else {
                _ = FileManager.default.createFile(atPath: path, contents: data)
            }
        }
        if reported < 12 {
            reported += 1
            Issue.record(Comment(rawValue: message))
        }
    }

    func report() {
        let reasons = fallbacks.sorted { $0.value > $1.value }.map { "    \($0.value)× \($0.key)" }.joined(separator: "\n")
        print("""
            QueryEquivalence seed \(seed) (\(pending)): \(predicates) predicates, \(comparisons) fetch comparisons \
            (\(bothThrew) where both threw; explain threw for \(explainThrew) predicates), \(uniqueChecks) unique-key checks, \(mismatches) mismatches; \
            native \(native), fallback \(fallbacks.values.reduce(0, +))
            \(reasons)
              nodes: \(families.sorted { $0.value > $1.value }.map { "\($0.value)× \($0.key)" }.joined(separator: ", "))
              access paths: \(accessPaths.sorted { $0.value > $1.value }.map { "\($0.value)× \($0.key)" }.joined(separator: ", "))
            """)
        #expect(mismatches == 0, "seed \(seed) (\(pending)): \(mismatches) mismatches (first \(reported) recorded above)")
        // The generated predicates use only node kinds the compiler translates, so
        // nothing should fall back (the `localizedStandardContains` and
        // `caseInsensitiveCompare` nodes included).
        let expectedFallbacks: [String] = []
        let unexpected = fallbacks.keys.filter { reason in !expectedFallbacks.contains { reason.contains($0) } }
        #expect(unexpected.isEmpty, "unexpected fallbacks: \(unexpected)")
        // Every operator family occurs.
        let required = [
            "Equal", "NotEqual", "Comparison", "Conjunction", "Disjunction", "Negation", "Arithmetic", "UnaryMinus",
            "Conditional", "NilCoalesce", "OptionalFlatMap", "ForcedUnwrap", "NilLiteral", "SequenceContains",
            "SequenceContainsWhere", "SequenceAllSatisfy", "Filter", "SequenceStartsWith", "CollectionContainsCollection",
            "RangeExpressionContains", "Range", "ClosedRange", "StringLocalizedStandardContains",
            "StringCaseInsensitiveCompare", "KeyPath", "Value", "Variable", "CodableMember",
        ]
        let missing = required.filter { families[$0] == nil }
        #expect(missing.isEmpty, "operator families never generated: \(missing)")
        #expect(native >= (predicates - explainThrew) * 9 / 10, "native \(native) of \(predicates)")
    }
}

// MARK: - Expression helpers (each opens its existential operands)

typealias QE<T> = any StandardPredicateExpression<T>
typealias QVar<T> = PredicateExpressions.Variable<T>

func qConst<T: Codable & Sendable>(_ value: T) -> QE<T> {
    PredicateExpressions.Value(value)
}

func qKey<R: StandardPredicateExpression, T>(_ root: R, _ keyPath: KeyPath<R.Output, T> & Sendable) -> QE<T> {
    PredicateExpressions.KeyPath(root: root, keyPath: keyPath)
}

func qKeyE<T, U>(_ root: QE<T>, _ keyPath: KeyPath<T, U> & Sendable) -> QE<U> {
    func open<R: StandardPredicateExpression<T>>(_ root: R) -> QE<U> { PredicateExpressions.KeyPath(root: root, keyPath: keyPath) }
    return open(root)
}

func qEqual<T: Equatable>(_ l: QE<T>, _ r: QE<T>) -> QE<Bool> {
    func open<L: StandardPredicateExpression<T>, R: StandardPredicateExpression<T>>(_ l: L, _ r: R) -> QE<Bool> {
        PredicateExpressions.Equal(lhs: l, rhs: r)
    }
    return open(l, r)
}

func qNotEqual<T: Equatable>(_ l: QE<T>, _ r: QE<T>) -> QE<Bool> {
    func open<L: StandardPredicateExpression<T>, R: StandardPredicateExpression<T>>(_ l: L, _ r: R) -> QE<Bool> {
        PredicateExpressions.NotEqual(lhs: l, rhs: r)
    }
    return open(l, r)
}

func qCompare<T: Comparable>(_ l: QE<T>, _ op: PredicateExpressions.ComparisonOperator, _ r: QE<T>) -> QE<Bool> {
    func open<L: StandardPredicateExpression<T>, R: StandardPredicateExpression<T>>(_ l: L, _ r: R) -> QE<Bool> {
        PredicateExpressions.Comparison(lhs: l, rhs: r, op: op)
    }
    return open(l, r)
}

func qAnd(_ l: QE<Bool>, _ r: QE<Bool>) -> QE<Bool> {
    func open<L: StandardPredicateExpression<Bool>, R: StandardPredicateExpression<Bool>>(_ l: L, _ r: R) -> QE<Bool> {
        PredicateExpressions.Conjunction(lhs: l, rhs: r)
    }
    return open(l, r)
}

func qOr(_ l: QE<Bool>, _ r: QE<Bool>) -> QE<Bool> {
    func open<L: StandardPredicateExpression<Bool>, R: StandardPredicateExpression<Bool>>(_ l: L, _ r: R) -> QE<Bool> {
        PredicateExpressions.Disjunction(lhs: l, rhs: r)
    }
    return open(l, r)
}

func qNot(_ e: QE<Bool>) -> QE<Bool> {
    func open<W: StandardPredicateExpression<Bool>>(_ e: W) -> QE<Bool> { PredicateExpressions.Negation(e) }
    return open(e)
}

func qConditional<T>(_ test: QE<Bool>, _ a: QE<T>, _ b: QE<T>) -> QE<T> {
    func open<C: StandardPredicateExpression<Bool>, A: StandardPredicateExpression<T>, B: StandardPredicateExpression<T>>(
        _ test: C, _ a: A, _ b: B
    ) -> QE<T> {
        PredicateExpressions.Conditional(test: test, trueBranch: a, falseBranch: b)
    }
    return open(test, a, b)
}

func qArithmetic<T: Numeric>(_ l: QE<T>, _ op: PredicateExpressions.ArithmeticOperator, _ r: QE<T>) -> QE<T> {
    func open<L: StandardPredicateExpression<T>, R: StandardPredicateExpression<T>>(_ l: L, _ r: R) -> QE<T> {
        PredicateExpressions.Arithmetic(lhs: l, rhs: r, op: op)
    }
    return open(l, r)
}

func qNegate<T: SignedNumeric>(_ e: QE<T>) -> QE<T> {
    func open<W: StandardPredicateExpression<T>>(_ e: W) -> QE<T> { PredicateExpressions.UnaryMinus(e) }
    return open(e)
}

func qCoalesce<T>(_ l: QE<T?>, _ r: QE<T>) -> QE<T> {
    func open<L: StandardPredicateExpression<T?>, R: StandardPredicateExpression<T>>(_ l: L, _ r: R) -> QE<T> {
        PredicateExpressions.NilCoalesce(lhs: l, rhs: r)
    }
    return open(l, r)
}

func qUnwrap<T>(_ e: QE<T?>) -> QE<T> {
    func open<W: StandardPredicateExpression<T?>>(_ e: W) -> QE<T> { PredicateExpressions.ForcedUnwrap(e) }
    return open(e)
}

func qNil<T>(_: T.Type) -> QE<T?> {
    PredicateExpressions.NilLiteral<T>()
}

func qContains<T: Equatable>(_ sequence: QE<[T]>, _ element: QE<T>) -> QE<Bool> {
    func open<S: StandardPredicateExpression<[T]>, E: StandardPredicateExpression<T>>(_ s: S, _ e: E) -> QE<Bool> {
        PredicateExpressions.SequenceContains(sequence: s, element: e)
    }
    return open(sequence, element)
}

func qStarts(_ base: QE<String>, _ prefix: QE<String>) -> QE<Bool> {
    func open<B: StandardPredicateExpression<String>, P: StandardPredicateExpression<String>>(_ b: B, _ p: P) -> QE<Bool> {
        PredicateExpressions.SequenceStartsWith(base: b, prefix: p)
    }
    return open(base, prefix)
}

func qStringContains(_ base: QE<String>, _ other: QE<String>) -> QE<Bool> {
    func open<B: StandardPredicateExpression<String>, O: StandardPredicateExpression<String>>(_ b: B, _ o: O) -> QE<Bool> {
        PredicateExpressions.CollectionContainsCollection(base: b, other: o)
    }
    return open(base, other)
}

func qLocalizedStandardContains(_ base: QE<String>, _ other: QE<String>) -> QE<Bool> {
    func open<B: StandardPredicateExpression<String>, O: StandardPredicateExpression<String>>(_ b: B, _ o: O) -> QE<Bool> {
        PredicateExpressions.build_localizedStandardContains(b, o)
    }
    return open(base, other)
}

func qCaseInsensitiveCompare(_ base: QE<String>, _ other: QE<String>) -> QE<ComparisonResult> {
    func open<B: StandardPredicateExpression<String>, O: StandardPredicateExpression<String>>(_ b: B, _ o: O) -> QE<ComparisonResult> {
        PredicateExpressions.build_caseInsensitiveCompare(b, o)
    }
    return open(base, other)
}

func qInRange<T: Comparable>(_ lower: QE<T>, _ upper: QE<T>, closed: Bool, _ element: QE<T>) -> QE<Bool> {
    func open<L: StandardPredicateExpression<T>, U: StandardPredicateExpression<T>, E: StandardPredicateExpression<T>>(
        _ l: L, _ u: U, _ e: E
    ) -> QE<Bool> {
        if closed {
            return PredicateExpressions.RangeExpressionContains(range: PredicateExpressions.ClosedRange(lower: l, upper: u), element: e)
        }
        return PredicateExpressions.RangeExpressionContains(range: PredicateExpressions.Range(lower: l, upper: u), element: e)
    }
    return open(lower, upper, element)
}

func qInConstantRange<T: Comparable & Codable & Sendable>(_ lower: T, _ upper: T, closed: Bool, _ element: QE<T>) -> QE<Bool> {
    func open<E: StandardPredicateExpression<T>>(_ e: E) -> QE<Bool> {
        if closed {
            return PredicateExpressions.RangeExpressionContains(range: PredicateExpressions.Value(lower...upper), element: e)
        }
        return PredicateExpressions.RangeExpressionContains(range: PredicateExpressions.Value(lower..<upper), element: e)
    }
    return open(element)
}

// MARK: - The predicate generator

/// Builds random predicate trees over `QItem` from Foundation's expression nodes.
///
/// Nodes with a closure (`contains(where:)`, `allSatisfy`, `filter`, `flatMap`)
/// need the closure's concrete expression type before they are built, so their body
/// is generated twice from the same generator state: once to learn the type, once
/// for real with the node's own variable.
final class QPredicateGenerator {
    var rng: QSplitMix64
    let pools: QPools
    private var root = QVar<QItem>()
    private var part: QVar<QPart>?
    private var tag: QVar<String>?
    private var arithmetic = 0
    private var closures = 0

    init(seed: UInt64, pools: QPools) {
        rng = QSplitMix64(seed: seed)
        self.pools = pools
    }

    // Randomness.
    func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }
    func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }
    func pick<T>(_ values: [T]) -> T { values[int(0...(values.count - 1))] }
    func comparison() -> PredicateExpressions.ComparisonOperator {
        pick([.lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual])
    }

    /// A predicate, and whether it pins `code` to a constant at the top level.
    func next() -> (Predicate<QItem>, pinsCode: Bool) {
        var pins = false
        let predicate = Predicate<QItem> { variable in
            self.root = variable
            switch self.int(0...19) {
            case 0, 1:
                pins = true
                return self.codeEquals()
            case 2:
                pins = true
                return qAnd(self.codeEquals(), self.bool(1))
            case 3:
                pins = true
                return qAnd(self.bool(1), qEqual(qConst(self.pick(self.pools.codes)), qKey(self.root, \QItem.code)))
            default:
                return self.bool(0)
            }
        }
        return (predicate, pins)
    }

    private func codeEquals() -> QE<Bool> {
        let code = chance(0.85) ? pick(pools.codes) : pick(["I9999", "", "i0001", "N0000"])
        return qEqual(qKey(root, \QItem.code), qConst(code))
    }

    // MARK: Closures

    /// Runs `body` twice from the same state: the first result gives the type.
    private func probe<V, T>(_ body: (QVar<V>) -> QE<T>) -> QE<T> {
        let saved = rng
        let result = body(QVar<V>())
        rng = saved
        return result
    }

    private func quantified<S: StandardPredicateExpression>(
        _ sequence: S, all: Bool, _ body: (QVar<S.Output.Element>) -> QE<Bool>
    ) -> QE<Bool> where S.Output: Sequence {
        closures += 1
        defer { closures -= 1 }
        func open<RHS: StandardPredicateExpression<Bool>>(_: RHS) -> QE<Bool> {
            if all {
                return PredicateExpressions.SequenceAllSatisfy(sequence, builder: { body($0) as! RHS })
            }
            return PredicateExpressions.SequenceContainsWhere(sequence, builder: { body($0) as! RHS })
        }
        return open(probe(body))
    }

    private func filterCount<S: StandardPredicateExpression>(
        _ sequence: S, _ body: (QVar<S.Output.Element>) -> QE<Bool>
    ) -> QE<Int> where S.Output: Sequence {
        closures += 1
        defer { closures -= 1 }
        func open<RHS: StandardPredicateExpression<Bool>>(_: RHS) -> QE<Int> {
            let filter = PredicateExpressions.Filter(sequence, { body($0) as! RHS })
            return PredicateExpressions.KeyPath(root: filter, keyPath: \[S.Output.Element].count)
        }
        return open(probe(body))
    }

    private func flatMap<W, R>(_ wrapped: QE<W?>, _ body: (QVar<W>) -> QE<R>) -> QE<R?> {
        func open<L: StandardPredicateExpression<W?>, RHS: StandardPredicateExpression<R>>(_ l: L, _: RHS) -> QE<R?> {
            PredicateExpressions.OptionalFlatMap<L, W, RHS, R>(l, { body($0) as! RHS })
        }
        return open(wrapped, probe(body))
    }

    /// A Boolean over the parts of the item (inside `contains(where:)` and friends).
    private func overParts(all: Bool, _ d: Int) -> QE<Bool> {
        quantified(PredicateExpressions.KeyPath(root: root, keyPath: \QItem.parts), all: all) { v in
            self.withPart(v) { self.inner(d + 1) }
        }
    }

    private func overTags(all: Bool, _ d: Int) -> QE<Bool> {
        quantified(PredicateExpressions.KeyPath(root: root, keyPath: \QItem.tags), all: all) { v in
            self.withTag(v) { self.inner(d + 1) }
        }
    }

    private func withPart<T>(_ v: QVar<QPart>, _ body: () -> T) -> T {
        let saved = (part, tag)
        part = v
        tag = nil
        defer { (part, tag) = saved }
        return body()
    }

    private func withTag<T>(_ v: QVar<String>, _ body: () -> T) -> T {
        let saved = (part, tag)
        tag = v
        part = nil
        defer { (part, tag) = saved }
        return body()
    }

    // MARK: Typed operands

    func intConstant() -> Int { chance(0.7) ? pick(pools.ints) : int(-10...70) }

    func intE(_ d: Int) -> QE<Int> {
        if let part, chance(0.35) {
            return chance(0.8) ? qKey(part, \QPart.weight) : qKeyE(qKey(part, \QPart.label), \String.count)
        }
        if let tag, chance(0.35) { return qKey(tag, \String.count) }
        switch int(0...(d >= 4 ? 9 : 23)) {
        case 0...3: return qKey(root, \QItem.qty)
        case 4...6: return qConst(intConstant())
        case 7: return qKeyE(qKey(root, \QItem.tags), \[String].count)
        case 8: return qKeyE(qKey(root, \QItem.parts), \[QPart].count)
        case 9: return qKeyE(chance(0.5) ? qKey(root, \QItem.category) : qKey(root, \QItem.code), \String.count)
        case 10...12 where arithmetic < 2:
            arithmetic += 1
            defer { arithmetic -= 1 }
            return qArithmetic(intE(d + 1), pick([.add, .subtract, .multiply]), intE(d + 1))
        case 13: return qNegate(intE(d + 1))
        case 14: return qCoalesce(qKey(root, \QItem.rank), qConst(intConstant()))
        case 15: return qConditional(bool(d + 2), intE(d + 1), intE(d + 1))
        case 16: return qCoalesce(flatMap(qKey(root, \QItem.note)) { qKey($0, \String.count) }, qConst(int(-1...3)))
        case 17 where closures < 2:
            return filterCount(PredicateExpressions.KeyPath(root: root, keyPath: \QItem.parts)) { v in self.withPart(v) { self.inner(d + 1) } }
        case 18 where closures < 2:
            return filterCount(PredicateExpressions.KeyPath(root: root, keyPath: \QItem.tags)) { v in self.withTag(v) { self.inner(d + 1) } }
        case 19:
            // A forced unwrap guarded by a conditional, so it never sees nil.
            let rank = qKey(root, \QItem.rank)
            return qConditional(qNotEqual(rank, qNil(Int.self)), qUnwrap(rank), qConst(intConstant()))
        case 20: return qCoalesce(flatMap(qKey(root, \QItem.owner)) { qKey($0, \QOwner.age) }, qConst(int(-1...40)))
        case 21: return qCoalesce(flatMap(qKey(root, \QItem.owner)) { qKeyE(qKey($0, \QOwner.items), \[QItem].count) }, qConst(0))
        case 22: return qCoalesce(qKeyE(qKey(root, \QItem.place), \QPlace.zip), qConst(intConstant()))
        default: return qKey(root, \QItem.qty)
        }
    }

    func doubleConstant() -> Double { chance(0.7) ? pick(pools.prices) : Double(int(-100...500)) / 4 }

    func doubleE(_ d: Int) -> QE<Double> {
        switch int(0...(d >= 4 ? 4 : 10)) {
        case 0...2: return qKey(root, \QItem.price)
        case 9: return qKeyE(qKeyE(qKey(root, \QItem.place), \QPlace.geo), chance(0.5) ? \QGeo.lat : \QGeo.lon)
        case 3, 4: return qConst(doubleConstant())
        case 5 where arithmetic < 2, 6 where arithmetic < 2:
            arithmetic += 1
            defer { arithmetic -= 1 }
            return qArithmetic(doubleE(d + 1), pick([.add, .subtract, .multiply]), doubleE(d + 1))
        case 7: return qNegate(doubleE(d + 1))
        case 8: return qConditional(bool(d + 2), doubleE(d + 1), doubleE(d + 1))
        default: return qKey(root, \QItem.price)
        }
    }

    func stringConstant() -> String {
        switch int(0...5) {
        case 0: pick(pools.categories)
        case 1: pick(pools.tags)
        case 2: pick(pools.notes)
        case 3: pick(pools.names)
        case 4: pick(pools.labels)
        default: chance(0.5) ? pick(pools.codes) : pick(["I00", "I", "0", "i0", "Z", "ü", "a"])
        }
    }

    func stringE(_ d: Int) -> QE<String> {
        if let part, chance(0.4) { return qKey(part, \QPart.label) }
        if let tag, chance(0.5) { return tag }
        switch int(0...(d >= 4 ? 5 : 11)) {
        case 0, 1: return qKey(root, \QItem.category)
        case 9: return qKeyE(qKey(root, \QItem.place), \QPlace.city)
        case 10: return qCoalesce(flatMap(qKey(root, \QItem.home)) { qKey($0, \QPlace.city) }, qConst(pick(["", "Oslo"])))
        case 2: return qKey(root, \QItem.code)
        case 3, 4, 5: return qConst(stringConstant())
        case 6: return qCoalesce(qKey(root, \QItem.note), qConst(pick(["", "hello", "x"])))
        case 7: return qCoalesce(flatMap(qKey(root, \QItem.owner)) { qKey($0, \QOwner.name) }, qConst(pick(["", "Ann"])))
        case 8: return qConditional(bool(d + 2), stringE(d + 1), stringE(d + 1))
        default: return qKey(root, \QItem.category)
        }
    }

    func dateE() -> QE<Date> {
        switch int(0...4) {
        case 0, 1: qKey(root, \QItem.date)
        case 2: qKeyE(qKey(root, \QItem.place), \QPlace.since)
        default: qConst(pick(pools.dates))
        }
    }

    func optionalIntE() -> QE<Int?> {
        switch int(0...6) {
        case 0, 1, 2: return qKey(root, \QItem.rank)
        case 3: return flatMap(qKey(root, \QItem.owner)) { qKey($0, \QOwner.age) }
        case 4: return chance(0.5) ? flatMap(qKey(root, \QItem.note)) { qKey($0, \String.count) } : qKeyE(qKey(root, \QItem.place), \QPlace.zip)
        case 5: return qNil(Int.self)
        default: return qConst(chance(0.2) ? nil : Int?(int(-1...13)))
        }
    }

    func optionalStringE() -> QE<String?> {
        switch int(0...5) {
        case 0, 1: return qKey(root, \QItem.note)
        case 2: return flatMap(qKey(root, \QItem.owner)) { qKey($0, \QOwner.name) }
        case 3: return qNil(String.self)
        default: return qConst(chance(0.2) ? nil : String?(pick(chance(0.5) ? pools.notes : pools.names)))
        }
    }

    // MARK: Booleans

    func bool(_ d: Int) -> QE<Bool> {
        if d < 4, chance(0.42) {
            switch int(0...9) {
            case 0...3: return qAnd(bool(d + 1), bool(d + 1))
            case 4...6: return qOr(bool(d + 1), bool(d + 1))
            case 7, 8: return qNot(bool(d + 1))
            default: return qConditional(bool(d + 1), bool(d + 1), bool(d + 1))
            }
        }
        return leaf(d)
    }

    /// A Boolean inside a closure: over the closure's element, sometimes the item.
    private func inner(_ d: Int) -> QE<Bool> {
        if d < 4, chance(0.3) {
            switch int(0...3) {
            case 0: return qAnd(inner(d + 1), inner(d + 1))
            case 1: return qOr(inner(d + 1), inner(d + 1))
            default: return qNot(inner(d + 1))
            }
        }
        if chance(0.15) { return leaf(d + 1) }
        if let part { return partLeaf(part, d) }
        if let tag { return tagLeaf(tag, d) }
        return leaf(d)
    }

    private func partLeaf(_ part: QVar<QPart>, _ d: Int) -> QE<Bool> {
        let weight = qKey(part, \QPart.weight), label = qKey(part, \QPart.label)
        switch int(0...9) {
        case 0, 1: return qCompare(weight, comparison(), qConst(int(-3...21)))
        case 2: return qEqual(weight, qConst(int(-3...21)))
        case 3: return qCompare(weight, comparison(), qKey(root, \QItem.qty))
        case 4: return qEqual(label, qConst(pick(pools.labels)))
        case 5: return qStarts(label, qConst(pick(["b", "B", "", "Ö", "n"])))
        case 6: return qStringContains(label, qConst(pick(["o", "ol", "", "sen", "x"])))
        case 7: return qLocalizedStandardContains(label, qConst(pick(["O", "osen", "BOLT", "ut"])))
        case 8:
            // Back to the item through the inverse to-one relationship.
            return qEqual(qCoalesce(flatMap(qKey(part, \QPart.item)) { qKey($0, \QItem.code) }, qConst("")), qKey(root, \QItem.code))
        default: return qEqual(qKey(part, \QPart.item), qNil(QItem.self))
        }
    }

    private func tagLeaf(_ tag: QVar<String>, _ d: Int) -> QE<Bool> {
        switch int(0...7) {
        case 0, 1: return qEqual(tag, qConst(pick(pools.tags)))
        case 2: return qEqual(tag, qKey(root, \QItem.category))
        case 3: return qStarts(tag, qConst(pick(["r", "R", "", "gr", "a "])))
        case 4: return qCompare(qKey(tag, \String.count), comparison(), qConst(int(0...6)))
        case 5: return qKey(tag, \String.isEmpty)
        case 6: return qLocalizedStandardContains(tag, qConst(pick(["RE", "grun", "", "B"])))
        default: return qCompare(tag, comparison(), qConst(pick(pools.tags)))
        }
    }

    private func leaf(_ d: Int) -> QE<Bool> {
        switch int(0...36) {
        case 0: return qKey(root, \QItem.flag)
        case 1: return qConst(chance(0.5))
        case 2, 3: return chance(0.5) ? qEqual(intE(d), intE(d)) : qNotEqual(intE(d), qConst(intConstant()))
        case 4, 5: return qCompare(intE(d), comparison(), chance(0.6) ? qConst(intConstant()) : intE(d))
        case 6: return chance(0.5) ? qEqual(doubleE(d), qConst(doubleConstant())) : qNotEqual(doubleE(d), doubleE(d))
        case 7: return qCompare(doubleE(d), comparison(), chance(0.7) ? qConst(doubleConstant()) : doubleE(d))
        case 8: return chance(0.5) ? qEqual(stringE(d), stringE(d)) : qNotEqual(stringE(d), qConst(stringConstant()))
        case 9: return qCompare(stringE(d), comparison(), chance(0.7) ? qConst(stringConstant()) : stringE(d))
        case 10:
            return chance(0.4) ? qEqual(dateE(), dateE()) : qCompare(dateE(), comparison(), dateE())
        case 11: return qEqual(qKey(root, \QItem.flag), chance(0.5) ? qConst(chance(0.5)) : bool(d + 1))
        case 12, 13: return chance(0.6) ? qEqual(optionalIntE(), optionalIntE()) : qNotEqual(optionalIntE(), optionalIntE())
        case 14, 15:
            return chance(0.6) ? qEqual(optionalStringE(), optionalStringE()) : qNotEqual(optionalStringE(), optionalStringE())
        case 16:
            // IN-lists: a constant array contains an attribute.
            switch int(0...4) {
            case 0: return qContains(qConst((0..<int(0...4)).map { _ in self.pick(self.pools.categories) }), qKey(root, \QItem.category))
            case 1: return qContains(qConst((0..<int(0...6)).map { _ in self.intConstant() }), intE(d))
            case 2: return qContains(qConst((0..<int(0...3)).map { _ in self.chance(0.3) ? nil : Int?(self.int(0...12)) }), qKey(root, \QItem.rank))
            case 3: return qContains(qConst((0..<int(0...3)).map { _ in self.chance(0.3) ? nil : String?(self.pick(self.pools.notes)) }), qKey(root, \QItem.note))
            default: return qContains(qConst((0..<int(1...8)).map { _ in self.pick(self.pools.codes) }), qKey(root, \QItem.code))
            }
        case 17: return qContains(qKey(root, \QItem.tags), qConst(pick(pools.tags)))
        case 18 where closures < 2: return overTags(all: chance(0.4), d)
        case 19 where closures < 2, 20 where closures < 2: return overParts(all: chance(0.4), d)
        case 21: return qStarts(stringE(d), chance(0.7) ? qConst(pick(["P", "p", "", "Z", "Zü", "I00", "I01", "note", "h"])) : stringE(d))
        case 22: return qStringContains(stringE(d), qConst(pick(["ar", "", "ü", "o", "note", "00", "l", "Hello"])))
        case 23:
            switch int(0...3) {
            case 0:
                // A closed range built in the predicate, with bounds in order.
                let x = intE(d + 1)
                return qInRange(x, qArithmetic(x, .add, qConst(int(0...20))), closed: true, intE(d))
            case 1:
                // A half-open range built in the predicate: `Predicate.evaluate`
                // throws where its lower bound exceeds its upper bound.
                return qInRange(intE(d + 1), intE(d + 1), closed: false, intE(d))
            default:
                let lo = intConstant(), hi = intConstant()
                return qInConstantRange(min(lo, hi), max(lo, hi), closed: chance(0.5), intE(d))
            }
        case 24:
            switch int(0...6) {
            case 0:
                let lo = doubleConstant(), hi = doubleConstant()
                return qInConstantRange(min(lo, hi), max(lo, hi), closed: chance(0.5), qKey(root, \QItem.price))
            case 1:
                let lo = pick(pools.dates), hi = pick(pools.dates)
                return qInConstantRange(min(lo, hi), max(lo, hi), closed: chance(0.5), qKey(root, \QItem.date))
            case 2:
                let lo = stringConstant(), hi = stringConstant()
                return qInConstantRange(min(lo, hi), max(lo, hi), closed: chance(0.5), stringE(d))
            case 3:
                // A closed range built in the predicate, with bounds in order.
                let x = intE(d + 1)
                return qInRange(x, qArithmetic(x, .add, qConst(int(0...20))), closed: true, intE(d))
            case 4, 5:
                // A window on the R-tree's (price, qty), bounds on either side or both.
                let price = qKey(root, \QItem.price), qty = qKey(root, \QItem.qty)
                let low = doubleConstant(), lowQty = intConstant()
                var window = chance(0.8) ? qCompare(price, pick([.greaterThanOrEqual, .greaterThan]), qConst(low))
                    : qCompare(price, .lessThan, qConst(low + 50))
                window = qAnd(window, qCompare(qty, pick([.greaterThanOrEqual, .lessThanOrEqual, .lessThan]), qConst(lowQty)))
                if chance(0.7) { window = qAnd(window, qCompare(price, .lessThanOrEqual, qConst(low + Double(int(0...200))))) }
                if chance(0.7) { window = qAnd(qCompare(qty, .lessThan, qConst(lowQty + int(0...30))), window) }
                return window
            default:
                // A half-open range built in the predicate: `Predicate.evaluate`
                // throws where its lower bound exceeds its upper bound.
                return qInRange(intE(d + 1), intE(d + 1), closed: false, intE(d))
            }
        case 25:
            switch int(0...5) {
            case 0: return qKeyE(qKey(root, \QItem.tags), \[String].isEmpty)
            case 1: return qKeyE(qKey(root, \QItem.parts), \[QPart].isEmpty)
            case 2: return qKeyE(stringE(d), \String.isEmpty)
            case 3: return qEqual(flatMap(qKey(root, \QItem.note)) { qKey($0, \String.isEmpty) }, qConst(Bool?(chance(0.5))))
            case 4: return qNot(qKeyE(qKey(root, \QItem.parts), \[QPart].isEmpty))
            default: return qEqual(qKeyE(qKey(root, \QItem.tags), \[String].isEmpty), qConst(false))
            }
        case 26: return qLocalizedStandardContains(stringE(d), qConst(pick(["ZUR", "zur", "paris", "", "É", "e", "STRASSE", "ss", "hello w"])))
        case 27:
            let result = pick([ComparisonResult.orderedAscending, .orderedSame, .orderedDescending])
            return qEqual(qCaseInsensitiveCompare(stringE(d), qConst(stringConstant())), qConst(result))
        case 28: return codeEquals()
        case 29:
            let owner = qKey(root, \QItem.owner)
            return chance(0.5) ? qEqual(owner, qNil(QOwner.self)) : qNotEqual(qNil(QOwner.self), owner)
        case 30:
            // Forced unwraps: mostly guarded by a conjunction; rarely unguarded, where
            // `evaluate` throws on the first nil and a fetch must throw too.
            let rank = qKey(root, \QItem.rank)
            let test = qCompare(qUnwrap(rank), comparison(), qConst(int(0...12)))
            if chance(0.1) { return test }
            return qAnd(qNotEqual(rank, qNil(Int.self)), test)
        case 31:
            let note = qKey(root, \QItem.note)
            let test = qStarts(qUnwrap(note), qConst(pick(["n", "h", ""])))
            return chance(0.5) ? qAnd(qNotEqual(note, qNil(String.self)), test) : qOr(qEqual(note, qNil(String.self)), test)
        case 32 where closures < 2:
            // The owner's other items: a to-many relationship behind an optional to-one.
            let k = int(0...60)
            return qEqual(
                flatMap(qKey(root, \QItem.owner)) { owner in
                    self.quantified(PredicateExpressions.KeyPath(root: owner, keyPath: \QOwner.items), all: false) { other in
                        qCompare(qKey(other, \QItem.qty), .greaterThan, qConst(k))
                    }
                },
                qConst(Bool?(true)))
        case 33 where closures < 2:
            let count = chance(0.5)
                ? filterCount(PredicateExpressions.KeyPath(root: root, keyPath: \QItem.parts)) { v in self.withPart(v) { self.inner(d + 1) } }
                : filterCount(PredicateExpressions.KeyPath(root: root, keyPath: \QItem.tags)) { v in self.withTag(v) { self.inner(d + 1) } }
            return qCompare(count, comparison(), qConst(int(0...3)))
        case 34: return qEqual(flatMap(qKey(root, \QItem.owner)) { qKey($0, \QOwner.name) }, qConst(String?(pick(pools.names))))
        case 35:
            // Members of the Codable attributes: Booleans, an enum, a nested struct.
            let place = qKey(root, \QItem.place)
            switch int(0...5) {
            case 0: return qKeyE(place, chance(0.5) ? \QPlace.visited : \QPlace.rated)
            case 1: return qEqual(qKeyE(place, \QPlace.kind), qConst(pick(QPlaceKind.allCases)))
            case 2: return qEqual(qKeyE(place, \QPlace.geo), qConst(QGeo(lat: Double(int(-2...2)) * 0.5, lon: Double(int(-1...1)))))
            case 3: return qEqual(flatMap(qKey(root, \QItem.home)) { qKey($0, \QPlace.visited) }, qConst(Bool?(chance(0.5))))
            case 4: return qEqual(flatMap(qKey(root, \QItem.home)) { qKey($0, \QPlace.kind) }, qConst(QPlaceKind?(pick(QPlaceKind.allCases))))
            default:
                return qEqual(
                    flatMap(qKey(root, \QItem.home)) { home in qKeyE(qKeyE(home, \QPlace.geo), \QGeo.lat) },
                    qConst(Double?(Double(int(-4...4)) * 0.5)))
            }
        default: return qCompare(qKey(root, \QItem.qty), comparison(), qConst(intConstant()))
        }
    }
}

// MARK: - Rendering predicates for failure messages

/// A readable rendering of a predicate's expression tree. Foundation's own
/// `description` prints key paths without their names on Linux and traps on nodes
/// it does not know (this module's `localizedStandardContains` and
/// `caseInsensitiveCompare`), so it is added only when it is safe.
enum QRender {
    nonisolated(unsafe) static let names: [AnyKeyPath: String] = [
        \QItem.code: "code", \QItem.category: "category", \QItem.price: "price", \QItem.qty: "qty",
        \QItem.flag: "flag", \QItem.note: "note", \QItem.tags: "tags", \QItem.date: "date", \QItem.rank: "rank",
        \QItem.owner: "owner", \QItem.parts: "parts", \QOwner.name: "name", \QOwner.age: "age", \QOwner.items: "items",
        \QPart.label: "label", \QPart.weight: "weight", \QPart.item: "item",
        \String.count: "count", \String.isEmpty: "isEmpty", \[String].count: "count", \[String].isEmpty: "isEmpty",
        \[QPart].count: "count", \[QPart].isEmpty: "isEmpty", \[QItem].count: "count",
        \QItem.place: "place", \QItem.home: "home", \QPlace.city: "city", \QPlace.zip: "zip",
        \QPlace.visited: "visited", \QPlace.rated: "rated", \QPlace.since: "since", \QPlace.geo: "geo",
        \QPlace.kind: "kind", \QGeo.lat: "lat", \QGeo.lon: "lon",
    ]

    /// Counts the node types (without generic arguments) of an expression tree.
    static func tally(_ node: Any, into counts: inout [String: Int]) {
        let name = String(String(describing: type(of: node)).prefix { $0 != "<" })
        counts[name, default: 0] += 1
        if name == "KeyPath", let keyPath = Mirror(reflecting: node).children.first(where: { $0.label == "keyPath" })?.value as? AnyKeyPath,
           [ObjectIdentifier(QPlace.self), ObjectIdentifier(QGeo.self)].contains(ObjectIdentifier(type(of: keyPath).rootType)) {
            counts["CodableMember", default: 0] += 1
        }
        if name == "Value" || name == "Variable" || name == "NilLiteral" { return }
        for child in Mirror(reflecting: node).children where child.label != "keyPath" && child.label != "op" {
            if child.label == "key" { continue }
            tally(child.value, into: &counts)
        }
    }

    static func describe(_ predicate: Predicate<QItem>) -> String {
        let rendered = "predicate: { \(render(predicate.variable)) in \(render(predicate.expression)) }"
        if rendered.contains("localizedStandardContains(") || rendered.contains("caseInsensitiveCompare(") {
            return rendered
        }
        return rendered + "\nFoundation's description: \(predicate)"
    }

    static func literal(_ value: Any) -> String {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            guard let wrapped = mirror.children.first?.value else { return "nil" }
            return literal(wrapped)
        }
        switch value {
        case let s as String: return "\"\(s)\""
        case let d as Date: return "Date(\(d.timeIntervalSince1970))"
        case let a as [Any]: return "[\(a.map(literal).joined(separator: ", "))]"
        default: return "\(value)"
        }
    }

    static func render(_ node: Any) -> String {
        let mirror = Mirror(reflecting: node)
        let name = String(String(describing: type(of: node)).prefix { $0 != "<" })
        var children: [String: Any] = [:]
        for child in mirror.children {
            if let label = child.label { children[label] = child.value }
        }
        func r(_ label: String) -> String { children[label].map(render) ?? "?" }
        func op(_ label: String) -> String { children[label].map { "\($0)" } ?? "?" }
        switch name {
        case "Variable":
            let id = children["key"].flatMap { Mirror(reflecting: $0).children.first?.value }
            return "v\(id.map { "\($0)" } ?? "?")"
        case "KeyPath":
            let keyPath = children["keyPath"] as? AnyKeyPath
            return r("root") + "." + (keyPath.flatMap { names[$0] } ?? "\(String(describing: keyPath))")
        case "Value": return children["value"].map(literal) ?? "?"
        case "NilLiteral": return "nil"
        case "Equal": return "(\(r("lhs")) == \(r("rhs")))"
        case "NotEqual": return "(\(r("lhs")) != \(r("rhs")))"
        case "Conjunction": return "(\(r("lhs")) && \(r("rhs")))"
        case "Disjunction": return "(\(r("lhs")) || \(r("rhs")))"
        case "Negation": return "!\(r("wrapped"))"
        case "Comparison":
            let symbol = ["lessThan": "<", "lessThanOrEqual": "<=", "greaterThan": ">", "greaterThanOrEqual": ">="][op("op")] ?? op("op")
            return "(\(r("lhs")) \(symbol) \(r("rhs")))"
        case "Arithmetic":
            let symbol = ["add": "+", "subtract": "-", "multiply": "*"][op("op")] ?? op("op")
            return "(\(r("lhs")) \(symbol) \(r("rhs")))"
        case "UnaryMinus": return "-\(r("wrapped"))"
        case "Conditional": return "(\(r("test")) ? \(r("trueBranch")) : \(r("falseBranch")))"
        case "NilCoalesce": return "(\(r("lhs")) ?? \(r("rhs")))"
        case "ForcedUnwrap": return "\(r("inner"))!"
        case "OptionalFlatMap": return "\(r("wrapped")).flatMap { \(r("variable")) in \(r("transform")) }"
        case "SequenceContainsWhere": return "\(r("sequence")).contains { \(r("variable")) in \(r("test")) }"
        case "SequenceAllSatisfy": return "\(r("sequence")).allSatisfy { \(r("variable")) in \(r("test")) }"
        case "Filter": return "\(r("sequence")).filter { \(r("variable")) in \(r("filter")) }"
        case "SequenceContains": return "\(r("sequence")).contains(\(r("element")))"
        case "SequenceStartsWith": return "\(r("base")).starts(with: \(r("prefix")))"
        case "CollectionContainsCollection": return "\(r("base")).contains(\(r("other")))"
        case "RangeExpressionContains": return "\(r("range")).contains(\(r("element")))"
        case "Range": return "(\(r("lower"))..<\(r("upper")))"
        case "ClosedRange": return "(\(r("lower"))...\(r("upper")))"
        case "StringLocalizedStandardContains": return "\(r("root")).localizedStandardContains(\(r("other")))"
        case "StringCaseInsensitiveCompare": return "\(r("root")).caseInsensitiveCompare(\(r("other")))"
        default:
            return "\(name)(" + mirror.children.map { "\($0.label ?? "_"): \(render($0.value))" }.joined(separator: ", ") + ")"
        }
    }
}
