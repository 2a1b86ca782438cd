import Foundation
import SwiftData

/// A store the model-based test runs against: how to open a container over it, and
/// which operations it supports.
public struct GraphStore: Sendable, CustomStringConvertible {
    /// Where one run keeps its models, and how to open containers there.
    public struct Place: Sendable {
        /// A container over the run's models; called again for every reopen.
        public var open: @Sendable () throws -> ModelContainer
        /// A container of the smaller schema (no notes) over the graph's document,
        /// for stores with documents; nil where the operation is skipped.
        public var openSmaller: (@Sendable () throws -> ModelContainer)?
        /// The document holding the graph, which `osd verify`'s relationship check
        /// reads after the run; nil for stores without one.
        public var documentPath: String?

        public init(
            open: @escaping @Sendable () throws -> ModelContainer, openSmaller: (@Sendable () throws -> ModelContainer)? = nil,
            documentPath: String? = nil
        ) {
            self.open = open
            self.openSmaller = openSmaller
            self.documentPath = documentPath
        }
    }

    public let name: String
    /// Makes a new, empty place for one run; `folder` is the run's own, removed after it.
    public let makePlace: @Sendable (_ folder: URL) throws -> Place
    /// Whether models survive closing the container (reopen is run).
    public var persists = true
    /// Whether `compactDocument()` rewrites something (compaction is run).
    public var compacts = false
    /// Whether the store keeps unique constraints (upserts are run).
    public var keepsUniqueConstraints = true

    public init(name: String, makePlace: @escaping @Sendable (_ folder: URL) throws -> Place) {
        self.name = name
        self.makePlace = makePlace
    }

    public var description: String { name }

    /// The built-in store with one document.
    public static let document: GraphStore = {
        var store = GraphStore(name: "document") { folder in
            let url = folder.appendingPathComponent("graph.store")
            return Place(
                open: { try ModelContainer(for: modelBasedSchema, configurations: ModelConfiguration(url: url)) },
                openSmaller: { try ModelContainer(for: modelBasedGraphSchema, configurations: ModelConfiguration(url: url)) },
                documentPath: url.path)
        }
        store.compacts = true
        return store
    }()

    /// The built-in store with notes in a second configuration and file of their own.
    public static let twoFiles: GraphStore = {
        var store = GraphStore(name: "twoFiles") { folder in
            let url = folder.appendingPathComponent("graph.store")
            let notes = folder.appendingPathComponent("notes.store")
            return Place(
                open: {
                    try ModelContainer(
                        for: modelBasedSchema, configurations: ModelConfiguration("graph", schema: modelBasedGraphSchema, url: url),
                        ModelConfiguration("notes", schema: Schema([MBNote.self]), url: notes))
                },
                openSmaller: { try ModelContainer(for: modelBasedGraphSchema, configurations: ModelConfiguration(url: url)) },
                documentPath: url.path)
        }
        store.compacts = true
        return store
    }()

    /// The built-in store in memory only.
    public static let inMemory: GraphStore = {
        var store = GraphStore(name: "inMemory") { _ in
            Place(open: { try ModelContainer(for: modelBasedSchema, configurations: ModelConfiguration(isStoredInMemoryOnly: true)) })
        }
        store.persists = false
        return store
    }()
}
