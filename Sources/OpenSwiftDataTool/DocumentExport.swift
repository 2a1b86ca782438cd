import OpenSwiftDataStore

/// Writes a document's schema and rows in the export form (Docs/CLI.md), row by
/// row, so exporting a large document never holds its whole text in memory.
///
/// The layout is fixed (one row per line, the schema wrapped to 100 columns):
/// the same document always gives the same bytes, which is what makes
/// export → import → export byte-identical.
enum DocumentExport {
    /// The value of the export's `"format"` member.
    static let format = "osd-export"
    /// Incremented when the export form changes incompatibly.
    static let formatVersion: Int64 = 1
    /// The member holding a row's identifier; attributes cannot be named like it.
    static let idKey = "#id"

    /// Refuses entities whose rows cannot be objects keyed by slot name.
    static func checkExportable(_ schema: StoreSchema) throws(ToolFailure) {
        for entity in schema.entities {
            var names: Set<String> = [idKey]
            for slot in 0..<entity.slotCount where !names.insert(entity.name(ofSlot: slot)).inserted {
                throw ToolFailure("cannot export \(entity.name): two of its slots are named \(entity.name(ofSlot: slot))")
            }
        }
    }

    static func rowJSON(_ row: Row, id: RowID, of entity: EntityDescription) -> JSON {
        var members: [(key: String, value: JSON)] = [(idKey, .integer(id.rawValue))]
        members.reserveCapacity(row.count + 1)
        for (slot, value) in row.enumerated() {
            members.append((entity.name(ofSlot: slot), ValueJSON.json(value)))
        }
        return .object(members)
    }

    /// The whole document: format, fingerprint, schema, next identifiers, rows.
    static func write(_ version: StoreVersion, to sink: OutputSink) throws(ToolFailure) {
        let schema = version.schema
        try checkExportable(schema)
        var progress = Progress("exporting rows", total: version.tables.reduce(0) { $0 + $1.count })
        defer { progress.finish() }
        try sink.line("{")
        try sink.line("  \"format\": \(JSONWriter.quoted(format)),")
        try sink.line("  \"version\": \(formatVersion),")
        try sink.line("  \"fingerprint\": \(JSONWriter.quoted(schema.fingerprint)),")
        try sink.line("  \"schema\": \(JSONWriter.pretty(SchemaJSON.json(schema), indent: 2, column: 12, flatDepth: 3)),")
        let nextIDs = JSON.object(zip(schema.entities, version.tables).map { ($0.name, .integer($1.nextRawID)) })
        try sink.line("  \"nextIDs\": \(JSONWriter.pretty(nextIDs, indent: 2, column: 13)),")
        try sink.line("  \"entities\": {")
        for (e, entity) in schema.entities.enumerated() {
            try sink.write("    \(JSONWriter.quoted(entity.name)): ")
            try writeRows(of: version.tables[e], entity: entity, indent: 4, to: sink, progress: &progress)
            try sink.line(e == schema.entities.count - 1 ? "" : ",")
        }
        try sink.line("  }")
        try sink.line("}")
    }

    /// One entity's rows as a JSON array, one row per line.
    static func writeRows(
        of table: Table, entity: EntityDescription, indent: Int, to sink: OutputSink, progress: inout Progress
    ) throws(ToolFailure) {
        guard table.count > 0 else {
            try sink.write("[]")
            return
        }
        let padding = String(repeating: " ", count: indent + 2)
        try sink.line("[")
        var first = true
        var failure: ToolFailure?
        table.forEach { id, row in
            guard failure == nil else { return }
            do throws(ToolFailure) {
                if !first { try sink.line(",") }
                first = false
                try sink.write(padding + JSONWriter.compact(rowJSON(row, id: id, of: entity)))
            } catch {
                failure = error
            }
            progress.advance()
        }
        if let failure { throw failure }
        try sink.write("\n" + String(repeating: " ", count: indent) + "]")
    }
}
