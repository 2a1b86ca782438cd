/// How far a long document operation has come, for a tool that draws a progress
/// line (`osd`): called with what is done and the total, in the operation's unit —
/// bytes of the file for a read, rows for a compaction's snapshot.
///
/// It is called on the operation's thread, once per frame: keep it cheap. The
/// operations take it as a non-escaping argument whose default does nothing, so an
/// application's opens and saves pay nothing for it.
public typealias DocumentProgress = (_ done: Int, _ total: Int) -> Void
