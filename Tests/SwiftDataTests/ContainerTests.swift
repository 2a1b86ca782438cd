import Foundation
import SwiftData
import Testing

/// Point 5: containers and configurations.
@Suite struct ContainerTests {
    @Test func everyInitializerBuildsTheSameSchema() throws {
        let memory = ModelConfiguration(isStoredInMemoryOnly: true)
        let a = try ModelContainer(for: Trip.self, BucketListItem.self, configurations: memory)
        let b = try ModelContainer(for: Trip.self, configurations: memory)
        let c = try ModelContainer(for: Schema([Trip.self]), configurations: memory)
        let d = try ModelContainer(for: Schema([Trip.self]), migrationPlan: nil, configurations: [memory])
        let e = try ModelContainer(for: Trip.self, migrationPlan: TripPlan.self, configurations: memory)
        let f = try ModelContainer(for: Schema([Trip.self]), configurations: [memory] as [any DataStoreConfiguration])
        for container in [a, b, c, d, e, f] {
            #expect(Set(container.schema.entities.map(\.name)) == ["Trip", "BucketListItem", "LivingAccommodation"])
        }
        #expect(e.migrationPlan != nil)
        #expect(b.configurations == [memory])
        #expect(a.configurations.count == 1)
        #expect(a != b)
        #expect(a == a)
    }

    @Test func configurationInitializersAndProperties() throws {
        let memory = ModelConfiguration(isStoredInMemoryOnly: true)
        #expect(memory.isStoredInMemoryOnly)
        #expect(memory.allowsSave)
        let named = ModelConfiguration(
            "Store", schema: Schema(Trip.self), isStoredInMemoryOnly: false, allowsSave: false,
            groupContainer: .identifier("group.com.example"), cloudKitDatabase: .private("iCloud.com.example"))
        #expect(named.name == "Store")
        #expect(!named.allowsSave)
        #expect(named.url.lastPathComponent == "Store.store")
        #expect(named.url.path.contains("OpenSwiftData"))
        #expect(named.schema?.entities.count == 3)
        let url = URL(fileURLWithPath: "/tmp/trips.store")
        let atURL = ModelConfiguration(url: url, cloudKitDatabase: .none)
        #expect(atURL.url == url)
        #expect(atURL.id == url)
        #expect(atURL.name == "trips")
        let forTypes = ModelConfiguration(for: Trip.self, isStoredInMemoryOnly: true)
        #expect(forTypes.schema?.entity(for: Trip.self) != nil)
        #expect(ModelConfiguration().name == "default")
        #expect(ModelConfiguration.GroupContainer.automatic != ModelConfiguration.GroupContainer.none)
    }

    @Test func deleteAllDataEmptiesTheStore() throws {
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        for i in 0..<5 { context.insert(Trip(name: "\(i)", destination: "X")) }
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 5)
        container.deleteAllData()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 0)
        try container.erase()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 0)
    }

    @MainActor @Test func mainContextAutosaves() async throws {
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let main = container.mainContext
        #expect(main === container.mainContext)
        #expect(main.autosaveEnabled)
        #expect(!ModelContext(container).autosaveEnabled)
        main.insert(Trip(name: "auto", destination: "saved"))
        #expect(main.hasChanges)
        for _ in 0..<1000 where main.hasChanges { await Task.yield() }
        #expect(!main.hasChanges)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 1)
    }

    /// Another context with autosave on saves when pending changes are processed,
    /// once (a save used to process pending changes, which saved, which processed…).
    @Test func anotherContextWithAutosaveSavesOnProcessPendingChanges() throws {
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        context.autosaveEnabled = true
        let saves = SaveCounter()
        let observer = NotificationCenter.default.addObserver(forName: ModelContext.didSave, object: context, queue: nil) { _ in
            saves.increment()
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        context.insert(Trip(name: "auto", destination: "saved"))
        context.processPendingChanges()
        #expect(!context.hasChanges)
        #expect(saves.count == 1)
        try context.save()
        #expect(saves.count == 1)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 1)
    }
}

/// Counts notifications from any thread.
final class SaveCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func increment() { lock.withLock { value += 1 } }
    var count: Int { lock.withLock { value } }
}

enum TripSchemaV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [Trip.self] }
}

enum TripPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [TripSchemaV1.self] }
    static var stages: [MigrationStage] { [] }
}
