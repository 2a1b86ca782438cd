import Foundation
import OpenSwiftDataStore
import Testing

@Suite struct ExportImportTests {
    @Test func roundTripIsByteIdenticalAndKeepsRowsIdentifiersAndBlobs() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let original = folder.path("trips.osd"), copy = folder.path("copy.osd")
        let first = folder.path("first.json"), second = folder.path("second.json")
        let version = try TripDocument.create(at: original)

        let export = try OSD.run(["export", original, "--output", first])
        #expect(export.status == 0)
        #expect(export.output.contains("exported 10 rows of 2 entities"))
        let imported = try OSD.run(["import", first, "--output", copy])
        #expect(imported.status == 0, "\(imported.error)")
        #expect(imported.output.contains("imported 10 rows"))
        #expect(try OSD.run(["export", copy, "--output", second]).status == 0)

        let firstBytes = try Data(contentsOf: URL(fileURLWithPath: first))
        #expect(firstBytes == (try Data(contentsOf: URL(fileURLWithPath: second))))
        let rebuilt = try DocumentReader.read(path: copy, blobs: .load)
        #expect(TripDocument.sameContents(rebuilt.version, version))
        #expect(rebuilt.version.schema.fingerprint == TripDocument.schema.fingerprint)
        #expect(rebuilt.blobNames.count == 2)
        #expect(rebuilt.journalFrames == 0)
        #expect(try JSONSerialization.jsonObject(with: firstBytes) is [String: Any])
    }

    @Test func exportUsesTheDocumentedValueForms() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd")
        try TripDocument.create(at: path)

        let dump = try OSD.run(["dump", path])
        #expect(dump.status == 0)
        let text = dump.output
        #expect(text.hasPrefix("{\n  \"format\": \"osd-export\",\n  \"version\": 1,\n"))
        #expect(text.contains("\"nextIDs\": {\"Destination\": 5, \"Trip\": 9}"))
        #expect(text.contains("{\"#id\": 7, \"name\": \"Oslo winter\", \"days\": 4, \"budget\": 601.0, \"booked\": true,"))
        #expect(text.contains("\"extremes\": [-0.0, {\"double\": \"inf\"}, {\"double\": \"-inf\"}, {\"double\": \"nan\"}, 1e+300, 5e-324]"))
        #expect(text.contains("\"big\": {\"uint\": 18446744073709551608}"))
        #expect(text.contains("\"price\": {\"decimal\": \"400.25\"}"))
        #expect(text.contains("\"id\": {\"uuid\": \"07010203-0405-0607-0809-0A0B0C0D0E0F\"}"))
        #expect(text.contains("\"link\": {\"url\": \"https://example.com/trips/7?q=%C3%A4\"}"))
        #expect(text.contains("\"scores\": {\"dict\": [[\"fun\", 7]]}"))
        #expect(text.contains("\"plan\": {\"codable\": \"{\\\"stops\\\":[\\\"s7\\\"],\\\"quote\\\":\\\"\\\\\\\"é\\\\n\\\"}\"}"))
        #expect(text.contains("\"notes\": {\"data\": \"AAEC/v8H\"}"))
        #expect(text.contains("\"start\": {\"date\": 740604800.875}"))
        #expect(text.contains("\"destination\": {\"ref\": 3}"))
        #expect(text.contains("\"trips\": {\"refs\": [3, 7]}"))
        // The exported file and the dump are the same text.
        let file = folder.path("trips.json")
        #expect(try OSD.run(["export", path, "-o", file]).status == 0)
        #expect(try String(contentsOfFile: file, encoding: .utf8) == text)
    }

    @Test func dumpOfOneEntityIsAnArrayOfItsRows() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd")
        try TripDocument.create(at: path)

        let result = try OSD.run(["dump", path, "--entity", "Trip"])
        #expect(result.status == 0)
        let rows = try #require(try ParsedJSON.array(result.output) as? [[String: Any]])
        #expect(ParsedJSON.ids(rows) == [1, 2, 3, 4, 5, 7])
        #expect(rows.map { $0["name"] as? String } == ["Weekend in Paris", "Rome by rail", "Fjords", "Paris again", "Andes", "Oslo winter"])
        #expect((rows[2]["photo"] as? [String: String])?["data"]?.count == 26_668)

        let unknown = try OSD.run(["dump", path, "--entity", "Ship"])
        #expect(unknown.status == 1)
        #expect(unknown.error.contains("osd: the document has no entity Ship (its entities: Destination, Trip)"))
    }

    @Test func importRefusesToReplaceADocumentUnlessForced() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd"), other = folder.path("other.osd"), json = folder.path("trips.json")
        try TripDocument.create(at: path)
        #expect(try OSD.run(["export", path, "--output", json]).status == 0)
        let (document, _) = try TripDocument.openForWriting(other, schema: StoreSchema(entities: []))
        document.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: other))

        let refused = try OSD.run(["import", json, "--output", other])
        #expect(refused.status == 1)
        #expect(refused.error.contains("already exists (use --force to replace it)"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: other)) == before)

        let forced = try OSD.runLocking(["import", json, "--output", other, "--force"])
        #expect(forced.status == 0)
        #expect(try DocumentReader.read(path: other).version.tables.map(\.count) == [4, 6])
    }

    @Test func importRebuildsIdentifierGapsFromAHandWrittenExport() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let json = folder.path("notes.json"), path = folder.path("notes.osd")
        try """
            {"format": "osd-export", "version": 1,
             "schema": [{"name": "Note", "attributes": [{"name": "title", "type": "String"},
                                                        {"name": "size", "type": "UInt8", "optional": true}],
                         "uniqueness": [["title"]]}],
             "nextIDs": {"Note": 9},
             "entities": {"Note": [{"#id": 5, "title": "five", "size": {"uint": 5}}, {"#id": 2, "title": "two"}]}}
            """.write(toFile: json, atomically: true, encoding: .utf8)

        let result = try OSD.run(["import", json, "--output", path])
        #expect(result.status == 0, "\(result.error)")
        let version = try DocumentReader.read(path: path).version
        #expect(version.tables[0].rowIDs == [RowID(2), RowID(5)])
        #expect(version.tables[0].nextRawID == 9)
        #expect(version.row(RowID(5), of: 0) == [.string("five"), .uint(5)])
        #expect(version.row(RowID(2), of: 0) == [.string("two"), .null])
        #expect(version.schema.entities[0].attributes[1].type == .uint(bits: 8))
    }

    @Test func importRejectsBadInputWithoutCreatingADocument() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("bad.osd")
        let cases: [(String, String)] = [
            ("{\"format\": \"osd-export\", ", "is not valid JSON: line 1, column 26: expected a member name in quotes"),
            ("[1, 2]", "expected an object, found an array"),
            ("{\"format\": \"osd-export\", \"version\": 1, \"schema\": [], \"entities\": {\"Ghost\": []}}", "Ghost is not an entity"),
            (
                "{\"format\": \"osd-export\", \"version\": 1, \"schema\": [{\"name\": \"A\", \"attributes\": [{\"name\": \"k\", \"type\": \"Int\"}]}],"
                    + " \"entities\": {\"A\": [{\"#id\": 1, \"k\": 1}, {\"#id\": 1, \"k\": 2}]}}",
                "A has two rows with #id 1"
            ),
            (
                "{\"format\": \"osd-export\", \"version\": 1, \"schema\": [{\"name\": \"A\", \"attributes\": [{\"name\": \"k\", \"type\": \"Int\"}],"
                    + " \"uniqueness\": [[\"k\"]]}], \"entities\": {\"A\": [{\"#id\": 1, \"k\": 1}, {\"#id\": 2, \"k\": 1}]}}",
                "A #2 has the same unique key as A #1"
            ),
            (
                "{\"format\": \"osd-export\", \"version\": 1, \"schema\": [{\"name\": \"A\", \"attributes\": [{\"name\": \"k\", \"type\": \"Int\"}]}],"
                    + " \"entities\": {\"A\": [{\"#id\": 1, \"k\": {\"when\": 3}}]}}",
                "A #1, k: unknown value tag \"when\""
            ),
        ]
        for (text, message) in cases {
            let json = folder.path("bad.json")
            try text.write(toFile: json, atomically: true, encoding: .utf8)
            let result = try OSD.run(["import", json, "--output", path])
            #expect(result.status == 1)
            #expect(result.error.hasPrefix("osd: "))
            #expect(result.error.contains(message), "\(result.error)")
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    /// Values that parse as JSON but do not fit the schema are refused with the
    /// line and column where they are written; nothing the application would
    /// misread or trap on reaches a document.
    @Test func importChecksEveryValueAgainstTheSchema() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let original = folder.path("trips.osd"), export = folder.path("trips.json"), path = folder.path("bad.osd")
        try TripDocument.create(at: original)
        #expect(try OSD.run(["export", original, "--output", export]).status == 0)
        let text = try String(contentsOfFile: export, encoding: .utf8)

        // (what the export says, what to say instead, the message after "Trip #7, ")
        let cases: [(String, String, String)] = [
            ("\"price\": {\"decimal\": \"400.25\"}", "\"price\": \"cheap\"", "price: a string where Decimal belongs"),
            ("\"price\": {\"decimal\": \"400.25\"}", "\"price\": {\"decimal\": \"12abc\"}", "price: \"12abc\" is not a decimal number"),
            ("\"name\": \"Oslo winter\"", "\"name\": 42", "name: an integer where String belongs"),
            ("\"days\": 4, \"budget\": 601.0", "\"days\": null, \"budget\": 601.0", "days: null, but days (Int) is not optional"),
            ("\"start\": {\"date\": 740604800.875}", "\"start\": {\"date\": \"nan\"}", "start: a date must be a finite number of seconds"),
            ("\"scores\": {\"dict\": [[\"fun\", 7]]}", "\"scores\": {\"dict\": [[\"fun\", 3000000000]]}", "scores: 3000000000 does not fit in Int32"),
            ("\"destination\": {\"ref\": 3}", "\"destination\": {\"ref\": 9223372036854775807}", "destination: {\"ref\": …} holds an integer, expected row identifiers from 1 to 4294967296"),
            ("\"destination\": {\"ref\": 3}", "\"destination\": {\"ref\": 18446744073709551615}", "destination: {\"ref\": …} holds an integer, expected row identifiers"),
            ("\"destination\": {\"ref\": 3}", "\"destination\": {\"ref\": 99}", "destination: refers to Destination #99, which is not in the export"),
        ]
        let row7 = try #require(text.range(of: "{\"#id\": 7,"))
        for (original, replacement, message) in cases {
            let found = try #require(text.range(of: original, range: row7.lowerBound..<text.endIndex), "\(original)")
            let edited = text.replacingCharacters(in: found, with: replacement)
            try edited.write(toFile: export, atomically: true, encoding: .utf8)
            let result = try OSD.run(["import", export, "--output", path])
            #expect(result.status == 1, "\(replacement)")
            #expect(result.error.contains("Trip #7, " + message), "\(replacement): \(result.error)")
            #expect(!FileManager.default.fileExists(atPath: path))
            if message.contains("refers to") { continue }
            // The location is the value's: the character after "name": .
            let before = edited[..<found.lowerBound]
            let line = before.filter { $0 == "\n" }.count + 1
            let column = before.count - (before.lastIndex(of: "\n").map { before.distance(from: before.startIndex, to: $0) + 1 } ?? 0)
                + replacement.distance(from: replacement.startIndex, to: replacement.range(of: ": ")!.upperBound) + 1
            #expect(result.error.contains("line \(line), column \(column): Trip #7"), "\(replacement): \(result.error)")
        }
    }

    /// Collections of optionals (`[Int?]`, `[String: Double?]`) record no optional
    /// element type, so nil elements pass the schema check; exactly convertible
    /// integers become doubles, others are refused.
    @Test func importAcceptsNilElementsAndExactConversions() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let json = folder.path("values.json"), path = folder.path("values.osd")
        func export(_ row: String) -> String {
            """
            {"format": "osd-export", "version": 1,
             "schema": [{"name": "V", "attributes": [{"name": "list", "type": {"array": "Int"}},
                                                     {"name": "scores", "type": {"dictionary": ["String", "Double"]}},
                                                     {"name": "ratio", "type": "Double"}]}],
             "entities": {"V": [\(row)]}}
            """
        }
        try export(##"{"#id": 1, "list": [1, null, 3], "scores": {"dict": [["a", null], ["b", 2]]}, "ratio": 4}"##)
            .write(toFile: json, atomically: true, encoding: .utf8)
        let result = try OSD.run(["import", json, "--output", path])
        #expect(result.status == 0, "\(result.error)")
        let version = try DocumentReader.read(path: path).version
        #expect(version.row(RowID(1), of: 0) == [
            .array([.int(1), .null, .int(3)]),
            .dictionary([Value.Pair(key: .string("a"), value: .null), Value.Pair(key: .string("b"), value: .double(2))]),
            .double(4),
        ])
        try FileManager.default.removeItem(atPath: path)
        try export(##"{"#id": 1, "list": [], "scores": {"dict": []}, "ratio": 9007199254740993}"##)
            .write(toFile: json, atomically: true, encoding: .utf8)
        let inexact = try OSD.run(["import", json, "--output", path])
        #expect(inexact.status == 1)
        #expect(inexact.error.contains("9007199254740993 is not exactly a Double"), "\(inexact.error)")
    }
}
