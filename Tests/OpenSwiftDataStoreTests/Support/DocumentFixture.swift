import Foundation
import OpenSwiftDataStore

/// A folder under the system's temporary directory, removed by `remove()`.
struct TemporaryFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("osd-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// A schema with a value of every kind, external storage and both kinds of
/// relationship, and a deterministic history of saves over it.
enum DocumentFixture {
    /// A store over the document at `path` (made if missing), with `schema`.
    static func openStore(_ path: String, schema: StoreSchema = schema) throws -> Store {
        let (document, version) = try Document.open(path: path, schema: schema)
        return Store(document: document, version: version)
    }

    static let schema = StoreSchema(entities: [
        EntityDescription(
            name: "Item",
            attributes: [
                AttributeDescription(name: "code", type: .string, isOptional: false, isUnique: true),
                AttributeDescription(name: "count", type: .int(bits: 64), isOptional: false),
                AttributeDescription(name: "big", type: .uint(bits: 64), isOptional: false),
                AttributeDescription(name: "ratio", type: .double, isOptional: false),
                AttributeDescription(name: "flag", type: .bool, isOptional: false),
                AttributeDescription(name: "when", type: .date, isOptional: true),
                AttributeDescription(name: "id", type: .uuid, isOptional: false),
                AttributeDescription(name: "link", type: .url, isOptional: true),
                AttributeDescription(name: "price", type: .decimal, isOptional: false),
                AttributeDescription(name: "tags", type: .array(.string), isOptional: false),
                AttributeDescription(name: "scores", type: .dictionary(key: .string, value: .double), isOptional: false),
                AttributeDescription(name: "address", type: .codable("Address"), isOptional: true),
                AttributeDescription(name: "photo", type: .data, isOptional: true, isExternalStorage: true),
            ],
            relationships: [
                RelationshipDescription(name: "box", destination: "Box", isToMany: false, inverse: "items", deleteRule: .nullify),
            ],
            uniqueness: [[0]],
            indices: [IndexDescription(kind: .binary, slots: [1])]),
        EntityDescription(
            name: "Box",
            attributes: [AttributeDescription(name: "label", type: .string, isOptional: false)],
            relationships: [
                RelationshipDescription(name: "items", destination: "Item", isToMany: true, inverse: "box", deleteRule: .cascade),
            ]),
    ])

    static func item(_ n: Int, box: RowID? = nil, photoSize: Int = 0) -> Row {
        let photo: Value = photoSize == 0 ? .null : .data(Data((0..<photoSize).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ n) }))
        return [
            .string("item-\(n)"), .int(Int64(n) - 50), .uint(UInt64.max - UInt64(n)), .double(Double(n) / 7),
            .bool(n % 2 == 0), n % 3 == 0 ? .null : .date(Date(timeIntervalSinceReferenceDate: Double(n) * 1000.5)),
            .uuid(UUID(uuid: (UInt8(n & 0xFF), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))),
            n % 4 == 0 ? .null : .url(URL(string: "https://example.com/\(n)?q=ä")!),
            .decimal(Decimal(string: "\(n).125")!),
            .array([.string("t\(n)"), .string("✓")]),
            .dictionary([Value.Pair(key: .string("x"), value: .double(Double(n)))]),
            n % 5 == 0 ? .null : .codable(Data("{\"city\":\"C\(n)\"}".utf8)),
            photo,
            box.map(Value.reference) ?? .null,
        ]
    }

    /// Save `k` (1-based) of the history: inserts two items (every third with a
    /// large photo) into a new box, updates an earlier item, deletes another.
    static func save(_ k: Int, in store: Store) throws {
        var changes = ChangeSet()
        changes.author = "save \(k)"
        changes.inserts.append(.init(entity: 1, temporaryID: RowID(-1), row: [.string("box-\(k)"), .references([RowID(-2), RowID(-3)])]))
        changes.inserts.append(.init(entity: 0, temporaryID: RowID(-2), row: item(2 * k, box: RowID(-1), photoSize: k % 3 == 0 ? 20_000 : 100)))
        changes.inserts.append(.init(entity: 0, temporaryID: RowID(-3), row: item(2 * k + 1, box: RowID(-1))))
        if k > 1 {
            changes.updates.append(.init(entity: 0, id: RowID(Int64(k - 1)), values: [1: .int(Int64(k * 100))]))
        }
        if k > 3 {
            changes.deletes.append(.init(entity: 0, id: RowID(Int64(k - 3) * 2)))
        }
        _ = try store.commit(changes)
        // Every test that saves through the fixture checks tables, indexes and
        // unique keys agree after each commit.
        store.current._checkInvariants()
    }

    /// Every row of every entity, for comparing two versions.
    static func rows(of version: StoreVersion) -> [[RowID: Row]] {
        version.tables.map { table in
            var rows: [RowID: Row] = [:]
            table.forEach { id, row in rows[id] = row }
            return rows
        }
    }

    /// The rows after saves 1…k, computed in memory.
    static func expectedRows(after k: Int) throws -> [[RowID: Row]] {
        let store = Store(schema: schema)
        for i in stride(from: 1, through: k, by: 1) { try save(i, in: store) }
        return rows(of: store.current)
    }
}
