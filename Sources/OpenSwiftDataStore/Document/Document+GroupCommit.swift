import Foundation

/// Group commit: the saves of a process share fsyncs.
///
/// With durability `.full`, `append` writes a save's frame in its turn and returns
/// at once with a `PendingSync`; the store leaves its commit path, so the next save
/// appends while this one waits in `waitUntilDurable` for the first fsync that
/// begins after its frame was written. One waiter at a time leads: it fsyncs the
/// file as far as the frames reach at that moment, and every save whose frame ends
/// there or before is acknowledged by that one fsync. The others wait for it; one
/// of those it did not cover leads the next. A save thus waits for at most two
/// fsyncs, and under load one fsync acknowledges every save that appended while
/// the one before it ran.
///
/// Order holds without more: a frame follows every frame its version builds on, and
/// an fsync covers the whole file up to where it began, so no acknowledged frame
/// ever follows one that may be lost. A crash loses only saves that had not
/// returned. Frames a compaction copied into its new file were synced there before
/// the rename (`replaceFile`), so a replaced file's frames are durable once the
/// folder is (which the leader syncs before it counts on it). An fsync that fails
/// fails every save waiting for it, those appended while it ran too, and stops
/// saves until the document is opened again (`broken`, as for a single save:
/// after a failed fsync nothing written through the file is trusted); their
/// frames are cut off again when they still end the file and no other writer's
/// frame is among them.
///
/// Locks: `syncCondition` guards who leads and each file's `syncedEnd` and
/// `syncFailure`; it is never held while `lock` is taken or an fsync runs, and is
/// taken after `lock` by a compaction that marks the file it replaced.
extension Document {
    /// A save's frame written and not yet known durable: what `waitUntilDurable`
    /// waits for.
    public struct PendingSync {
        let file: DocumentFile
        /// Where the frame ends in `file`.
        let end: Int
    }

    /// Where this process's frames not known durable begin (`append` with `.full`),
    /// and what a failed fsync needs to cut them off again.
    struct UnsyncedFrames {
        var start: Int
        /// The generation before the first of them.
        var generation: UInt64
        /// Each one's end, and the generation it records.
        var ends: [(end: Int, generation: UInt64)] = []
        /// Whether another writer's frame came after the first of them: then a failed
        /// fsync leaves them (the other writer's frame may be acknowledged).
        var interleaved = false
    }

    /// Blocks until `pending`'s frame is durable, leading an fsync when none runs.
    /// Throws when it cannot be: the error of the fsync (or folder sync) that failed,
    /// for this frame and every frame waiting with it, or that the frame is no longer
    /// in the file, or `.closed`; saves stop then.
    public func waitUntilDurable(_ pending: PendingSync) throws(DocumentError) {
        let target = pending.file
        syncCondition.lock()
        defer { syncCondition.unlock() }
        while target.syncedEnd < pending.end {
            if let failure = target.syncFailure { throw failure }
            if syncing {
                syncCondition.wait()
                continue
            }
            syncing = true
            syncCondition.unlock()
            let outcome = leadSync(of: target, needing: pending.end)
            syncCondition.lock()
            syncing = false
            switch outcome {
            case let .success(end):
                target.syncedEnd = max(target.syncedEnd, end)
                // (`.max`: a compaction's fsync covered it.)
                if end != .max { journalSyncCount += 1 }
                syncCondition.broadcast()
            case let .failure(error):
                if target.syncFailure == nil { target.syncFailure = error }
                syncCondition.broadcast()
            }
        }
    }

    /// Called on the leading save's thread before each group commit fsync, before
    /// it looks how far the frames reach: the tests' seam for saving meanwhile. Not
    /// for applications.
    public var _syncWillBegin: (@Sendable () -> Void)? {
        get { lock.withLock { syncWillBegin } }
        set { lock.withLock { syncWillBegin = newValue } }
    }

    /// Whether `pending`'s frame is known durable now.
    public func isDurable(_ pending: PendingSync) -> Bool {
        syncCondition.withLock { pending.file.syncedEnd >= pending.end }
    }

    /// How many fsyncs made saves durable since the document opened: fewer than the
    /// saves when saves overlap (group commit).
    public var journalSyncs: Int {
        syncCondition.withLock { journalSyncCount }
    }

    /// Makes every frame appended so far durable, when some are not: before the
    /// document closes or is emptied, and before a compaction on demand. A failure
    /// is the waiting saves' to throw.
    func syncPending() {
        let target = lock.withLock { () -> PendingSync? in
            guard unsynced != nil, let file else { return nil }
            return PendingSync(file: file, end: length)
        }
        if let target { try? waitUntilDurable(target) }
    }

    /// One fsync of `target` as far as the frames reach now; returns that end
    /// (`Int.max` when a compaction replaced the file, which synced its frames).
    private func leadSync(of target: DocumentFile, needing needed: Int) -> Result<Int, DocumentError> {
        if let hook = lock.withLock({ syncWillBegin }) { hook() }
        lock.lock()
        guard target === file else {
            defer { lock.unlock() }
            guard file != nil else { return .failure(.closed(path: path)) }
            // The compaction that replaced it (this process's or another writer's)
            // synced the frames it copied; the rename is durable once the folder is,
            // which another writer may not have synced yet: synced here, every time
            // (rare, and cheap).
            do throws(DocumentError) {
                try DocumentFile.syncDirectory(Self.directory(of: path))
            } catch {
                // (Its saves throw; the new file may hold them: saves stop.)
                stopAfterFailedSync(error)
                return .failure(error)
            }
            directoryNeedsSync = false
            return .success(.max)
        }
        // The file ends before the frame: it was cut off (nothing in this process cuts
        // a frame that waits), and no fsync will cover it.
        guard length >= needed else {
            let error = DocumentError.io(operation: "syncing a frame no longer in the file", path: path, errno: EIO)
            stopAfterFailedSync(error)
            lock.unlock()
            return .failure(error)
        }
        let end = length
        let descriptor: DocumentFile
        do throws(DocumentError) {
            // (Its own descriptor: a compaction may close the document's meanwhile.)
            descriptor = try target.duplicate()
        } catch {
            lock.unlock()
            syncFailed(target, error)
            return .failure(error)
        }
        lock.unlock()
        defer {
            // A compaction may have replaced the file meanwhile and closed its own
            // descriptor: then this one is the file's last, and closing it frees the
            // file's blocks (10 to 20 ms for a 45 MB document), which no save waits for.
            if lock.withLock({ target === file }) { descriptor.close() } else { descriptor.closeInBackground() }
        }
        do throws(DocumentError) {
            try descriptor.sync()
        } catch {
            syncFailed(target, error)
            return .failure(error)
        }
        let metrics = lock.withLock { () -> StoreMetrics? in
            shrinkUnsynced(after: target, syncedTo: end)
            return self.metrics
        }
        metrics?.journalSynced()
        return .success(end)
    }

    /// What a failed fsync would cut, once an fsync of `target` covered the frames
    /// up to `end`. With `lock` held.
    private func shrinkUnsynced(after target: DocumentFile, syncedTo end: Int) {
        guard target === file, let frames = unsynced else { return }
        if end >= length {
            unsynced = nil
        } else if let covered = frames.ends.lastIndex(where: { $0.end <= end }) {
            // Frames appended during the fsync: what a later failure would cut
            // begins after the ones it covered.
            unsynced?.start = frames.ends[covered].end
            unsynced?.generation = frames.ends[covered].generation
            unsynced?.ends.removeFirst(covered + 1)
        }
    }

    /// After a failed fsync of `target`: saves stop (the PostgreSQL lesson that
    /// `append` names), a shared document stops following (what the store holds is
    /// no longer what the file holds), and the frames not known durable are cut off
    /// again when they are the file's last and no other writer's frame is among
    /// them. The cut may not be durable either, so a frame may come back; its blobs
    /// stay (compaction collects them).
    private func syncFailed(_ target: DocumentFile, _ error: DocumentError) {
        let frames = lock.withLock { () -> UnsyncedFrames? in
            stopAfterFailedSync(error)
            guard target === file, let frames = unsynced else { return nil }
            unsynced = nil
            // A compaction begun from a version this fsync would have acknowledged is
            // not the file's.
            running = nil
            return frames
        }
        guard let frames, !frames.interleaved else { return }
        retract(frames, of: target)
    }

    /// Stops saves, and a shared document's following, after a sync that failed its
    /// saves: the store drops what they made (and what it took from other writers
    /// meanwhile), so it no longer holds what the file holds. With `lock` held.
    private func stopAfterFailedSync(_ error: DocumentError) {
        if broken == nil { broken = error }
        if following != nil, followFailure == nil {
            followFailure = error
            refreshLook(examined: nil)
        }
    }

    /// Cuts `frames` off `target` in a turn, when they still end the file.
    private func retract(_ frames: UnsyncedFrames, of target: DocumentFile) {
        if isShared {
            turnLock.lock()
            guard (try? target.lockForTurn(patience: DocumentFile.turnPatience)) != nil else {
                turnLock.unlock()
                return
            }
        }
        lock.lock()
        defer {
            if isShared { target.unlock() }
            lock.unlock()
            if isShared { turnLock.unlock() }
        }
        guard target === file, target.status?.size == length else { return }
        do throws(DocumentError) {
            try target.truncate(to: frames.start)
            length = frames.start
            generation = frames.generation
            _journalFrames -= frames.ends.count
            lastAppend = nil
            if following != nil {
                try rememberTail(of: target)
                refreshLook(examined: target.status)
            }
        } catch {
            // (Saves have stopped already; a reopen reads what the file holds.)
        }
    }
}

extension Document {
    /// What the document knows of its file and of other writers, in one line: the
    /// tests' and probes' view when a follower seems stuck. Not for applications.
    public var _followState: String {
        let (mine, descriptor) = lock.withLock { () -> (String, Int32) in
            let status = file?.status
            let state = "length \(length), generation \(generation), file size \(status.map { "\($0.size)" } ?? "—"), "
                + "links \(status.map { "\($0.links)" } ?? "—"), pending \(pending == nil ? "none" : "some"), "
                + "follow failure \(followFailure.map { "\($0)" } ?? "none"), broken \(broken.map { "\($0)" } ?? "no"), "
                + "unsynced \(unsynced == nil ? "none" : "some")"
            return (state, file?.descriptor ?? -1)
        }
        let seen = lookLock.withLock {
            "look: descriptor \(self.look.descriptor) (file's \(descriptor)), size \(self.look.size), "
                + "active \(self.look.active), waiting \(self.look.waiting)"
        }
        return mine + "; " + seen + "; has other saves \(hasOtherSaves)"
    }
}
