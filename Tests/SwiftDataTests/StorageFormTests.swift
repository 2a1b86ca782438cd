import Foundation
import SwiftData
import Testing

@Model
final class SealedVoyage {
    #Index<SealedVoyage>(.binary([\.port]))
    @Attribute(.unique) var code: String
    var port: String
    var departure: Date
    var fare: Double
    var latitude: Double
    var berths: Int
    var log: String?

    init(code: String, port: String, departure: Date, fare: Double, latitude: Double, berths: Int, log: String?) {
        self.code = code
        self.port = port
        self.departure = departure
        self.fare = fare
        self.latitude = latitude
        self.berths = berths
        self.log = log
    }
}

@Model
final class ScatteredCargo {
    @Attribute(.unique) var code: String
    var hold: String
    var weight: Int?
    var serial: UInt64?
    var docked: Bool
    var sealed: Bool?
    var loaded: Date?
    var manifest: String?
    var next: ScatteredCargo?
    /// Crates have no relationship back: the list is stored on this side.
    var crates: [CargoCrate] = []

    init(code: String, hold: String, weight: Int?, serial: UInt64?, docked: Bool, loaded: Date?, manifest: String?) {
        self.code = code
        self.hold = hold
        self.weight = weight
        self.serial = serial
        self.docked = docked
        self.loaded = loaded
        self.manifest = manifest
    }
}

@Model
final class CargoCrate {
    var label: String

    init(label: String) {
        self.label = label
    }
}

/// Full segments sealed into their small forms (bit-packed numbers, string heaps,
/// shared dictionaries), through the public API: what a document saved holds reads
/// back the same after a reopen, through fetches, predicates and sorts, and after
/// edits that fit the forms or not.
@Suite struct StorageFormTests {
    /// SealedVoyage `i`, the same every time.
    static func voyage(_ i: Int) -> SealedVoyage {
        SealedVoyage(
            code: "V\(i)", port: "port \(i * 7 % 40)",
            departure: Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(i * 3_613 % 9_000_000)),
            fare: Double(i * 37 % 100_000) / 100, latitude: sin(Double(i)) * 80, berths: i % 9,
            log: i % 3 == 0 ? "a log entry long enough to be stored out of line, number \(i)" : nil)
    }

    static func snapshot(_ context: ModelContext) throws -> [String] {
        try context.fetch(FetchDescriptor<SealedVoyage>(sortBy: [SortDescriptor(\.code)])).map {
            "\($0.code)|\($0.port)|\($0.departure.timeIntervalSinceReferenceDate.bitPattern)|\($0.fare.bitPattern)|"
                + "\($0.latitude.bitPattern)|\($0.berths)|\($0.log ?? "nil")"
        }
    }

    /// A compaction writes a column frame a run of rows at a time. Deletions leave the
    /// live rows in runs that start anywhere in a segment and anywhere in a frame, and
    /// every kind of column (packed or not, heap, dictionary, bits, references, nils)
    /// must read back the same.
    @Test func scatteredRowsOfEveryColumnKindReadBackAfterCompaction() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let configuration = ModelConfiguration(url: folder.file("cargo.store"))
        func snapshot(_ context: ModelContext) throws -> [String] {
            try context.fetch(FetchDescriptor<ScatteredCargo>(sortBy: [SortDescriptor(\.code)])).map {
                "\($0.code)|\($0.hold)|\($0.weight.map(String.init) ?? "nil")|\($0.serial.map(String.init) ?? "nil")|"
                    + "\($0.docked)|\($0.sealed.map(String.init) ?? "nil")|"
                    + "\($0.loaded.map { String($0.timeIntervalSinceReferenceDate.bitPattern) } ?? "nil")|"
                    + "\($0.manifest ?? "nil")|\($0.next?.code ?? "nil")|\($0.crates.map(\.label).sorted())"
            }
        }
        let n = 10_000
        func deleted(_ i: Int) -> Bool { i % 5 == 2 || (5_000..<5_100).contains(i) || (4_000..<4_200).contains(i) }
        let expected: [String]
        do {
            let container = try ModelContainer(for: ScatteredCargo.self, CargoCrate.self, configurations: configuration)
            let context = ModelContext(container)
            var cargo: [ScatteredCargo] = []
            for i in 0..<n {
                let item = ScatteredCargo(
                    code: String(format: "C%05d", i), hold: "hold \(i % 13)",
                    weight: i % 11 == 0 ? nil : i * 3 % 5_000, serial: i % 17 == 0 ? nil : UInt64(i) * 1_000_003,
                    docked: i % 3 == 1, loaded: i % 19 == 0 ? nil : Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(i)),
                    manifest: i % 4 == 0 ? nil : "a manifest long enough to live out of line, for cargo \(i)")
                item.sealed = i % 6 == 0 ? nil : i % 4 < 2
                context.insert(item)
                if i % 9 == 0 { item.crates = [CargoCrate(label: "crate \(i)a"), CargoCrate(label: "crate \(i)b")] }
                cargo.append(item)
            }
            // (Only to cargo that stays: `next` has no inverse, so a deleted target would
            // leave the live model pointing at it while the store reads nil.)
            for i in stride(from: 1, to: n, by: 7) where !deleted(i - 1) { cargo[i].next = cargo[i - 1] }
            try context.save()
            // Holes: every fifth, a block inside the second segment, a block across the
            // first segment's end; and a few nils set in sealed segments.
            for i in 0..<n where deleted(i) { context.delete(cargo[i]) }
            for i in stride(from: 3, to: n, by: 97) where !deleted(i) {
                cargo[i].weight = nil
                cargo[i].manifest = nil
                cargo[i].sealed = nil
                cargo[i].crates.append(CargoCrate(label: "late crate \(i)"))
            }
            try context.save()
            expected = try snapshot(context)
            #expect(expected.count == (0..<n).count { !deleted($0) })
        }
        do {
            let reopened = try ModelContainer(for: ScatteredCargo.self, CargoCrate.self, configurations: configuration)
            #expect(try snapshot(ModelContext(reopened)) == expected)
            try reopened.compactDocument()
            #expect(try snapshot(ModelContext(reopened)) == expected)
        }
        let reopened = try ModelContainer(for: ScatteredCargo.self, CargoCrate.self, configurations: configuration)
        #expect(try snapshot(ModelContext(reopened)) == expected)
    }

    @Test func aDocumentOfSealedSegmentsReadsBackAfterEditsAndReopening() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let configuration = ModelConfiguration(url: folder.file("voyages.store"))
        let n = 10_000
        let expected: [String]
        do {
            let container = try ModelContainer(for: SealedVoyage.self, configurations: configuration)
            let context = ModelContext(container)
            for i in 0..<n { context.insert(Self.voyage(i)) }
            try context.save()
            // 10,000 voyages: two full segments sealed, the third filling.
            let report = container._storageReport
            func line(_ attribute: String) -> String {
                report.split(separator: "\n").first { $0.hasPrefix("  \(attribute):") }.map(String.init) ?? ""
            }
            #expect(line("departure").hasSuffix("(plain 1, packed 2)"), "\(report)")
            #expect(line("fare").hasSuffix("(plain 1, packed 2)"), "\(report)")
            #expect(line("latitude").hasSuffix("(plain 3)"), "\(report)")
            #expect(line("port").hasSuffix("(plain 1, dictionary 2)"), "\(report)")
            #expect(line("log").hasSuffix("(plain 1, heap 2)"), "\(report)")
            #expect(line("code").hasSuffix("(plain 1, heap 2)"), "\(report)")
            // Edits into sealed segments: values that fit the forms, and values that do
            // not (a fare finer than cents, a far date, a new long log, nil).
            let early = try context.fetch(FetchDescriptor<SealedVoyage>(predicate: #Predicate { $0.berths == 4 }))
            for (k, voyage) in early.enumerated() {
                switch k % 4 {
                case 0: voyage.fare += 1.25
                case 1: voyage.fare = 0.1 + 0.2
                case 2: voyage.departure = Date(timeIntervalSinceReferenceDate: 1e12 + Double(k))
                default: voyage.log = k % 8 == 3 ? nil : "a new long log entry for an edited voyage \(k)"
                }
            }
            try context.save()
            expected = try Self.snapshot(context)
            #expect(expected.count == n)
        }
        // Reopened, the journal's edits replayed over the snapshot; then compacted and
        // reopened again, from a snapshot alone.
        do {
            let reopened = try ModelContainer(for: SealedVoyage.self, configurations: configuration)
            #expect(try Self.snapshot(ModelContext(reopened)) == expected)
            try reopened.compactDocument()
        }
        let reopened = try ModelContainer(for: SealedVoyage.self, configurations: configuration)
        let context = ModelContext(reopened)
        #expect(try Self.snapshot(context) == expected)
        // An open seals what it reads as a save does: the long logs, which no index
        // reads, in a heap (decoded on a worker that does not know the indexes, they
        // wait for their table).
        let report = reopened._storageReport
        let log = report.split(separator: "\n").first { $0.hasPrefix("  log:") }.map(String.init) ?? ""
        #expect(log.hasSuffix("(plain 1, heap 2)"), "\(report)")
        // Predicates and sorts over sealed columns answer as over the values.
        let cheap = try context.fetch(FetchDescriptor<SealedVoyage>(predicate: #Predicate { $0.fare < 20 && $0.berths > 2 }))
        let all = try context.fetch(FetchDescriptor<SealedVoyage>())
        #expect(Set(cheap.map(\.code)) == Set(all.filter { $0.fare < 20 && $0.berths > 2 }.map(\.code)))
        let byDate = try context.fetch(FetchDescriptor<SealedVoyage>(sortBy: [SortDescriptor(\.departure), SortDescriptor(\.code)]))
        #expect(byDate.map(\.code) == all.sorted { ($0.departure, $0.code) < ($1.departure, $1.code) }.map(\.code))
        let port = try context.fetch(FetchDescriptor<SealedVoyage>(predicate: #Predicate { $0.port == "port 7" }))
        #expect(port.count == all.filter { $0.port == "port 7" }.count && !port.isEmpty)
    }
}
