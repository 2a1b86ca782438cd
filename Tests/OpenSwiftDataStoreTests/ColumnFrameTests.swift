import Foundation
import OpenSwiftDataStore
import DocumentTestSupport
import Testing

/// Format 2 snapshots store rows in column frames: every column kind, nils, gaps
/// left by deletes and columns that took values of another kind must read back as
/// they were written; format-1 documents (row frames) must still open.
@Suite struct ColumnFrameTests {
    /// A format-1 document made by the build before column frames (saves 1 and 2
    /// of `DocumentFixture`, compacted, then saves 4 and 5 in the journal).
    static let formatOneDocument = """
        T1NERE9DDQoBAAAAAAAAAAIAAAAAAAAAAAAAAL7ZwylPU0RGAQEAAKQAAADEAAAAYXUllyi1L/0g
        xN0EAMKKIh1wSeqQv5te8iNI315IUZ8LsqmqqnCAKqBKTHelDJnNeEFeSVFrxW01+cOoLh47V0hT
        dWHw1hQuQURHX83kD5O8MroAH/+QWEVIBxD2Y4xTLjKA/X5BlIgAIhxPDvTyl1gVUHDeTgYwL5pc
        HxZOKsLNcHLfI79NwyCuTBolOsWvLajZr1OA6JhwSgQAQ4jEzAXLFAGTQzkD9U6rfU9TREYCAQAA
        uQEAAMgCAADF19HAKLUv/WDIAX0NAKQWAAQBBgZpdGVtLTIDkAME/f8BBZIkSZIkSdI/AgcARJ9A
        CQIBAgMEBQYHCAkKCwwNDg8KHmh0dHBzOi8vZXhhbXBsZS5jb20vMj9xPSVDMyVBNAsFMi4xMjUM
        AgYCdDIGA+Kckw0BBgF4BQBADg17ImNpdHkiOiJDMiJ9CGQCIUBffp282/oZOFd2lbTT8hEwT26N
        rMvqCShHZoWkw+IBID9efZy72vkYN1Z1lLPS8RAvTm2Mq8rpCCdGZYSjwuEAHz5dfJu62fgXNlV0
        k7LR8A8uTWyLqsnoByZFZIOiweD/DwIzA10E/P8BBdu2bT8BAAkDMzMzCDMifQA0A1sE++KvQAkE
        AAsFNDQQNAQjQmGAn77d/Bs6WXiXttX0EzJRcI+uzewLKkloh6bF5AMiQWB/nr3c+xo5WHeWtdTz
        EjFQb46tzOsKKUhnhqXE4w81A1kE+v8BBbfmPwGAirNACQU1NTUUQAAADwQdAGAK0AcMBjxUIuew
        VnPAwSWiibC53IBAwHEwWdbSMugE5fDWCLD1wWwEjgOTAS1gXGzzWhc05MLrhpgGTATCn4El9Rny
        xk9TREYCAAAAGgAAABoAAAAxLow9AQIBBgVib3gtMRACAgQBBgVib3gtMhACBgiq4DQ+T1NERgUA
        AAAHAAAABwAAABW58rwAAAQEAgIF0ZOCfU9TREYFAAAABwAAAAcAAAAVufK8AAEEAgICAlGOPYJP
        U0RGAwAAAAYAAAAGAAAAKpavjwIECgIGAlZRW+JPU0RGBAEAANoBAABTAgAAepQThCi1L/1gUwGF
        DgB0GgOZdRfvalrIQQEGc2F2ZSA0AgAOAQgEAQYGBWJveC00EAIKDAAKBgZpdGVtLTgDUwT3/wEF
        kiRJkiRJ8j8CBwAAAAAARL9ACQgBAgMEBQYHCAkKCwwNDg8ACwU4LjEyNQwCBgJ0OAYD4pyTDQEG
        AXgFACBADg17ImNpdHkiOiJDOCJ9CGQIJ0ZlhKPC4QAfPl18m7rZ+Bc2VXSTstHwDy5NbIuqyegH
        JkVkg6LB4P8ePVx7mrnY9xY1VHOSsdDvDi1Ma4qpyOcGJURjgqHA3/4dPFt6mbjX9hU0U3KRsM/u
        DSxLaomox+YFDwYADDkDUQT2JUmSJEmS9D8BAAkJCh5odHRwczovL2V4YW1wbGUuY29tLzk/cT0l
        QzMlQTQLBTk5IjkifQAPBgAGNAOgBgT74q9ACQQ0NBA0In0IZAQjQmGAn77d/Bs6WXiXttX0EzJR
        cI+uzewLKkloh6bF5AMiQWB/nr3c+xo5WHeWtdTzEjFQb46tzOsKKUhnhqXE4wIhQF9+nbzb+hk4
        V3aVtNPyETBPbo2sy+oJKEdmhaTD4gEPBAEABBAA4BAwD2gM+ITCXKtYyAVhMgYHgynWNu05TU+w
        dbeaPA/aHhfsAX6MdG1PU0RGBAEAAFMBAAChAQAAf6sbKSi1L/1goQBNCgAUEwTBlBfvalrIQQEG
        c2F2ZSA1AgASAQoDAQgGBWJveC01EAIOEAAOBgdpdGVtLTEwA08E9f8BBbdt27Zt2/Y/AgcAAAAA
        gIrDQAkKAQIDBAUGBwgJCgsMDQ4PCh9odHRwczovL2V4YW1wbGUuY29tLzEwP3E9JUMzJUE0CwYx
        MC4xMjUMAgYDdDEwBgPinJMNAQYBeAUAJEAACGQKKUhnhqXE4wIhQF9+nbzb+hk4V3aVtNPyETBP
        bo2sy+oJKEdmhaTD4gEgP159nLva+Rg3VnWUs9LxEC9ObYyryukIJ0ZlhKPC4QAfPl18m7rZ+Bc2
        VXSTstHwDy5NbIuqyegHDwgAEDEDTQT0SZIkSZIk+T8BwH7FQAkLMTExJkAODnsiY2l0eSI6IkMx
        MSJ9AA8IAQAICQBgCoAPcCx4CK6E/dq1oQjBPZSBPR3urWc=
"""

    static func expectedFormatOneRows() throws -> [[RowID: Row]] {
        let store = Store(schema: DocumentFixture.schema)
        for k in [1, 2, 4, 5] { try DocumentFixture.save(k, in: store) }
        return DocumentFixture.rows(of: store.current)
    }

    @Test func formatOneDocumentsStillOpenAndAWriterConvertsThemOnce() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("old.store")
        let bytes = try #require(Data(base64Encoded: Self.formatOneDocument, options: .ignoreUnknownCharacters))
        try bytes.write(to: URL(fileURLWithPath: path))
        let expected = try Self.expectedFormatOneRows()

        // A reader reads it as it is.
        let old = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(old.formatMajor == 1)
        #expect(old.frames.contains { $0.kind == .rows })
        #expect(old.journalFrames == 2)
        #expect(DocumentFixture.rows(of: old.version) == expected)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes, "reading changed the file")

        // A writer rewrites it in format 2 before its first save.
        let store = try DocumentFixture.openStore(path)
        #expect(DocumentFixture.rows(of: store.current) == expected)
        let converted = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(converted.formatMajor == DocumentFormat.major)
        #expect(!converted.frames.contains { $0.kind == .rows })
        #expect(converted.frames.contains { $0.kind == .columns })
        #expect(converted.journalFrames == 0)
        #expect(DocumentFixture.rows(of: converted.version) == expected)
        try DocumentFixture.save(6, in: store)
        let saved = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        saved.version._checkInvariants()
        #expect(saved.journalFrames == 1)
        #expect(DocumentFixture.rows(of: saved.version) == DocumentFixture.rows(of: store.current))
    }

    /// Items over several frames, with nils in typed columns, to-one and to-many
    /// references, a gap left by deletes and identifiers that are not consecutive.
    @Test func everyColumnKindRoundTripsThroughSeveralFrames() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("columns.store")
        let store = try DocumentFixture.openStore(path)
        let items = 9_000, boxes = 30
        var changes = ChangeSet()
        for b in 0..<boxes {
            let members = stride(from: b, to: items, by: boxes).map { RowID(-Int64(boxes + 1 + $0)) }
            changes.inserts.append(.init(entity: 1, temporaryID: RowID(-Int64(b + 1)), row: [.string("box-\(b)"), .references(members)]))
        }
        for n in 0..<items {
            var row = DocumentFixture.item(n, box: RowID(-Int64(n % boxes + 1)), photoSize: n % 500 == 0 ? 20_000 : (n % 7 == 0 ? 0 : 40))
            if n % 11 == 0 { row[0] = .string("項目-\(n)-✓") }
            changes.inserts.append(.init(entity: 0, temporaryID: RowID(-Int64(boxes + 1 + n)), row: row))
        }
        _ = try store.commit(changes)
        // Every third row of the second segment and all of rows 6,000–6,999 go.
        var deletes = ChangeSet()
        for id in stride(from: 4_100, to: 8_000, by: 3) { deletes.deletes.append(.init(entity: 0, id: RowID(Int64(id)))) }
        for id in 6_000..<7_000 where id % 3 != 4_100 % 3 { deletes.deletes.append(.init(entity: 0, id: RowID(Int64(id)))) }
        _ = try store.commit(deletes)
        try store.compact()

        let contents = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        contents.version._checkInvariants()
        #expect(contents.journalFrames == 0)
        let liveItems = store.current.tables[0].count
        #expect(liveItems == 9_000 - 1_300 - 667)
        #expect(contents.frames.filter { $0.kind == .columns }.count == (liveItems + 4_095) / 4_096 + 1, "items, then one of boxes")
        #expect(!contents.frames.contains { $0.kind == .rows })
        #expect(DocumentFixture.rows(of: contents.version) == DocumentFixture.rows(of: store.current))
        #expect(contents.version.tables[0].count == store.current.tables[0].count)
        var largePhotos = 0
        store.current.tables[0].forEach(slot: 12) { _, photo in
            if case let .data(data) = photo, data.count >= 16 * 1024 { largePhotos += 1 }
        }
        #expect(largePhotos > 5)
        #expect(contents.blobNames.count == largePhotos)
    }

    /// A snapshot of many more column frames than are in flight at once (workers
    /// encode and compress them, the compacting thread writes them in order; an
    /// entity with external storage is encoded on the compacting thread) reads
    /// back whole, blobs and all, and its progress counts every row once.
    @Test func aSnapshotOfManyFramesInFlightReadsBackInOrder() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("many-frames.store")
        let store = try DocumentFixture.openStore(path)
        let document = try #require(store.document)
        document.compactionPolicy = .init(ratio: 100, minimumJournalBytes: 1 << 30)
        let boxes = 40 * 4_096 + 17, items = 3 * 4_096
        var changes = ChangeSet()
        for b in 0..<boxes {
            changes.inserts.append(.init(entity: 1, temporaryID: RowID(-Int64(b + 1)), row: [.string("box-\(b)"), .references([])]))
        }
        for n in 0..<items {
            let row = DocumentFixture.item(n, photoSize: n % 1_000 == 0 ? 20_000 : 40)
            changes.inserts.append(.init(entity: 0, temporaryID: RowID(-Int64(boxes + 1 + n)), row: row))
        }
        _ = try store.commit(changes)
        // Gaps: every fifth box of the first half goes.
        var deletes = ChangeSet()
        for id in stride(from: 1, to: boxes / 2, by: 5) { deletes.deletes.append(.init(entity: 1, id: RowID(Int64(id)))) }
        _ = try store.commit(deletes)

        var heard: [(Int, Int)] = []
        try document.compact(store.current) { done, total in heard.append((done, total)) }

        let contents = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        contents.version._checkInvariants()
        #expect(contents.journalFrames == 0)
        let liveBoxes = store.current.tables[1].count
        #expect(contents.frames.filter { $0.kind == .columns }.count == items / 4_096 + (liveBoxes + 4_095) / 4_096)
        #expect(DocumentFixture.rows(of: contents.version) == DocumentFixture.rows(of: store.current))
        #expect(contents.blobNames.count == (items + 999) / 1_000)
        let rows = items + liveBoxes
        #expect(heard.last.map { $0 == (rows, rows) } == true)
        #expect(zip(heard, heard.dropFirst()).allSatisfy { $0.0 < $1.0 })
    }

    /// Frames of to-many lists that are all empty, or all but one, read back the same
    /// rows (a column of empty lists holds none in memory).
    @Test func emptyToManyListsRoundTrip() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("lists.store")
        let store = try DocumentFixture.openStore(path)
        var changes = ChangeSet()
        let item = RowID(-Int64(6_000))
        for b in 0..<5_000 {
            let members: [RowID] = b == 4_321 ? [item] : []
            changes.inserts.append(.init(entity: 1, temporaryID: RowID(-Int64(b + 1)), row: [.string("box-\(b)"), .references(members)]))
        }
        changes.inserts.append(.init(entity: 0, temporaryID: item, row: DocumentFixture.item(1, box: RowID(-4_322), photoSize: 0)))
        _ = try store.commit(changes)
        try store.compact()
        let contents = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        contents.version._checkInvariants()
        #expect(DocumentFixture.rows(of: contents.version) == DocumentFixture.rows(of: store.current))
        let lists = contents.version.tables[1].rowIDs.compactMap { contents.version.row($0, of: 1)?[1] }
        #expect(lists.filter { $0 != .references([]) }.count == 1)
    }

    /// A value of another kind than the attribute's (as an import can store) turns
    /// its column into one of values; the frame stores values for it and reads
    /// back the same value, not one converted to the attribute's kind.
    @Test func aColumnThatTookAnotherKindOfValueRoundTrips() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("mixed.store")
        let store = try DocumentFixture.openStore(path)
        var changes = ChangeSet()
        for n in 0..<5 {
            var row = DocumentFixture.item(n)
            if n == 2 { row[3] = .int(7) }
            if n == 3 { row[2] = .null }
            changes.inserts.append(.init(entity: 0, temporaryID: RowID(-Int64(n + 1)), row: row))
        }
        _ = try store.commit(changes)
        try store.compact()
        let contents = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(contents.version.row(RowID(3), of: 0)?[3] == .int(7))
        #expect(contents.version.row(RowID(4), of: 0)?[2] == .null)
        #expect(contents.version.row(RowID(1), of: 0)?[3] == .double(0))
        #expect(DocumentFixture.rows(of: contents.version) == DocumentFixture.rows(of: store.current))
    }

    /// A value made nil stays in the column's buffer until the position is reused;
    /// the snapshot writes zeros there, so a cleared value does not outlive its
    /// clearing in the file.
    @Test func aClearedValueIsNotWrittenAgain() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("cleared.store")
        let store = try DocumentFixture.openStore(path)
        let secret = Date(timeIntervalSinceReferenceDate: 123_456.789)
        var changes = ChangeSet()
        for n in 1...2 {
            var row = DocumentFixture.item(n)
            if n == 1 { row[5] = .date(secret) }
            changes.inserts.append(.init(entity: 0, temporaryID: RowID(-Int64(n)), row: row))
        }
        _ = try store.commit(changes)
        var clear = ChangeSet()
        clear.updates.append(.init(entity: 0, id: RowID(1), values: [5: .null]))
        _ = try store.commit(clear)
        try store.compact()

        let file = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let pattern = withUnsafeBytes(of: secret.timeIntervalSinceReferenceDate.bitPattern.littleEndian) { Array($0) }
        var searched = 0
        for frame in FrameBytes.frames(in: file) where frame.kind == .columns {
            let stored = file[(frame.offset + 20)..<(frame.offset + frame.length - 4)]
            let payload = try #require(file[frame.offset + 5] == 1 ? FrameBytes.unzstd(stored, size: frame.rawLength) : Array(stored))
            #expect(!payload.indices.dropLast(7).contains { Array(payload[$0..<($0 + 8)]) == pattern })
            searched += 1
        }
        #expect(searched == 1)
        let contents = try DocumentReader.read(path: path, expected: DocumentFixture.schema)
        #expect(contents.version.row(RowID(1), of: 0)?[5] == .null)
        #expect(contents.version.row(RowID(2), of: 0)?[5] == .date(Date(timeIntervalSinceReferenceDate: 2_001)))
    }

    /// Rows of nils compress to almost nothing but cost memory per cell: a reader
    /// charges cells against the document's expansion budget, and the writer pads
    /// such frames so an honest document always fits it.
    @Test func aDocumentOfNilsIsPaddedToItsDecodingBudget() throws {
        let attributes = (0..<40).map { AttributeDescription(name: "a\($0)", type: .int(bits: 64), isOptional: true) }
        let schema = StoreSchema(entities: [EntityDescription(name: "Sparse", attributes: attributes, relationships: [])])
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("sparse.store")
        let rows = 30_000
        do {
            let store = try DocumentFixture.openStore(path, schema: schema)
            var changes = ChangeSet()
            for n in 0..<rows {
                changes.inserts.append(.init(entity: 0, temporaryID: RowID(-Int64(n + 1)), row: Row(repeating: .null, count: 40)))
            }
            _ = try store.commit(changes)
            try store.compact()
        }
        // 1.2 million cells: more than the budget's allowance alone covers.
        #expect(rows * 40 * 16 > 16 << 20)
        let contents = try DocumentReader.read(path: path, expected: schema)
        #expect(contents.version.tables[0].count == rows)
        #expect(contents.version.row(RowID(Int64(rows)), of: 0) == Row(repeating: .null, count: 40))
    }

    // MARK: Hostile column frames

    /// A document whose snapshot holds `payloads` as column frames and says the
    /// boxes number `boxes`, next identifier `next`.
    static func document(columnFrames payloads: [[UInt8]], boxes: Int, next: Int64, in folder: TemporaryFolder) throws -> [UInt8] {
        let (empty, frames) = try HostileDocumentTests.emptyDocument(in: folder)
        var file = Array(empty[..<frames[1].offset])
        for payload in payloads { file += FrameBytes.frame(kind: .columns, stored: payload) }
        let end = FrameBytes.varint(2) + FrameBytes.varint(0) + FrameBytes.varint(2) + FrameBytes.varint(UInt64(boxes))
            + FrameBytes.varint(UInt64(next) << 1) + FrameBytes.varint(0) + Array(repeating: 7, count: 16)  // the store identifier
        return file + FrameBytes.frame(kind: .snapshotEnd, stored: end)
    }

    /// A column frame of boxes: labels `labels` from identifier `first` on, no items.
    static func boxes(_ labels: [String], first: UInt64, labelKind: UInt8 = 6, itemsColumn: [UInt8] = [8, 1]) -> [UInt8] {
        var payload = FrameBytes.varint(1) + FrameBytes.varint(UInt64(labels.count)) + FrameBytes.varint(first) + [1]
        payload += [labelKind, 0]
        for label in labels { payload += FrameBytes.varint(UInt64(label.utf8.count)) + Array(label.utf8) }
        return payload + itemsColumn
    }

    /// Strings are read in place and tested for ASCII eight bytes at a time: every
    /// length around those words, with a non-ASCII character at every position,
    /// reads back as written.
    @Test func stringsOfEveryLengthAndMixReadBack() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var labels: [String] = []
        for length in 0...20 {
            let ascii = String(repeating: "x", count: length)
            labels.append(ascii)
            for position in 0...length {
                var mixed = ascii
                mixed.insert("é", at: mixed.index(mixed.startIndex, offsetBy: position))
                labels.append(mixed)
            }
        }
        let file = try Self.document(columnFrames: [Self.boxes(labels, first: 1)], boxes: labels.count, next: Int64(labels.count + 1), in: folder)
        let contents = try HostileDocumentTests.read(file, in: folder, name: "strings.store").get()
        for (i, label) in labels.enumerated() {
            #expect(contents.version.row(RowID(Int64(i + 1)), of: 1)?.first == .string(label), "\(label)")
        }
    }

    @Test func craftedColumnFramesReadOrGiveTypedErrors() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        func read(_ payloads: [[UInt8]], boxes: Int, next: Int64 = 10, _ name: String) throws -> Result<DocumentReader.Contents, DocumentError> {
            HostileDocumentTests.read(try Self.document(columnFrames: payloads, boxes: boxes, next: next, in: folder), in: folder, name: name)
        }
        // The control: two frames written by hand read back.
        let good = try read([Self.boxes(["a", "b"], first: 1), Self.boxes(["c"], first: 5)], boxes: 3, "good.store").get()
        #expect(good.version.row(RowID(5), of: 1) == [.string("c"), .null])
        #expect(good.version.row(RowID(2), of: 1) == [.string("b"), .null])
        #expect(good.version.tables[1].count == 3)
        good.version._checkInvariants()

        let cases: [(String, [[UInt8]], Int, String)] = [
            ("kind", [Self.boxes(["a"], first: 1, labelKind: 4)], 1, "slot 0 holds column kind 4"),
            ("unknown kind", [Self.boxes(["a"], first: 1, labelKind: 9)], 1, "slot 0 holds column kind 9"),
            ("order", [Self.boxes(["a", "b"], first: 3), Self.boxes(["c"], first: 4)], 3, "out of order"),
            ("twice", [Self.boxes(["a"], first: 1), Self.boxes(["a"], first: 1)], 2, "out of order"),
            ("zero", [Self.boxes(["a"], first: 0)], 1, "out of order"),
            ("too many", [FrameBytes.varint(1) + FrameBytes.varint(5_000)], 1, "count 5000 exceeds 4096"),
            ("no rows", [FrameBytes.varint(1) + FrameBytes.varint(0)], 0, "without rows"),
            ("far", [Self.boxes(["a", "b"], first: UInt64(1) << 32)], 2, "above"),
            ("presence", [Self.boxes(["a"], first: 1, itemsColumn: [8, 7])], 1, "presence marker 7"),
            ("stray bits", [Self.boxes(["a"], first: 1, itemsColumn: [8, 2] + FrameBytes.fixed32(2) + FrameBytes.fixed32(0) + [0])], 1, "presence bits past the last row"),
            ("reference", [Self.boxes(["a"], first: 1, itemsColumn: [8, 0, 1, 0])], 1, "reference to row 0 out of range"),
            ("short", [Self.boxes(["a"], first: 1, itemsColumn: [8, 0, 3, 1])], 1, "count 3 exceeds 2"),
            ("utf8", [FrameBytes.varint(1) + [1, 1, 1, 6, 0, 2, 0xC3, 0x28, 8, 1]], 1, "not valid UTF-8"),
            // Past the first eight bytes, and alone in the second word.
            ("utf8 tail", [FrameBytes.varint(1) + [1, 1, 1, 6, 0, 11] + Array("abcdefghi".utf8) + [0xC3, 0x28, 8, 1]], 1, "not valid UTF-8"),
            // A length within what was left before its own byte was read, past the end after.
            ("string end", [FrameBytes.varint(1) + [1, 1, 1, 6, 0, 1]], 1, "length 1 runs past the end"),
            ("utf8 word", [FrameBytes.varint(1) + [1, 1, 1, 6, 0, 16] + Array("abcdefgh".utf8) + [0xFF] + Array("abcdefg".utf8) + [8, 1]], 1, "not valid UTF-8"),
        ]
        // Frames of 4,096 rows of nils, two bytes per column, claiming more cells
        // than the file's size allows: refused before they are allocated.
        let nils = FrameBytes.varint(1) + FrameBytes.varint(4_096)
        let many = (0..<200).map { nils + FrameBytes.varint(UInt64($0 * 4_096 + 1)) + [1, 6, 1, 8, 1] }
        let claim = try read(many, boxes: 200 * 4_096, next: 200 * 4_096 + 1, "claim.store")
        let claimReason = try #require(HostileDocumentTests.damageReason(claim), "\(claim)")
        #expect(claimReason.contains("claim more rows than 256 times the file's size allows"), "\(claimReason)")

        // Damage in a frame comes first even when a later frame is damaged too
        // (columns frames are decoded a batch at a time, after later frames are read).
        var twoBad = try Self.document(
            columnFrames: [Self.boxes(["a"], first: 1, labelKind: 4), Self.boxes(["b"], first: 2)], boxes: 2, next: 3, in: folder)
        let second = FrameBytes.frames(in: twoBad).filter { $0.kind == .columns }[1]
        twoBad[second.offset + 22] ^= 0xFF
        let firstReason = try #require(HostileDocumentTests.damageReason(HostileDocumentTests.read(twoBad, in: folder, name: "two.store")))
        #expect(firstReason.contains("slot 0 holds column kind 4"), "\(firstReason)")

        for (name, payloads, boxes, reason) in cases {
            let result = try read(payloads, boxes: boxes, name + ".store")
            let found = try #require(HostileDocumentTests.damageReason(result), "\(name): \(result)")
            #expect(found.contains(reason), "\(name): \(found)")
        }
    }
}
