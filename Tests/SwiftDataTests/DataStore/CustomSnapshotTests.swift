import Foundation
import SwiftData
import Testing

@Model
final class Memo {
    var text: String
    var priority: Int

    init(text: String, priority: Int) {
        self.text = text
        self.priority = priority
    }
}

/// A snapshot type of a store's own, coded under `DataStoreSnapshotCodingKey`s.
struct MemoRecord: DataStoreSnapshot {
    var persistentIdentifier: PersistentIdentifier
    var text: String
    var priority: Int

    init(persistentIdentifier: PersistentIdentifier, text: String, priority: Int) {
        self.persistentIdentifier = persistentIdentifier
        self.text = text
        self.priority = priority
    }

    init(from backingData: any BackingData, relatedBackingDatas: inout [PersistentIdentifier: any BackingData]) {
        let values = DefaultSnapshot(from: backingData, relatedBackingDatas: &relatedBackingDatas)
        self.init(
            persistentIdentifier: values.persistentIdentifier, text: values.value(forKey: "text") ?? "",
            priority: values.value(forKey: "priority") ?? 0)
    }

    func copy(persistentIdentifier: PersistentIdentifier, remappedIdentifiers: [PersistentIdentifier: PersistentIdentifier]?) -> MemoRecord {
        MemoRecord(persistentIdentifier: persistentIdentifier, text: text, priority: priority)
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: DataStoreSnapshotCodingKey.self)
        persistentIdentifier = try c.decode(PersistentIdentifier.self, forKey: .persistentIdentifier)
        text = try c.decode(String.self, forKey: .modeledProperty("text"))
        priority = try c.decode(Int.self, forKey: .modeledProperty("priority"))
    }

    func encode(to encoder: any Encoder) throws {
        // A store that writes its records as arrays: contexts cannot read that form.
        if text == "unreadable" {
            var list = encoder.unkeyedContainer()
            try list.encode(text)
            return
        }
        var c = encoder.container(keyedBy: DataStoreSnapshotCodingKey.self)
        try c.encode(persistentIdentifier, forKey: .persistentIdentifier)
        try c.encode(text, forKey: .modeledProperty("text"))
        try c.encode(priority, forKey: .modeledProperty("priority"))
    }
}

final class MemoStoreConfiguration: DataStoreConfiguration {
    typealias Store = MemoStore
    var name = "memos"
    var schema: Schema?
    static func == (lhs: MemoStoreConfiguration, rhs: MemoStoreConfiguration) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// Records in memory, keyed by integers it counts itself.
final class MemoStore: DataStore {
    typealias Configuration = MemoStoreConfiguration
    typealias Snapshot = MemoRecord

    let configuration: MemoStoreConfiguration
    let schema: Schema
    let identifier = "memos"
    private var records: [PersistentIdentifier: MemoRecord] = [:]
    private var nextKey = 1
    /// How many fetches and cache lookups reached the store.
    private(set) var fetches = 0
    private(set) var cacheLookups = 0

    /// The store opened last, so the one test over it can look at it.
    nonisolated(unsafe) static var last: MemoStore?

    init(_ configuration: MemoStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        self.configuration = configuration
        self.schema = configuration.schema!
        Self.last = self
    }

    /// The records themselves: the store holds them all in memory.
    func cachedSnapshots(
        for persistentIdentifiers: [PersistentIdentifier], editingState: EditingState
    ) throws -> [PersistentIdentifier: MemoRecord] {
        cacheLookups += 1
        return records.filter { persistentIdentifiers.contains($0.key) }
    }

    func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchResult<T, MemoRecord> {
        fetches += 1
        if request.descriptor.predicate != nil { throw DataStoreError.preferInMemoryFilter }
        if !request.descriptor.sortBy.isEmpty { throw DataStoreError.preferInMemorySort }
        return DataStoreFetchResult(descriptor: request.descriptor, fetchedSnapshots: records.values.sorted { $0.persistentIdentifier < $1.persistentIdentifier })
    }

    func save(_ request: DataStoreSaveChangesRequest<MemoRecord>) throws -> DataStoreSaveChangesResult<MemoRecord> {
        var remapped: [PersistentIdentifier: PersistentIdentifier] = [:]
        for record in request.inserted {
            let id = try PersistentIdentifier.identifier(for: identifier, entityName: "Memo", primaryKey: nextKey)
            nextKey += 1
            remapped[record.persistentIdentifier] = id
            records[id] = record.copy(persistentIdentifier: id, remappedIdentifiers: nil)
        }
        for record in request.updated { records[record.persistentIdentifier] = record }
        for record in request.deleted { records[record.persistentIdentifier] = nil }
        return DataStoreSaveChangesResult(for: identifier, remappedIdentifiers: remapped)
    }
}

/// A store whose snapshots are its own type: contexts read them through their coded form.
@Suite struct CustomSnapshotTests {
    @Test func contextsReadAStoresOwnSnapshotType() throws {
        let container = try ModelContainer(for: Memo.self, configurations: MemoStoreConfiguration())
        let writer = ModelContext(container)
        writer.insert(Memo(text: "buy tiles", priority: 2))
        writer.insert(Memo(text: "book train", priority: 5))
        try writer.save()
        #expect(writer.insertedModelsArray.isEmpty)

        let reader = ModelContext(container)
        let memos = try reader.fetch(FetchDescriptor<Memo>(sortBy: [SortDescriptor(\.priority, order: .reverse)]))
        #expect(memos.map(\.text) == ["book train", "buy tiles"])
        #expect(memos.map(\.persistentModelID.description).sorted() == ["Memo/p1", "Memo/p2"])
        memos[0].priority = 1
        try reader.save()
        #expect(try ModelContext(container).fetch(FetchDescriptor<Memo>(predicate: #Predicate { $0.priority == 1 })).map(\.text) == ["book train"])

        // A model looked up by identifier comes from the store's cache, without a fetch.
        let store = try #require(MemoStore.last)
        let id = memos[1].persistentModelID
        let fetchesBefore = store.fetches
        let cold = ModelContext(container)
        #expect((cold.model(for: id) as? Memo)?.text == "buy tiles")
        #expect(store.cacheLookups >= 1)
        #expect(store.fetches == fetchesBefore)

        // A record that does not encode as keyed entries cannot be read: a typed error, not a crash.
        writer.insert(Memo(text: "unreadable", priority: 0))
        try writer.save()
        #expect(throws: DataStoreError.unsupportedFeature) { try ModelContext(container).fetch(FetchDescriptor<Memo>()) }
    }
}
