/// How far a save goes to survive a crash before it returns.
///
/// Every level survives a process crash: a torn last frame is dropped at the next
/// open. They differ on power loss or a kernel crash.
public enum Durability: String, Hashable, Sendable, CaseIterable {
    /// `fsync` after every save: a save that returned survives power loss. The default.
    case full
    /// No `fsync` on save; the system writes the journal back within its usual
    /// delay (seconds). Power loss can lose the last saves, never the document:
    /// compaction and blob writes still sync.
    case deferred
}
