import Foundation

/// The snapshot: a document's header, schema frame, column frames, index-order
/// frames and snapshot-end frame, written whole by compaction (and when a
/// document is created).
enum Snapshot {
    /// The snapshot of `version` as file bytes; `external` stores each large
    /// external-storage value and returns its reference (the names it returns are
    /// the blobs the snapshot keeps alive).
    ///
    /// With `compressed: false` every frame is stored: the same bytes zstd would
    /// see, which the compaction benchmark compresses alone for its limit.
    /// `compressionWorkers` bounds how many frames compress on other threads at
    /// once (0: each on this thread; nil: the default of `FrameCompressor`).
    /// `progress` hears the rows encoded so far after each column frame.
    static func encode(
        _ version: StoreVersion, identifier: UUID, schemaVersion: SchemaVersionStamp? = nil, compressed: Bool = true,
        formatMinor: Int = 0, compressionWorkers: Int? = nil, progress: DocumentProgress = { _, _ in },
        external: (Data) throws(DocumentError) -> BlobReference
    ) throws(DocumentError) -> [UInt8] {
        let level: Int32? = compressed ? Zstd.snapshotLevel : nil
        let schema = version.schema
        // Payloads are encoded in order on this thread and compressed on the others
        // meanwhile, a few at a time, so encoding and compression overlap.
        let pending = compressionWorkers.map { FrameCompressor(level: level, inFlight: $0) } ?? FrameCompressor(level: level)
        var schemaWriter = ByteWriter()
        schemaWriter.schema(schema)
        pending.submit(.schema, schemaWriter.bytes)

        let rows = version.tables.reduce(0) { $0 + $1.count }
        var encoded = 0
        for (e, table) in version.tables.enumerated() {
            try ColumnFrame.encode(table, entity: e, of: schema.entities[e], external: external) { payload, frameRows, cells in
                pending.submit(.columns, payload, decoded: cells * DocumentFormat.bytesPerDecodedCell)
                encoded += frameRows
                progress(encoded, rows)
            }
        }

        // Each ordered index's rows in index order, so an open needs no sort.
        for (e, indexes) in version.orderedIndexes.enumerated() {
            for (i, index) in indexes.enumerated() {
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
                pending.submit(.indexOrder, order.bytes)
            }
        }

        // (Format 4.) History, in frames of about `bytesPerFrame` each.
        let history = version.history
        if !history.isEmpty || history.horizon > 0 {
            var body = ByteWriter()
            var count = 0
            func flush() {
                var frame = ByteWriter(capacity: body.bytes.count + 16)
                frame.varint(history.horizon)
                frame.varint(count)
                frame.raw(body.bytes)
                pending.submit(.history, frame.bytes)
                body = ByteWriter()
                count = 0
            }
            history.forEach(after: nil) { transaction in
                body.transaction(transaction)
                count += 1
                if body.bytes.count >= DocumentFormat.bytesPerFrame { flush() }
                return true
            }
            if count > 0 || history.isEmpty { flush() }
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
        pending.submit(.snapshotEnd, end.bytes)
        return try pending.file(header: DocumentHeader(
            minor: formatMinor, generation: version.generation, schemaVersion: schemaVersion))
    }
}

/// Compresses frames on a concurrent queue while the snapshot goes on encoding,
/// keeping at most `inFlight` payloads waiting, and puts them back in order.
/// With `inFlight` 0 each frame is compressed on the submitting thread.
final class FrameCompressor: @unchecked Sendable {
    private let level: Int32?
    private let queue = DispatchQueue(label: "OpenSwiftData.snapshot.compression", attributes: .concurrent)
    private let group = DispatchGroup()
    private let slots: DispatchSemaphore
    private let frames = Locked<[[UInt8]]>([])
    private let failure = Locked<DocumentError?>(nil)
    /// Submitted so far; only the encoding thread touches it.
    private var submitted = 0

    init(level: Int32?, inFlight: Int = 2 * ProcessInfo.processInfo.activeProcessorCount) {
        self.level = level
        self.inline = inFlight <= 0
        self.slots = DispatchSemaphore(value: max(inFlight, 1))
    }

    /// Whether frames are compressed on the submitting thread.
    private let inline: Bool

    /// `payload` compressed into slot `index`, or the first failure noted.
    private func compress(_ kind: FrameKind, _ payload: [UInt8], decoded: Int, into index: Int) {
        do throws(DocumentError) {
            let frame = try Frame.encode(kind: kind, payload: payload, level: level, decoded: decoded)
            frames.withLock { $0[index] = frame }
        } catch {
            failure.withLock { $0 = $0 ?? error }
        }
    }

    /// Queues `payload` as the next frame; waits while `inFlight` are queued (or,
    /// inline, compresses it at once).
    func submit(_ kind: FrameKind, _ payload: [UInt8], decoded: Int = 0) {
        let index = submitted
        submitted += 1
        frames.withLock { $0.append([]) }
        if inline {
            compress(kind, payload, decoded: decoded, into: index)
            return
        }
        slots.wait()
        queue.async(group: group) { [self] in
            defer { slots.signal() }
            compress(kind, payload, decoded: decoded, into: index)
        }
    }

    /// `header`, then every frame in submission order.
    func file(header: DocumentHeader) throws(DocumentError) -> [UInt8] {
        group.wait()
        if let error = failure.withLock({ $0 }) { throw error }
        let frames = frames.withLock { $0 }
        var file = header.encoded()
        file.reserveCapacity(file.count + frames.reduce(0) { $0 + $1.count })
        for frame in frames { file += frame }
        return file
    }
}
