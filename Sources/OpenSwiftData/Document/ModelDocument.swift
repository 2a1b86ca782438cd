import Foundation
import OpenSwiftDataStore

/// OpenSwiftData: a document a tool opens, edits and saves when the user says so
/// — the Linux counterpart of a document-based SwiftData app.
///
/// Unlike a container with `ModelConfiguration(url:)`, where every `save()` of a
/// context is written to the file, a document keeps a working copy in memory:
/// context saves change the copy, `save()` writes it to the file (a fresh
/// snapshot, crash-safe), `revertToSaved()` throws the unsaved work away. The
/// document holds the file alone from `init` until `close()`: a save writes its
/// working copy over the file, so no other writer may share it
/// (`DocumentError.locked`, both ways).
///
/// Not `Sendable`: use a document from one isolation domain, like its context.
public final class ModelDocument {
    /// Where the document is saved; `save(as:)` changes it.
    public private(set) var url: URL
    /// The models the document holds.
    public let schema: Schema
    /// The working copy's container; its contexts see the unsaved work.
    public private(set) var container: ModelContainer
    /// The context to edit the document with, with an `UndoManager`.
    /// `revertToSaved()` replaces it.
    public private(set) var mainContext: ModelContext

    private var file: Document?
    private var savedGeneration: UInt64

    /// Opens the document at `url`, or creates an empty one there.
    ///
    /// Throws `DocumentError` when the file is damaged, has another schema, or is
    /// open for writing elsewhere.
    public convenience init(for types: any PersistentModel.Type..., contentsOf url: URL) throws {
        try self.init(for: Schema(types), contentsOf: url)
    }

    /// Opens the document at `url` with the entities of `schema`, or creates an empty one.
    public init(for schema: Schema, contentsOf url: URL) throws {
        self.url = url
        self.schema = schema
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let (document, version) = try Document.open(
            path: url.path, schema: schema.storeSchema, migrating: schema.migrationHints, exclusive: true)
        self.file = document
        self.savedGeneration = version.generation
        (self.container, self.mainContext) = try Self.workingCopy(schema: schema, version: version, of: document)
    }

    deinit { file?.close() }

    /// A container in memory over `version`, with the document's store identifier:
    /// its models' identifiers stay valid when the document is opened again.
    private static func workingCopy(schema: Schema, version: StoreVersion, of document: Document) throws -> (ModelContainer, ModelContext) {
        let container = try ModelContainer(
            for: schema, migrationPlan: nil, configurations: [ModelConfiguration(isStoredInMemoryOnly: true)],
            store: Store(schema: schema.storeSchema, version: version), identifier: document.storeIdentifier)
        // Documents undo, as document-based SwiftData apps do.
        let context = ModelContext(container)
        context.undoManager = UndoManager()
        return (container, context)
    }

    /// Whether the working copy differs from the file: unsaved context changes, or
    /// context saves since the document was last saved.
    public var hasUnsavedChanges: Bool {
        mainContext.hasChanges || container.store.current.generation != savedGeneration
    }

    /// Saves the main context, then writes the working copy to `url`.
    /// - Complexity: O(rows): the file is rewritten as one snapshot.
    public func save() throws {
        guard let file else { throw DocumentError.closed(path: url.path) }
        try mainContext.save()
        let version = container.store.current
        try file.compact(version)
        savedGeneration = version.generation
    }

    /// Saves the main context, writes the working copy to `newURL` with its blobs,
    /// and continues as that document; the old file stays as it was last saved.
    public func save(as newURL: URL) throws {
        guard file != nil else { throw DocumentError.closed(path: url.path) }
        try mainContext.save()
        let version = container.store.current
        try FileManager.default.createDirectory(at: newURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        // The copy keeps the store identifier: the working copy's models go on.
        try Document.write(version, to: newURL.path, identifier: file?.storeIdentifier, schemaVersion: file?.schemaVersion)
        // (With the hints the first open had: the entities it carries open again.)
        let (document, _) = try Document.open(
            path: newURL.path, schema: schema.storeSchema, migrating: schema.migrationHints, exclusive: true)
        file?.close()
        file = document
        url = newURL
        savedGeneration = version.generation
    }

    /// Throws away every change since the last save, reading the document back.
    /// The main context is replaced: models fetched before belong to the old one.
    public func revertToSaved() throws {
        guard let file else { throw DocumentError.closed(path: url.path) }
        let contents = try DocumentReader.read(path: file.path, expected: schema.storeSchema, migrating: schema.migrationHints)
        (container, mainContext) = try Self.workingCopy(schema: schema, version: contents.version, of: file)
        savedGeneration = contents.version.generation
    }

    /// Releases the file and its lock; unsaved work is dropped. Later saves throw.
    public func close() {
        file?.close()
        file = nil
    }
}
