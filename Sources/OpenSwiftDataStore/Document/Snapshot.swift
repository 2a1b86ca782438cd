import Foundation

/// The snapshot: a document's header, schema frame, column frames, index-order
/// frames and snapshot-end frame, written whole by compaction (and when a
/// document is created).
enum Snapshot {
    /// The snapshot of `version` as file bytes, in memory (see `write`).
    ///
    /// With `compressed: false` every frame is stored: the same bytes zstd would
    /// see, which the compaction benchmark compresses alone for its limit.
    static func encode(
        _ version: StoreVersion, identifier: UUID, compressed: Bool = true,
        external: (Data) throws(DocumentError) -> BlobReference
    ) throws(DocumentError) -> [UInt8] {
        let sink = SnapshotSink(file: nil)
        try write(version, identifier: identifier, compressed: compressed, to: sink, external: external)
        return sink.bytes
    }

    /// Writes the snapshot of `version` to `sink`, header first and then each frame
    /// in order as it is ready; `external` stores each large external-storage value
    /// and returns its reference (the names it returns are the blobs the snapshot
    /// keeps alive).
    ///
    /// Column and index-order frames are encoded and compressed by
    /// `compressionWorkers` threads (nil: one per core; 0: all on this thread)
    /// while this thread hands out the next ones and writes the finished ones, so
    /// encoding, compression and writing overlap and only a few frames are in
    /// memory at once. `progress` hears the rows written so far after each
    /// column frame.
    static func write(
        _ version: StoreVersion, identifier: UUID, schemaVersion: SchemaVersionStamp? = nil, compressed: Bool = true,
        formatMinor: Int = 0, compressionWorkers: Int? = nil, to sink: SnapshotSink,
        progress: DocumentProgress = { _, _ in },
        external: (Data) throws(DocumentError) -> BlobReference
    ) throws(DocumentError) {
        let rows = version.tables.reduce(0) { $0 + $1.count }
        let pipeline = FramePipeline(
            level: compressed ? Zstd.snapshotLevel : nil,
            workers: compressionWorkers ?? ProcessInfo.processInfo.activeProcessorCount, sink: sink)
        var reported = 0
        /// Tells `progress` the rows written since it last heard.
        func report() {
            guard pipeline.rowsWritten > reported else { return }
            reported = pipeline.rowsWritten
            progress(reported, rows)
        }
        do throws(DocumentError) {
            try sink.append(DocumentHeader(minor: formatMinor, generation: version.generation, schemaVersion: schemaVersion).encoded())
            try submitFrames(of: version, identifier: identifier, to: pipeline, report: report, external: external)
            try pipeline.finish { report() }
        } catch {
            pipeline.cancel()
            throw error
        }
    }

    private static func submitFrames(
        of version: StoreVersion, identifier: UUID, to pipeline: FramePipeline, report: () -> Void,
        external: (Data) throws(DocumentError) -> BlobReference
    ) throws(DocumentError) {
        let schema = version.schema
        var schemaWriter = ByteWriter()
        schemaWriter.schema(schema)
        try pipeline.submit([FramePipeline.Payload(kind: .schema, bytes: schemaWriter.bytes)])

        for (e, table) in version.tables.enumerated() {
            let entity = schema.entities[e]
            // Blobs are stored by `external` on this thread: an entity that may have
            // them is encoded here (its frames still compress on the workers).
            if entity.attributes.contains(where: \.isExternalStorage) {
                var payloads: [FramePipeline.Payload] = []
                try ColumnFrame.forEachChunk(of: table) { (chunk: [ColumnFrame.Place]) throws(DocumentError) in
                    try ColumnFrame.encode(chunk[...], of: table, entity: e, description: entity, external: external) {
                        payloads.append(.columns($0, rows: $1, cells: $2))
                    }
                    try pipeline.submit(payloads)
                    payloads.removeAll()
                    report()
                }
                continue
            }
            try ColumnFrame.forEachChunk(of: table) { (chunk: [ColumnFrame.Place]) throws(DocumentError) in
                try pipeline.submit { () throws(DocumentError) -> [FramePipeline.Payload] in
                    var payloads: [FramePipeline.Payload] = []
                    try ColumnFrame.encode(chunk[...], of: table, entity: e, description: entity, external: { _ throws(DocumentError) in
                        preconditionFailure("an entity without external storage stored a blob")
                    }) { payloads.append(.columns($0, rows: $1, cells: $2)) }
                    return payloads
                }
                report()
            }
        }

        // Each ordered index's rows in index order, so an open needs no sort.
        for (e, indexes) in version.orderedIndexes.enumerated() {
            for (i, index) in indexes.enumerated() {
                try pipeline.submit { () throws(DocumentError) -> [FramePipeline.Payload] in
                    var rows = ByteWriter(capacity: index.count * 3 + 16)
                    var count = 0
                    var previous: Int64 = 0
                    index.scan { entry in
                        rows.signed(entry.row.rawValue - previous)
                        previous = entry.row.rawValue
                        count += 1
                        return true
                    }
                    var order = ByteWriter(capacity: rows.bytes.count + 16)
                    order.varint(e)
                    order.varint(i)
                    order.varint(count)
                    order.raw(rows.bytes)
                    return [FramePipeline.Payload(kind: .indexOrder, bytes: order.bytes)]
                }
            }
        }

        // (Format 4.) History, in frames of about `bytesPerFrame` each.
        let history = version.history
        if !history.isEmpty || history.horizon > 0 {
            var body = ByteWriter()
            var count = 0
            var failure: DocumentError?
            func flush() {
                var frame = ByteWriter(capacity: body.bytes.count + 16)
                frame.varint(history.horizon)
                frame.varint(count)
                frame.raw(body.bytes)
                do throws(DocumentError) {
                    try pipeline.submit([FramePipeline.Payload(kind: .history, bytes: frame.bytes)])
                } catch {
                    failure = failure ?? error
                }
                body = ByteWriter()
                count = 0
            }
            history.forEach(after: nil) { transaction in
                body.transaction(transaction)
                count += 1
                if body.bytes.count >= DocumentFormat.bytesPerFrame { flush() }
                return failure == nil
            }
            if failure == nil, count > 0 || history.isEmpty { flush() }
            if let failure { throw failure }
        }

        var end = ByteWriter()
        end.varint(version.tables.count)
        for table in version.tables {
            end.varint(table.count)
            end.signed(table.nextRawID)
        }
        end.varint(version.generation)
        // (Format 3.) Kept by every snapshot of the document, so the identifiers
        // of its models outlive the process.
        withUnsafeBytes(of: identifier.uuid) { end.raw($0) }
        try pipeline.submit([FramePipeline.Payload(kind: .snapshotEnd, bytes: end.bytes)])
    }
}

/// Where a snapshot's bytes go, in order: memory, or a file written from offset 0
/// and synced (`fdatasync`) every `writeBack` bytes.
///
/// Written back a few MiB at a time: one fsync of a whole large snapshot holds up
/// the journal's fsyncs behind it on most file systems, and a background
/// compaction's saves are waiting on theirs. With `syncsAside` those syncs run on
/// a thread of their own while the writing goes on (at most one at a time; one
/// asked for while another runs is left to the next): a compaction on demand
/// spent 150–330 ms of its 0.5–0.7 s waiting in them (W9, N = 1,000,000, on a
/// disk other processes were syncing to), and its workers ran out of room.
/// `finish` waits for them and reports their failure. Appended to by one thread
/// at a time.
final class SnapshotSink: @unchecked Sendable {
    private let file: DocumentFile?
    private let writeBack: Int
    /// What was appended, without a file.
    private(set) var bytes: [UInt8] = []
    /// How many bytes were appended.
    private(set) var length = 0
    private var unsynced = 0
    private let syncer: DispatchQueue?
    private let syncs = DispatchGroup()
    /// Whether a sync aside runs, and the first that failed.
    private let aside = Locked<(running: Bool, failure: DocumentError?)>((false, nil))

    init(file: DocumentFile?, writeBack: Int = 4 << 20, syncsAside: Bool = false) {
        self.file = file
        self.writeBack = writeBack
        syncer = syncsAside && file != nil ? DispatchQueue(label: "OpenSwiftData.snapshot.sync") : nil
    }

    func append(_ chunk: [UInt8]) throws(DocumentError) {
        guard let file else {
            bytes += chunk
            length += chunk.count
            return
        }
        try file.write(chunk, at: length)
        length += chunk.count
        unsynced += chunk.count
        guard unsynced >= writeBack else { return }
        unsynced = 0
        guard let syncer else { return try file.syncData() }
        let starts = try aside.withLock { (state) throws(DocumentError) -> Bool in
            if let failure = state.failure { throw failure }
            if state.running { return false }
            state.running = true
            return true
        }
        guard starts else { return }
        syncer.async(group: syncs) { [self] in
            do throws(DocumentError) {
                try self.file?.syncData()
                aside.withLock { $0.running = false }
            } catch {
                aside.withLock { $0 = (false, $0.failure ?? error) }
            }
        }
    }

    /// Waits for the syncs aside; throws the first that failed.
    func finish() throws(DocumentError) {
        syncs.wait()
        if let failure = aside.withLock({ $0.failure }) { throw failure }
    }
}

/// A snapshot's frames, encoded and compressed by up to `workers` threads and
/// written to the sink in submission order by the submitting thread.
///
/// A job (one column chunk, one index order, or payloads encoded already) goes to
/// a queue; at most `workers` loops on a concurrent dispatch queue take jobs from
/// it, each reusing one zstd context. The submitting thread writes finished jobs
/// in order between submissions, and waits for the oldest when `limit` jobs are
/// unwritten, which bounds memory to a few frames per worker. With `workers` 0
/// each job runs on the submitting thread when submitted (a background compaction
/// on a small machine: no other core taken from the saves).
final class FramePipeline: @unchecked Sendable {
    /// One frame's payload before compression.
    struct Payload: Sendable {
        var kind: FrameKind
        var bytes: [UInt8]
        /// What a reader spends decoding it, when more than its size (`Frame.encode`).
        var decoded = 0
        /// The rows it holds (progress).
        var rows = 0

        /// A columns frame's payload, of `rows` rows and `cells` cells.
        static func columns(_ bytes: [UInt8], rows: Int, cells: Int) -> Payload {
            Payload(kind: .columns, bytes: bytes, decoded: cells * DocumentFormat.bytesPerDecodedCell, rows: rows)
        }
    }

    typealias Job = @Sendable () throws(DocumentError) -> [Payload]

    /// A job's frames, compressed.
    private struct Done {
        var frames: [[UInt8]]
        var rows: Int
    }

    private let level: Int32?
    private let workers: Int
    /// Jobs submitted and not yet written, at most: enough that the workers keep
    /// busy while the writer syncs (4 MiB takes about as long as compressing 8
    /// frames), few enough that the snapshot is never whole in memory.
    private let limit: Int
    private let queue = DispatchQueue(label: "OpenSwiftData.snapshot.frames", attributes: .concurrent)
    private let loops = DispatchGroup()

    // Shared with the workers, under `condition`.
    private let condition = NSCondition()
    private var queued: [(index: Int, job: Job)] = []
    private var finished: [Int: Result<Done, DocumentError>] = [:]
    private var running = 0
    private var cancelled = false
    /// Contexts of workers that ended, for the next ones.
    private var contexts: [Zstd.Context] = []

    // The submitting thread's alone.
    private let sink: SnapshotSink
    private var submitted = 0
    private var written = 0
    /// The rows of the frames written so far.
    private(set) var rowsWritten = 0
    private var inlineContext: Zstd.Context?

    init(level: Int32?, workers: Int, sink: SnapshotSink) {
        self.level = level
        self.workers = max(0, workers)
        self.limit = 8 * max(1, workers)
        self.sink = sink
    }

    /// Queues `payloads`, encoded already, to be compressed and written next.
    func submit(_ payloads: [Payload]) throws(DocumentError) {
        try submit { () throws(DocumentError) -> [Payload] in payloads }
    }

    /// Queues `job`, whose payloads are compressed and written after those of every
    /// job submitted before it.
    func submit(_ job: @escaping Job) throws(DocumentError) {
        if workers == 0 {
            if inlineContext == nil, level != nil { inlineContext = Zstd.Context() }
            try write(Self.run(job, level: level, context: inlineContext).get())
            return
        }
        while submitted - written >= limit { try writeNext() }
        condition.lock()
        queued.append((submitted, job))
        let starts = running < workers
        if starts { running += 1 }
        condition.unlock()
        submitted += 1
        if starts {
            queue.async(group: loops) { [self] in work() }
        }
        // Whatever is finished goes to the file now, while the workers go on.
        while written < submitted, isFinished(written) { try writeNext() }
    }

    /// Writes every job's frames, calling `written` after each; throws the first failure.
    func finish(written wrote: () -> Void) throws(DocumentError) {
        while written < submitted {
            try writeNext()
            wrote()
        }
    }

    /// Drops the jobs not started and waits for the running ones (after a failure).
    func cancel() {
        condition.lock()
        cancelled = true
        queued.removeAll()
        condition.unlock()
        loops.wait()
    }

    private func isFinished(_ index: Int) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return finished[index] != nil
    }

    /// Waits for the oldest unwritten job, then writes its frames.
    private func writeNext() throws(DocumentError) {
        condition.lock()
        while finished[written] == nil { condition.wait() }
        let result = finished.removeValue(forKey: written)!
        condition.unlock()
        written += 1
        try write(result.get())
    }

    private func write(_ done: Done) throws(DocumentError) {
        for frame in done.frames { try sink.append(frame) }
        rowsWritten += done.rows
    }

    /// A worker: runs queued jobs until none is left.
    private func work() {
        condition.lock()
        let context = level == nil ? nil : contexts.popLast() ?? Zstd.Context()
        while !cancelled, !queued.isEmpty {
            let (index, job) = queued.removeFirst()
            condition.unlock()
            let result = Self.run(job, level: level, context: context)
            condition.lock()
            finished[index] = result
            condition.broadcast()
        }
        running -= 1
        if let context { contexts.append(context) }
        condition.unlock()
    }

    private static func run(_ job: Job, level: Int32?, context: Zstd.Context?) -> Result<Done, DocumentError> {
        do throws(DocumentError) {
            var done = Done(frames: [], rows: 0)
            for payload in try job() {
                done.frames.append(try Frame.encode(
                    kind: payload.kind, payload: payload.bytes, level: level, decoded: payload.decoded, context: context))
                done.rows += payload.rows
            }
            return .success(done)
        } catch {
            return .failure(error)
        }
    }
}
