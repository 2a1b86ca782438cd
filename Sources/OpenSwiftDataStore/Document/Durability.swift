/// How far a save goes to survive a crash before it returns.
///
/// Every level survives a process crash: a torn last frame is dropped at the next
/// open. They differ on power loss or a kernel crash.
public enum Durability: String, Hashable, Sendable, CaseIterable {
    /// `fsync` after every save: a save that returned survives power loss. The default.
    case full
    /// No `fsync` on save; the system writes the journal back within its usual
    /// delay (seconds). Power loss can lose the last saves, and if the system wrote
    /// later journal pages before earlier ones, the next open reports the journal
    /// damaged rather than guess. Snapshots (compaction) and blobs are still synced.
    case deferred
}
