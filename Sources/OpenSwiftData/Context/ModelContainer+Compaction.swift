import OpenSwiftDataStore

/// When saves compact a document on their own: once its journal is longer than
/// `ratio` × its snapshot and longer than `minimumJournalBytes`.
public typealias DocumentCompactionPolicy = OpenSwiftDataStore.Document.CompactionPolicy

extension ModelContainer {
    /// OpenSwiftData: rewrites the document as a fresh snapshot, dropping its
    /// journal and unreferenced blobs, and returns once it is done. Saves do this
    /// on their own, in the background, once the journal outgrows the snapshot
    /// (`documentCompactionPolicy`); call it to do it now. Does nothing in memory or over a custom store.
    public func compactDocument() throws {
        do {
            try engineStore?.compact()
        } catch {
            throw error.apiError
        }
    }

    /// OpenSwiftData: when saves compact the container's documents on their own.
    /// The default compacts once the journal outgrows the snapshot and 4 MiB.
    ///
    /// A save that passes the threshold starts the compaction on a background
    /// thread and returns: later saves keep appending to the journal and wait
    /// only for the compaction's last step, which copies the frames they appended
    /// into the new file and renames it over the document. The documents of a
    /// container with several configurations compact within the save instead.
    public var documentCompactionPolicy: DocumentCompactionPolicy {
        get { documents.first?.compactionPolicy ?? DocumentCompactionPolicy() }
        set { for document in documents { document.compactionPolicy = newValue } }
    }

    /// OpenSwiftData: blocks until no compaction of the container's documents runs
    /// in the background (closing a document waits for it as well).
    public func waitForDocumentCompaction() {
        for document in documents { document.waitForCompaction() }
    }

    /// OpenSwiftData: the store's and its document's view of other writers, in one
    /// line, for diagnosing a container that seems not to see another writer's
    /// saves. Not for applications: its wording may change.
    public var _followState: String {
        engineStore?._followState ?? "no engine store"
    }

    /// The writable documents the container's store records its saves in.
    private var documents: [Document] {
        switch engineStore?.persistence {
        case let document as Document: document.isReadOnly ? [] : [document]
        case let group as DocumentGroup: group.documents.filter { !$0.isReadOnly }
        default: []
        }
    }
}
