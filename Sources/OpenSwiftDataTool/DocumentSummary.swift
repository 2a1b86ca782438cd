import OpenSwiftDataStore

/// The facts `info` reports, gathered once for its text and JSON forms.
struct DocumentSummary {
    let contents: DocumentReader.Contents
    let fileBytes: Int
    let blobBytes: Int
    let missingBlobs: Int

    init(_ contents: DocumentReader.Contents) {
        self.contents = contents
        fileBytes = FileSystem.size(of: contents.path) ?? contents.validLength
        let folder = BlobStore(documentPath: contents.path)
        let sizes = contents.blobNames.map { folder.size(of: $0) }
        blobBytes = sizes.reduce(0) { $0 + ($1 ?? 0) }
        missingBlobs = sizes.filter { $0 == nil }.count
    }

    /// Rows history names, one per inserted, updated or deleted row.
    var historyChanges: Int {
        var total = 0
        contents.version.history.forEach(after: nil) { transaction in
            total += transaction.changeCount
            return true
        }
        return total
    }

    var format: String { "\(contents.formatMajor).\(contents.formatMinor)" }

    var json: JSON {
        let version = contents.version
        return .object([
            ("path", .string(contents.path)),
            ("format", .string(format)),
            ("storeIdentifier", contents.storeIdentifier.map { .string($0.uuidString) } ?? .null),
            ("fingerprint", .string(version.schema.fingerprint)),
            ("schemaVersion", contents.schemaVersion.map { .string($0.description) } ?? .null),
            ("generation", .integer(Int64(clamping: version.generation))),
            ("snapshotGeneration", .integer(Int64(clamping: contents.snapshotGeneration))),
            ("fileBytes", .integer(Int64(fileBytes))),
            ("snapshotBytes", .integer(Int64(contents.snapshotLength))),
            ("journalBytes", .integer(Int64(contents.journalLength))),
            ("journalFrames", .integer(Int64(contents.journalFrames))),
            ("frames", .integer(Int64(contents.frames.count))),
            ("history", .object([
                ("transactions", .integer(Int64(version.history.count))),
                ("changes", .integer(Int64(historyChanges))),
                ("deletedThrough", .integer(Int64(clamping: version.history.horizon))),
            ])),
            ("tornTail", contents.tornTail.map { .object([("offset", .integer(Int64($0.offset))), ("reason", .string($0.reason))]) } ?? .null),
            ("blobs", .object([
                ("count", .integer(Int64(contents.blobNames.count))),
                ("bytes", .integer(Int64(blobBytes))),
                ("missing", .integer(Int64(missingBlobs))),
            ])),
            ("entities", .array(version.schema.entities.enumerated().map { e, entity in
                guard case let .object(members) = SchemaJSON.json(entity) else { return .null }
                return .object([
                    members[0],
                    ("rows", .integer(Int64(version.tables[e].count))),
                    ("nextID", .integer(version.tables[e].nextRawID)),
                ] + members.dropFirst())
            })),
        ])
    }

    var text: String {
        let version = contents.version
        var lines = [
            "document    \(contents.path)",
            "format      \(format)",
            "store id    \(contents.storeIdentifier?.uuidString ?? "none (written by an older build; a writable open adds one)")",
            "schema      fingerprint \(version.schema.fingerprint), \(plural(version.schema.entities.count, "entity", "entities"))"
                + (contents.schemaVersion.map { ", version \($0) (recorded by a migration plan)" } ?? ""),
            "generation  \(version.generation) (snapshot at \(contents.snapshotGeneration))",
            "file        \(plural(fileBytes, "byte")): snapshot \(plural(contents.snapshotLength, "byte")), "
                + "journal \(plural(contents.journalLength, "byte")) in \(plural(contents.journalFrames, "frame"))",
        ]
        var history = "history     \(plural(version.history.count, "transaction")), \(plural(historyChanges, "change"))"
        if version.history.horizon > 0 { history += "; deleted through generation \(version.history.horizon)" }
        lines.append(history)
        if let torn = contents.tornTail {
            lines.append("torn tail   at byte \(torn.offset): \(torn.reason) (dropped at the next open for writing)")
        }
        var blobs = "blobs       \(plural(contents.blobNames.count, "blob")), \(plural(blobBytes, "byte"))"
        if missingBlobs > 0 { blobs += " (\(missingBlobs) missing)" }
        lines.append(blobs)
        for (e, entity) in version.schema.entities.enumerated() {
            lines.append("")
            lines.append("\(entity.name): \(plural(version.tables[e].count, "row")) (next #id \(version.tables[e].nextRawID))")
            lines += Self.describe(entity)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// An entity's attributes, relationships, unique constraints and indexes, one per line.
    static func describe(_ entity: EntityDescription) -> [String] {
        var rows: [[String]] = []
        for attribute in entity.attributes {
            var flags: [String] = []
            if attribute.isUnique { flags.append("unique") }
            if attribute.isExternalStorage { flags.append("external storage") }
            rows.append(["  " + attribute.name, attribute.type.description + (attribute.isOptional ? "?" : ""), flags.joined(separator: ", ")])
        }
        for relationship in entity.relationships {
            let target = relationship.isToMany ? "[\(relationship.destination)]" : relationship.destination
            var notes = [relationship.isToMany ? "to-many" : "to-one", "delete rule \(relationship.deleteRule.rawValue)"]
            if let inverse = relationship.inverse { notes.append("inverse \(inverse)") }
            rows.append(["  " + relationship.name, "→ " + target, notes.joined(separator: ", ")])
        }
        let names = { (slots: [Int]) in "(" + slots.map { entity.name(ofSlot: $0) }.joined(separator: ", ") + ")" }
        for slots in entity.uniqueness {
            rows.append(["  unique", names(slots), ""])
        }
        for index in entity.indices {
            rows.append(["  index", names(index.slots), index.kind.rawValue])
        }
        return TextTable.lines(rows)
    }
}
