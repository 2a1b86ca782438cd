import Foundation

/// Column frames (format 2): a snapshot stores each entity's live rows in chunks of
/// up to `Table.segmentSize`, column by column, in the typed buffers the table
/// holds, so writing copies buffers and reading builds a table segment straight
/// from them, without a `Value` per cell (Docs/DocumentFormat.md, "Columns").
enum ColumnFrame {
    /// Rows per column frame: one table segment.
    static let rowsPerFrame = Table.segmentSize

    /// The payloads of the column frames holding `table`'s live rows, in identifier
    /// order, each with its number of cells (rows × slots); `external` stores large
    /// external-storage values (see `Snapshot`). A chunk whose payload passes
    /// `DocumentFormat.bytesPerFrame` is split in two.
    /// - Complexity: O(rows × slots)
    static func encode(
        _ table: Table, entity e: Int, of entity: EntityDescription,
        external: (Data) throws(DocumentError) -> BlobReference,
        emit: (_ payload: [UInt8], _ rows: Int, _ cells: Int) -> Void
    ) throws(DocumentError) {
        try forEachChunk(of: table) { (chunk: [Place]) throws(DocumentError) in
            try encode(chunk[...], of: table, entity: e, description: entity, external: external, emit: emit)
        }
    }

    /// Calls `body` with the places of each column frame's rows (up to
    /// `rowsPerFrame` live rows), in identifier order: a snapshot encodes the
    /// chunks on several threads at once.
    /// - Complexity: O(rows)
    static func forEachChunk(of table: Table, _ body: ([Place]) throws(DocumentError) -> Void) throws(DocumentError) {
        var chunk: [Place] = []
        chunk.reserveCapacity(rowsPerFrame)
        for (s, segment) in table.segments.enumerated() {
            var failure: DocumentError?
            Bitmap.forEachSet(segment.live) { p in
                guard failure == nil else { return }
                chunk.append(Place(segment: s, position: p))
                if chunk.count == rowsPerFrame {
                    do throws(DocumentError) {
                        try body(chunk)
                    } catch {
                        failure = error
                    }
                    chunk.removeAll(keepingCapacity: true)
                }
            }
            if let failure { throw failure }
        }
        if !chunk.isEmpty { try body(chunk) }
    }

    /// A live row's place in its table.
    struct Place: Sendable {
        var segment: Int
        var position: Int
    }

    /// Rows of a chunk at consecutive positions of one segment: every row of a
    /// segment nothing was deleted from is one run, which a column's values are read
    /// from in one pass.
    struct Run {
        var segment: Int
        var positions: Range<Int>
        /// The index in the chunk of the row at `positions.lowerBound`.
        var first: Int

        /// The runs of `chunk`'s rows, in order.
        /// - Complexity: O(`chunk.count`)
        static func runs(of chunk: ArraySlice<Place>) -> [Run] {
            var runs: [Run] = []
            for (i, place) in chunk.enumerated() {
                if let last = runs.last, last.segment == place.segment, last.positions.upperBound == place.position {
                    runs[runs.count - 1].positions = last.positions.lowerBound..<(place.position + 1)
                } else {
                    runs.append(Run(segment: place.segment, positions: place.position..<(place.position + 1), first: i))
                }
            }
            return runs
        }
    }

    /// The payloads of one chunk's column frames (two or more when it passes
    /// `DocumentFormat.bytesPerFrame`).
    static func encode(
        _ chunk: ArraySlice<Place>, of table: Table, entity e: Int, description: EntityDescription,
        external: (Data) throws(DocumentError) -> BlobReference, emit: (_ payload: [UInt8], _ rows: Int, _ cells: Int) -> Void
    ) throws(DocumentError) {
        var w = ByteWriter(capacity: 64 * chunk.count + 64)
        w.varint(e)
        w.varint(chunk.count)
        let ids = chunk.map { table.segments[$0.segment].id(at: $0.position).rawValue }
        w.varint(UInt64(ids[0]))
        let dense = ids.last! - ids[0] == Int64(ids.count - 1)
        w.byte(dense ? 1 : 0)
        if !dense {
            for i in 1..<ids.count { w.varint(UInt64(ids[i] - ids[i - 1])) }
        }
        let runs = Run.runs(of: chunk)
        for slot in table.kinds.indices {
            let kind = table.kinds[slot]
            // A segment whose column took a value of another kind stores `Value`s:
            // then the whole chunk's column is written that way. (The chunk's rows come
            // from a run of segments; checking each once is enough.)
            let segments = chunk.first!.segment...chunk.last!.segment
            let typed = kind != .value && segments.allSatisfy { table.segments[$0].columns[slot].kind == kind }
            if typed {
                w.columnBody(runs, count: chunk.count, slot: slot, kind: kind, of: table)
            } else {
                w.byte(ColumnKind.value.code)
                let isExternal = slot < description.attributes.count && description.attributes[slot].isExternalStorage
                for place in chunk {
                    let value = table.segments[place.segment].columns[slot].value(at: place.position)
                    if isExternal, case let .data(data) = value, data.count >= BlobStore.inlineLimit {
                        w.blobReference(try external(data))
                    } else {
                        w.value(value)
                    }
                }
            }
        }
        if w.bytes.count > DocumentFormat.bytesPerFrame, chunk.count > 1 {
            let half = chunk.startIndex + chunk.count / 2
            try encode(chunk[..<half], of: table, entity: e, description: description, external: external, emit: emit)
            try encode(chunk[half...], of: table, entity: e, description: description, external: external, emit: emit)
            return
        }
        emit(w.bytes, chunk.count, chunk.count * table.kinds.count)
    }

    /// What one column frame holds.
    struct Decoded {
        var entity: Int
        /// The rows, every one live.
        var segment: Segment
        /// The external-storage blobs its values refer to.
        var blobs: [BlobReference]
    }

    /// Decompresses and decodes `frames` on every core (`DispatchQueue.concurrentPerform`),
    /// each on its own; the caller checks identifiers ascend from one to the next.
    /// `policy` says whether blob values are loaded (and checked) from `store`.
    /// `cells` is what the document may still decode, in cells (rows × slots): each
    /// frame takes its share before it allocates anything.
    static func decode(
        _ frames: [Frame.Scanned], schema: StoreSchema, path: String, blobs store: BlobStore,
        policy: DocumentReader.BlobPolicy, cells: Locked<Int>
    ) -> [Result<Decoded, DocumentError>] {
        concurrentMap(frames.count) { i in
            decode(frames[i], schema: schema, path: path, blobs: store, policy: policy, cells: cells)
        }
    }

    private static func decode(
        _ frame: Frame.Scanned, schema: StoreSchema, path: String, blobs store: BlobStore, policy: DocumentReader.BlobPolicy,
        cells: Locked<Int>
    ) -> Result<Decoded, DocumentError> {
        var references: [BlobReference] = []
        var blobFailure: DocumentError?
        func blob(_ reference: BlobReference) throws(ByteReader.Failure) -> Value {
            references.append(reference)
            guard policy == .load else { return .data(Data()) }
            do throws(DocumentError) {
                return .data(try store.load(reference))
            } catch {
                blobFailure = error
                throw ByteReader.Failure(offset: 0, reason: error.description)
            }
        }
        do throws(DocumentError) {
            var r = ByteReader(try frame.decompressed(path: path))
            do throws(ByteReader.Failure) {
                let (entity, segment) = try decode(&r, schema: schema, cells: cells, blob: blob)
                guard r.isAtEnd else {
                    throw ByteReader.Failure(offset: r.position, reason: "\(r.bytes.count - r.position) unexpected bytes at the end")
                }
                return .success(Decoded(entity: entity, segment: segment, blobs: references))
            } catch {
                if let blobFailure { return .failure(blobFailure) }
                return .failure(.damaged(
                    path: path, offset: frame.offset + DocumentFormat.frameHeaderSize,
                    reason: "\(frame.kind) frame: \(error.reason) (at payload byte \(error.offset))"))
            }
        } catch {
            return .failure(error)
        }
    }

    /// Reads a column frame: the entity and a segment of its rows, every one live.
    static func decode(
        _ r: inout ByteReader, schema: StoreSchema, cells: Locked<Int>,
        blob: (BlobReference) throws(ByteReader.Failure) -> Value
    ) throws(ByteReader.Failure) -> (entity: Int, segment: Segment) {
        let e = try r.count()
        guard e < schema.entities.count else { throw r.fail("entity #\(e) is not in the schema") }
        let entity = schema.entities[e]
        let n = try r.count(limit: rowsPerFrame)
        guard n > 0 else { throw r.fail("a column frame without rows") }
        let charge = n * max(entity.slotCount, 1)
        guard cells.withLock({ left in
            left -= charge
            return left >= 0
        }) else {
            throw r.fail("the columns frames claim more rows than \(DocumentFormat.maximumExpansion) times the file's size allows")
        }
        let first = try r.varint()
        guard first > 0, first <= UInt64(DocumentFormat.maximumRowID) else {
            throw r.fail("row identifier \(first) out of order or above \(DocumentFormat.maximumRowID)")
        }
        var ids: [Int64] = []
        switch try r.byte() {
        case 1:
            guard UInt64(n - 1) <= UInt64(DocumentFormat.maximumRowID) - first else {
                throw r.fail("row identifiers above \(DocumentFormat.maximumRowID)")
            }
        case 0:
            ids.reserveCapacity(n)
            var id = Int64(first)
            ids.append(id)
            for _ in 1..<n {
                let delta = try r.varint()
                guard delta > 0, delta <= UInt64(DocumentFormat.maximumRowID - id) else {
                    throw r.fail("row identifiers out of order or above \(DocumentFormat.maximumRowID)")
                }
                id += Int64(delta)
                ids.append(id)
            }
            // Consecutive identifiers are stored as such, whatever the writer said.
            if ids.last! - ids[0] == Int64(n - 1) { ids = [] }
        case let b:
            throw r.fail("identifier layout \(b)")
        }
        let kinds = ColumnKind.kinds(of: entity)
        var columns: [Column] = []
        columns.reserveCapacity(kinds.count)
        for (slot, expected) in kinds.enumerated() {
            let code = try r.byte()
            guard let kind = ColumnKind(code: code), kind == expected || kind == .value else {
                throw r.fail("slot \(slot) holds column kind \(code); the schema's is \(expected.code)")
            }
            columns.append(try r.column(kind, count: n, blob: blob))
        }
        return (e, Segment(columns: columns, count: n, firstID: Int64(first), ids: ids, indexed: Table.indexedSlots(of: entity)))
    }
}

extension ColumnKind {
    /// The kind's byte in a column frame.
    var code: UInt8 {
        switch self {
        case .value: 0
        case .bool: 1
        case .int: 2
        case .uint: 3
        case .double: 4
        case .date: 5
        case .string: 6
        case .reference: 7
        case .references: 8
        }
    }

    init?(code: UInt8) {
        switch code {
        case 0: self = .value
        case 1: self = .bool
        case 2: self = .int
        case 3: self = .uint
        case 4: self = .double
        case 5: self = .date
        case 6: self = .string
        case 7: self = .reference
        case 8: self = .references
        default: return nil
        }
    }
}

/// How a typed column chunk marks its nil values.
private enum Presence: UInt8 {
    case all = 0, none = 1, bitmap = 2
}

extension ByteWriter {
    /// A typed column of the `count` rows of `runs`: kind, presence, then the values.
    /// Each run's values are read in one pass over its column (a packed column's
    /// words, a heap's bytes), and strings are copied as the bytes they are stored as.
    fileprivate mutating func columnBody(_ runs: [ColumnFrame.Run], count n: Int, slot: Int, kind: ColumnKind, of table: Table) {
        byte(kind.code)
        // Each segment's column once (a chunk's runs cover a stretch of segments, and
        // scattered deletions make many runs a segment), then read in place through
        // `columns[run.segment - firstSegment]`: a `Column` returned or passed by value
        // is a copy, a retain and a release of each of its buffers.
        let firstSegment = runs[0].segment
        let columns = (firstSegment...runs[runs.count - 1].segment).map { table.segments[$0].columns[slot] }
        // (The bitmaps and words are filled through buffers: an array a closure
        // captures is checked for uniqueness at every write, a third of the time.)
        var presentCount = 0
        let present = [UInt64](unsafeUninitializedCapacity: Bitmap.wordCount(n)) { words, count in
            words.initialize(repeating: 0)
            for run in runs {
                presentCount += Bitmap.copy(columns[run.segment - firstSegment].present, run.positions, into: words, at: run.first)
            }
            count = words.count
        }
        if presentCount == n {
            byte(Presence.all.rawValue)
        } else if presentCount == 0 {
            byte(Presence.none.rawValue)
            return
        } else {
            byte(Presence.bitmap.rawValue)
            words(present)
        }
        let all = presentCount == n
        /// One word per row: `fill` writes each run's, from its column's positions
        /// into the buffer at the run's rows; nil rows' are then zeroed.
        func cellWords(_ fill: (ColumnFrame.Run, UnsafeMutableBufferPointer<UInt64>) -> Void) -> [UInt64] {
            [UInt64](unsafeUninitializedCapacity: n) { buffer, count in
                for run in runs { fill(run, buffer) }
                if !all {
                    for i in 0..<n where !Bitmap.test(present, i) { buffer[i] = 0 }
                }
                count = n
            }
        }
        // Nil positions are written as zeros: a cleared value stays in the column's
        // buffer, and must not outlive its clearing in the file.
        switch kind {
        case .bool:
            let bits = [UInt64](unsafeUninitializedCapacity: present.count) { words, count in
                words.initialize(repeating: 0)
                for run in runs {
                    Bitmap.copy(columns[run.segment - firstSegment].bits, run.positions, into: words, at: run.first)
                }
                for w in 0..<words.count { words[w] &= present[w] }
                count = words.count
            }
            words(bits)
        case .int, .reference:
            words(cellWords { run, buffer in
                let offset = run.first - run.positions.lowerBound
                columns[run.segment - firstSegment].forEachInt(in: run.positions) { p, v in buffer[offset + p] = UInt64(bitPattern: v) }
            })
        case .uint:
            words(cellWords { run, buffer in
                let offset = run.first - run.positions.lowerBound
                columns[run.segment - firstSegment].uints.withUnsafeBufferPointer { uints in
                    for p in run.positions { buffer[offset + p] = uints[p] }
                }
            })
        case .double, .date:
            words(cellWords { run, buffer in
                let offset = run.first - run.positions.lowerBound
                columns[run.segment - firstSegment].forEachDouble(in: run.positions) { p, v in buffer[offset + p] = v.bitPattern }
            })
        case .string:
            for run in runs {
                let offset = run.first - run.positions.lowerBound
                columns[run.segment - firstSegment].forEachStoredUTF8(in: run.positions) { p, utf8 in
                    if all || Bitmap.test(present, offset + p) { blob(utf8) }
                }
            }
        case .references:
            for run in runs {
                let offset = run.first - run.positions.lowerBound
                for p in run.positions where all || Bitmap.test(present, offset + p) {
                    let ids = columns[run.segment - firstSegment].list(at: p)
                    varint(ids.count)
                    for id in ids { varint(UInt64(id.rawValue)) }
                }
            }
        case .value:
            preconditionFailure("value columns are written value by value")
        }
    }

    /// 64-bit words, little-endian, back to back.
    fileprivate mutating func words(_ values: [UInt64]) {
        #if _endian(little)
        values.withUnsafeBytes { raw($0) }
        #else
        for value in values { fixed64(value) }
        #endif
    }
}

extension ByteReader {
    /// `n` 64-bit little-endian words.
    fileprivate mutating func words(_ n: Int) throws(Failure) -> [UInt64] {
        guard n <= (bytes.count - position) / 8 else { throw fail("\(n) words run past the end of the data") }
        let slice = try raw(8 * n)
        return [UInt64](unsafeUninitializedCapacity: n) { buffer, initialized in
            slice.withUnsafeBytes { source in
                for i in 0..<n { buffer[i] = UInt64(littleEndian: source.loadUnaligned(fromByteOffset: 8 * i, as: UInt64.self)) }
            }
            initialized = n
        }
    }

    /// A column chunk of `n` positions stored as `kind`.
    fileprivate mutating func column(
        _ kind: ColumnKind, count n: Int, blob: (BlobReference) throws(Failure) -> Value
    ) throws(Failure) -> Column {
        if kind == .value {
            var values: [Value] = []
            values.reserveCapacity(n)
            for _ in 0..<n { values.append(try value(blob: blob)) }
            return Column(kind: .value, count: n, present: [UInt64](repeating: 0, count: Bitmap.wordCount(n)), values: values)
        }
        let wordCount = Bitmap.wordCount(n)
        var present: [UInt64]
        var none = false
        switch try byte() {
        case Presence.all.rawValue:
            present = Bitmap.allSet(n)
        case Presence.none.rawValue:
            present = [UInt64](repeating: 0, count: wordCount)
            none = true
        case Presence.bitmap.rawValue:
            present = try words(wordCount)
            if n & 63 != 0, present[wordCount - 1] >> UInt64(n & 63) != 0 { throw fail("presence bits past the last row") }
        case let b:
            throw fail("presence marker \(b)")
        }
        switch kind {
        case .bool:
            var bits = none ? [UInt64](repeating: 0, count: wordCount) : try words(wordCount)
            for w in bits.indices { bits[w] &= present[w] }
            return Column(kind: kind, count: n, present: present, bits: bits)
        // (The values go straight into the column's buffers: an array first was one
        // more copy of every column a document's open reads.)
        case .int, .reference:
            var ints = AppendBuffer<Int64>(repeating: 0, count: n)
            guard !none else { return Column(kind: kind, count: n, present: present, ints: ints) }
            let raw = try words(n)
            var outOfRange: Int64?
            ints.withUnsafeMutableBufferPointer { ints in
                for i in 0..<n where Bitmap.test(present, i) {
                    ints[i] = Int64(bitPattern: raw[i])
                    if kind == .reference, ints[i] <= 0 || ints[i] > DocumentFormat.maximumRowID, outOfRange == nil {
                        outOfRange = ints[i]
                    }
                }
            }
            if let outOfRange { throw fail("reference to row \(outOfRange) out of range") }
            return Column(kind: kind, count: n, present: present, ints: ints)
        case .uint:
            var uints = AppendBuffer<UInt64>(repeating: 0, count: n)
            guard !none else { return Column(kind: kind, count: n, present: present, uints: uints) }
            let raw = try words(n)
            uints.withUnsafeMutableBufferPointer { uints in
                for i in 0..<n where Bitmap.test(present, i) { uints[i] = raw[i] }
            }
            return Column(kind: kind, count: n, present: present, uints: uints)
        case .double, .date:
            var doubles = AppendBuffer<Double>(repeating: 0, count: n)
            guard !none else { return Column(kind: kind, count: n, present: present, doubles: doubles) }
            let raw = try words(n)
            doubles.withUnsafeMutableBufferPointer { doubles in
                for i in 0..<n where Bitmap.test(present, i) { doubles[i] = Double(bitPattern: raw[i]) }
            }
            return Column(kind: kind, count: n, present: present, doubles: doubles)
        case .string:
            var strings = AppendBuffer<String>(repeating: "", count: n)
            if !none {
                for i in 0..<n where Bitmap.test(present, i) { strings[i] = try string() }
            }
            return Column(kind: kind, count: n, present: present, strings: strings)
        case .references:
            // (Empty until a list is not: a column of empty lists holds none, as `Column` keeps it.)
            var lists: [[RowID]] = []
            if !none {
                for i in 0..<n where Bitmap.test(present, i) {
                    let count = try self.count(limit: bytes.count - position)
                    // (An empty list stays the shared empty array: reserving room for
                    // none still allocated a buffer per row.)
                    if count == 0 { continue }
                    if lists.isEmpty { lists = [[RowID]](repeating: [], count: n) }
                    var ids: [RowID] = []
                    ids.reserveCapacity(count)
                    for _ in 0..<count {
                        let raw = try varint()
                        guard raw > 0, raw <= UInt64(DocumentFormat.maximumRowID) else {
                            throw fail("reference to row \(raw) out of range")
                        }
                        ids.append(RowID(Int64(raw)))
                    }
                    lists[i] = ids
                }
            }
            return Column(kind: kind, count: n, present: present, lists: lists)
        case .value:
            preconditionFailure("handled above")
        }
    }
}
