import Foundation

/// Where a store's commits are recorded before they are published: one document
/// (`Document`), or several that share its entities (`DocumentGroup`).
///
/// The store calls every method from its serial commit path, except
/// `hasOtherSaves`, which a fetch asks on any thread.
public protocol StorePersistence: AnyObject, Sendable {
    /// Records `record`, a commit of a store of `schema`. When it throws, nothing of
    /// the commit is recorded. Returns what to wait for before the commit is
    /// durable as the durability says (`waitUntilDurable`), or nil when it is
    /// already (group commit, `Document+GroupCommit.swift`).
    func append(_ record: CommitRecord, schema: StoreSchema) throws(DocumentError) -> Document.PendingSync?
    /// Blocks until the record `append` returned `pending` for is durable; called
    /// outside the commit path, so other commits append meanwhile.
    func waitUntilDurable(_ pending: Document.PendingSync) throws(DocumentError)
    /// Whether the record `append` returned `pending` for is durable now.
    func isDurable(_ pending: Document.PendingSync) -> Bool
    /// Rewrites what has grown enough since its last snapshot as a snapshot of
    /// `version` (the version just recorded, in the turn, before its fsync). A
    /// failure is noted, not thrown: the journal still holds every save, and the next
    /// try waits for more growth. A `Document` does it in the background
    /// (`Document.compactInBackground`; a compaction whose version a failed fsync
    /// covered is called off, as saves stop), so the save returns at once; a group's
    /// documents compact before it returns.
    func compactIfWanted(_ version: StoreVersion)
    /// Rewrites everything as a snapshot of `version` now.
    func compact(_ version: StoreVersion) throws(DocumentError)
    /// Rewrites everything as `emptied` (`Store.removeAll`); when it throws, what is
    /// recorded still holds `old`.
    func empty(to emptied: StoreVersion, from old: StoreVersion) throws(DocumentError)
    /// Deletes the files and their blobs; later appends throw `DocumentError.closed`.
    func erase() throws(DocumentError)
    /// Counts compactions, and a recovery the open made, in `metrics` from now on.
    func attach(_ metrics: StoreMetrics)

    // Sharing (`Document+Sharing.swift`): a persistence other writers append to too.

    /// Whether other writers may record saves the store must take
    /// (`takeOtherSaves`); fixed once the store has it.
    var followsOtherWriters: Bool { get }
    /// Whether `takeOtherSaves` has anything: cheap, asked before every fetch.
    var hasOtherSaves: Bool { get }
    /// The saves other writers recorded that the store has not applied.
    func takeOtherSaves() -> OtherSaves?
    /// Takes the writer's turn: until `endTurn`, no other writer records anything,
    /// and `takeOtherSaves` gives everything they recorded before it.
    func beginTurn() throws(DocumentError)
    func endTurn()
    /// Waits until no work of the persistence's own runs in the background (a
    /// compaction, whose last step needs a turn) and every record appended is
    /// durable: before a turn that compacts, empties or erases.
    func settle()
}

extension StorePersistence {
    public var followsOtherWriters: Bool { false }
    public var hasOtherSaves: Bool { false }
    public func takeOtherSaves() -> OtherSaves? { nil }
    public func beginTurn() throws(DocumentError) {}
    public func endTurn() {}
    public func waitUntilDurable(_ pending: Document.PendingSync) throws(DocumentError) {}
    public func isDurable(_ pending: Document.PendingSync) -> Bool { true }
    public func settle() {}
}

extension Document: StorePersistence {
    /// One file: its compaction is all or nothing already.
    public func empty(to emptied: StoreVersion, from old: StoreVersion) throws(DocumentError) {
        try compact(emptied)
    }

    public func compactIfWanted(_ version: StoreVersion) {
        compactInBackground(version)
    }

    public func settle() {
        waitForCompaction()
        syncPending()
    }
}
