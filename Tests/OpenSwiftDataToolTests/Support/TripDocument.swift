import Foundation
import OpenSwiftDataStore

/// A folder under the system's temporary directory for one test, removed by `remove()`.
struct TemporaryFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("osd-tool-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// A travel document written through the engine: destinations and trips, a value
/// of every kind, two photos large enough for the blob folder, and gaps in the
/// row identifiers left by deletes.
///
/// Trips #1…#8 are inserted, #6 and #8 deleted: six remain, and Trip's next
/// identifier is 9. The history is five saves, so the journal has five frames.
enum TripDocument {
    static let schema = StoreSchema(entities: [
        EntityDescription(
            name: "Destination",
            attributes: [
                AttributeDescription(name: "name", type: .string, isOptional: false, isUnique: true),
                AttributeDescription(name: "country", type: .string, isOptional: false),
                AttributeDescription(name: "rating", type: .int(bits: 64), isOptional: false),
            ],
            relationships: [
                RelationshipDescription(name: "trips", destination: "Trip", isToMany: true, inverse: "destination", deleteRule: .cascade),
            ],
            uniqueness: [[0]]),
        EntityDescription(
            name: "Trip",
            attributes: [
                AttributeDescription(name: "name", type: .string, isOptional: false),
                AttributeDescription(name: "days", type: .int(bits: 64), isOptional: false),
                AttributeDescription(name: "budget", type: .double, isOptional: false),
                AttributeDescription(name: "booked", type: .bool, isOptional: false),
                AttributeDescription(name: "start", type: .date, isOptional: true),
                AttributeDescription(name: "id", type: .uuid, isOptional: false, isUnique: true),
                AttributeDescription(name: "link", type: .url, isOptional: true),
                AttributeDescription(name: "price", type: .decimal, isOptional: false),
                AttributeDescription(name: "big", type: .uint(bits: 64), isOptional: false),
                AttributeDescription(name: "tags", type: .set(.string), isOptional: false),
                AttributeDescription(name: "extremes", type: .array(.double), isOptional: false),
                AttributeDescription(name: "scores", type: .dictionary(key: .string, value: .int(bits: 32)), isOptional: false),
                AttributeDescription(name: "plan", type: .codable("Itinerary"), isOptional: true),
                AttributeDescription(name: "notes", type: .data, isOptional: true),
                AttributeDescription(name: "photo", type: .data, isOptional: true, isExternalStorage: true),
            ],
            relationships: [
                RelationshipDescription(name: "destination", destination: "Destination", isToMany: false, inverse: "trips", deleteRule: .nullify),
            ],
            uniqueness: [[5]],
            indices: [IndexDescription(kind: .binary, slots: [1]), IndexDescription(kind: .rtree, slots: [1, 2])]),
    ])

    static let destinations = ["Paris", "Rome", "Oslo", "Lima"]

    /// name, days, booked, destination (row id), photo size
    static let trips: [(String, Int64, Bool, Int64, Int)] = [
        ("Weekend in Paris", 3, true, 1, 0),
        ("Rome by rail", 7, false, 2, 0),
        ("Fjords", 10, true, 3, 20_000),
        ("Paris again", 5, true, 1, 0),
        ("Andes", 14, false, 4, 24_000),
        ("Cancelled", 2, false, 2, 0),
        ("Oslo winter", 4, true, 3, 100),
        ("Scratch", 1, false, 4, 0),
    ]

    static func trip(_ n: Int) -> Row {
        let (name, days, booked, destination, photoSize) = trips[n - 1]
        let photo: Value = photoSize == 0 ? .null : .data(Data((0..<photoSize).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ n) }))
        return [
            .string(name), .int(days), .double(Double(days) * 150.25), .bool(booked),
            n % 3 == 0 ? .null : .date(Date(timeIntervalSinceReferenceDate: 740_000_000 + Double(n) * 86_400.125)),
            .uuid(UUID(uuid: (UInt8(n), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))),
            n % 2 == 0 ? .null : .url(URL(string: "https://example.com/trips/\(n)?q=ä")!),
            .decimal(Decimal(string: "\(days * 100).25")!),
            .uint(UInt64.max - UInt64(n)),
            .array([.string("food"), .string("t\(n)")]),
            .array(n == 7 ? [.double(-0.0), .double(.infinity), .double(-.infinity), .double(.nan), .double(1e300), .double(.leastNonzeroMagnitude)] : [.double(0.1)]),
            .dictionary([Value.Pair(key: .string("fun"), value: .int(Int64(n)))]),
            n % 4 == 0 ? .null : .codable(Data("{\"stops\":[\"s\(n)\"],\"quote\":\"\\\"é\\n\"}".utf8)),
            .data(Data([0, 1, 2, 254, 255, UInt8(n)])),
            photo,
            .reference(RowID(destination)),
        ]
    }

    /// Writes the document at `path` through the engine and returns its final rows.
    @discardableResult
    static func create(at path: String) throws -> StoreVersion {
        let (document, version) = try openForWriting(path)
        defer { document.close() }
        let store = Store(document: document, version: version)

        var places = ChangeSet()
        for (i, name) in destinations.enumerated() {
            places.inserts.append(.init(
                entity: 0, temporaryID: RowID(Int64(-1 - i)),
                row: [.string(name), .string(["FR", "IT", "NO", "PE"][i]), .int(Int64(5 - i)), .references([])]))
        }
        _ = try store.commit(places)

        var journeys = ChangeSet()
        for n in 1...trips.count {
            journeys.inserts.append(.init(entity: 1, temporaryID: RowID(Int64(-n)), row: trip(n)))
        }
        _ = try store.commit(journeys)

        var links = ChangeSet()
        for d in 1...destinations.count {
            let ids = trips.indices.filter { trips[$0].3 == Int64(d) }.map { RowID(Int64($0 + 1)) }
            links.updates.append(.init(entity: 0, id: RowID(Int64(d)), values: [3: .references(ids)]))
        }
        _ = try store.commit(links)

        var cleanup = ChangeSet()
        cleanup.deletes = [.init(entity: 1, id: RowID(6)), .init(entity: 1, id: RowID(8))]
        for d in [2, 4] {
            let ids = trips.indices.filter { trips[$0].3 == Int64(d) && $0 != 5 && $0 != 7 }.map { RowID(Int64($0 + 1)) }
            cleanup.updates.append(.init(entity: 0, id: RowID(Int64(d)), values: [3: .references(ids)]))
        }
        _ = try store.commit(cleanup)

        var last = ChangeSet()
        last.updates.append(.init(entity: 1, id: RowID(2), values: [1: .int(8)]))
        _ = try store.commit(last)
        return store.current
    }

    /// Opens (or creates) a document for writing, waiting out a lock that only seems
    /// held: a process another test spawns at that moment has a copy of every open
    /// file description until it calls exec, so a lock just released by `close()`
    /// can stay held for a few milliseconds.
    static func openForWriting(_ path: String, schema: StoreSchema = schema) throws -> (Document, StoreVersion) {
        var attempts = 0
        while true {
            switch Result(catching: { () throws(DocumentError) in try Document.open(path: path, schema: schema) }) {
            case let .success(opened):
                return opened
            case .failure(.locked) where attempts < 100:
                attempts += 1
                usleep(20_000)
            case let .failure(error):
                throw error
            }
        }
    }

    /// Every row of every entity, keyed by identifier.
    static func rows(of version: StoreVersion) -> [[Int64: Row]] {
        version.tables.map { table in
            var rows: [Int64: Row] = [:]
            table.forEach { id, row in rows[id.rawValue] = row }
            return rows
        }
    }

    /// Whether two documents hold the same rows and next identifiers; doubles are
    /// compared bit for bit, so NaN equals NaN and -0.0 differs from 0.0.
    static func sameContents(_ a: StoreVersion, _ b: StoreVersion) -> Bool {
        guard a.schema == b.schema, a.tables.map(\.nextRawID) == b.tables.map(\.nextRawID) else { return false }
        let left = rows(of: a), right = rows(of: b)
        return zip(left, right).allSatisfy { l, r in
            l.count == r.count && l.allSatisfy { id, row in
                guard let other = r[id], other.count == row.count else { return false }
                return zip(row, other).allSatisfy(identical)
            }
        }
    }

    static func identical(_ a: Value, _ b: Value) -> Bool {
        switch (a, b) {
        case let (.double(x), .double(y)): x.bitPattern == y.bitPattern || (x.isNaN && y.isNaN)
        case let (.array(x), .array(y)): x.count == y.count && zip(x, y).allSatisfy(identical)
        case let (.dictionary(x), .dictionary(y)):
            x.count == y.count && zip(x, y).allSatisfy { identical($0.key, $1.key) && identical($0.value, $1.value) }
        default: a == b
        }
    }
}
