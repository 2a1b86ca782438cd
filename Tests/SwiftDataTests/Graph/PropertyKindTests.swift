import Foundation
import SwiftData
import Testing

// `let` properties and `.ephemeral` attributes (#39, points 4 and 6), as apps write them.

@Model
final class LTodo {
    @Attribute(.unique) let id: UUID
    let createdAt: Date
    var title: String
    @Attribute(.ephemeral) var isSelected: Bool = false
    @Attribute(.ephemeral) var draft: String?

    init(id: UUID = UUID(), createdAt: Date, title: String) {
        self.id = id
        self.createdAt = createdAt
        self.title = title
    }
}

@Suite struct PropertyKindTests {
    private func container(_ url: URL) throws -> ModelContainer {
        try ModelContainer(for: Schema([LTodo.self]), configurations: ModelConfiguration(url: url))
    }

    // MARK: `let`

    @Test func letPropertiesPersistAndServePredicatesSortsAndUniqueness() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = folder.file("todos.store")
        let first = UUID(), second = UUID()
        do {
            let context = ModelContext(try container(url))
            context.insert(LTodo(id: first, createdAt: Date(timeIntervalSince1970: 200), title: "later"))
            context.insert(LTodo(id: second, createdAt: Date(timeIntervalSince1970: 100), title: "sooner"))
            try context.save()
        }
        let reopened = try container(url)
        let context = ModelContext(reopened)
        let sorted = try context.fetch(FetchDescriptor<LTodo>(sortBy: [SortDescriptor(\.createdAt)]))
        #expect(sorted.map(\.title) == ["sooner", "later"])
        #expect(sorted.map(\.id) == [second, first])
        #expect(sorted.map(\.createdAt) == [Date(timeIntervalSince1970: 100), Date(timeIntervalSince1970: 200)])
        let byID = try context.fetch(FetchDescriptor<LTodo>(predicate: #Predicate { $0.id == first }))
        #expect(byID.map(\.title) == ["later"])
        let cutoff = Date(timeIntervalSince1970: 150)
        #expect(try context.fetchCount(FetchDescriptor<LTodo>(predicate: #Predicate { $0.createdAt > cutoff })) == 1)

        // The unique `let` upserts: the same id again updates the stored model.
        context.insert(LTodo(id: first, createdAt: Date(timeIntervalSince1970: 200), title: "renamed"))
        try context.save()
        let all = try ModelContext(reopened).fetch(FetchDescriptor<LTodo>(sortBy: [SortDescriptor(\.title)]))
        #expect(all.map(\.title) == ["renamed", "sooner"])
        #expect(all.first?.id == first)
    }

    @Test func letPropertiesSurviveEditsOfOtherProperties() throws {
        let container = try ModelContainer(for: LTodo.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let id = UUID()
        let context = ModelContext(container)
        context.insert(LTodo(id: id, createdAt: Date(timeIntervalSince1970: 5), title: "a"))
        try context.save()
        let other = ModelContext(container)
        let todo = try #require(try other.fetch(FetchDescriptor<LTodo>()).first)
        todo.title = "b"
        try other.save()
        let again = try #require(try ModelContext(container).fetch(FetchDescriptor<LTodo>()).first)
        #expect(again.id == id)
        #expect(again.createdAt == Date(timeIntervalSince1970: 5))
        #expect(again.title == "b")
    }

    // MARK: `.ephemeral`

    @Test func ephemeralValuesAreTrackedButNeverPersisted() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = folder.file("todos.store")
        do {
            let container = try container(url)
            let context = ModelContext(container)
            let todo = LTodo(createdAt: .now, title: "write")
            todo.isSelected = true
            todo.draft = "half a sentence"
            context.insert(todo)
            try context.save()
            // Kept in memory across the save.
            #expect(todo.isSelected)
            #expect(todo.draft == "half a sentence")
            #expect(!context.hasChanges)

            // A change is tracked: the context has changes, observers hear of it.
            let heard = Observed()
            withObservationTracking { _ = todo.isSelected } onChange: { heard.fire() }
            todo.isSelected = false
            #expect(heard.fired)
            #expect(context.hasChanges)
            try context.save()
            #expect(!todo.isSelected)
            todo.isSelected = true
            try context.save()

            // Another context reads the stored row: the default.
            let other = try #require(try ModelContext(container).fetch(FetchDescriptor<LTodo>()).first)
            #expect(!other.isSelected)
            #expect(other.draft == nil)
        }
        let reopened = try #require(try ModelContext(try container(url)).fetch(FetchDescriptor<LTodo>()).first)
        #expect(reopened.title == "write")
        #expect(!reopened.isSelected)
        #expect(reopened.draft == nil)
        // Not in the document's bytes either.
        let bytes = try Data(contentsOf: url)
        #expect(bytes.range(of: Data("half a sentence".utf8)) == nil)
    }

    @Test func ephemeralChangesAloneWriteNoHistory() throws {
        let container = try ModelContainer(for: LTodo.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let todo = LTodo(createdAt: .now, title: "t")
        context.insert(todo)
        try context.save()
        let before = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).count
        todo.draft = "x"
        try context.save()
        #expect(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).count == before)
        #expect(todo.draft == "x")
    }

    @Test func ephemeralValuesNeverReachACustomStore() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = folder.file("todos.json")
        let container = try ModelContainer(
            for: Schema([LTodo.self]), configurations: [JSONStoreConfiguration(name: "todos", fileURL: file)])
        let context = ModelContext(container)
        let todo = LTodo(createdAt: .now, title: "plain title")
        todo.draft = "secret draft text"
        context.insert(todo)
        try context.save()
        todo.draft = "another secret draft"
        todo.title = "renamed title"
        try context.save()
        let json = try String(contentsOf: file, encoding: .utf8)
        #expect(json.contains("renamed title"))
        #expect(!json.contains("secret draft") && !json.contains("another secret"))
        #expect(todo.draft == "another secret draft")
    }
}
