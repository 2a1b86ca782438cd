import Foundation
import OpenSwiftDataStore

extension ModelContainer {
    /// OpenSwiftData: what each entity's stored values take in memory, attribute by
    /// attribute, in bytes per row beside their raw size, with the forms full segments
    /// hold them in
    /// (`ColumnForm`), and what each ordered index takes: for memory reports and for
    /// tuning a model. Not for applications: its wording may change.
    public var _storageReport: String {
        guard let store = engineStore else { return "no engine store" }
        let version = store.current
        var lines: [String] = []
        for (e, entity) in version.schema.entities.enumerated() {
            let table = version.tables[e]
            guard table.count > 0 else { continue }
            let storage = table._storage()
            let total = storage.reduce(0) { $0 + $1.bytes }, raw = storage.reduce(0) { $0 + $1.rawBytes }
            lines.append(
                "\(entity.name): \(table.count) rows, \(Self.perRow(total, table.count)) B a row in columns "
                    + "(values: \(Self.perRow(raw, table.count)) B raw)")
            let names = entity.attributes.map(\.name) + entity.relationships.map(\.name)
            for (slot, slotStorage) in storage.enumerated() {
                let forms = ColumnForm.allCases.compactMap { form in slotStorage.forms[form].map { "\(form.rawValue) \($0)" } }
                lines.append(
                    "  \(names[slot]): \(Self.perRow(slotStorage.bytes, table.count)) B, raw \(Self.perRow(slotStorage.rawBytes, table.count)) B "
                        + "(\(forms.joined(separator: ", ")))")
            }
            for index in version.orderedIndexes[e] {
                let keyNames = index.slots.map { names[$0] }.joined(separator: ", ")
                lines.append("  index (\(keyNames)): \(Self.perRow(index._byteCount(), table.count)) B")
            }
        }
        return lines.joined(separator: "\n")
    }

    private static func perRow(_ bytes: Int, _ rows: Int) -> String {
        String(format: "%.1f", Double(bytes) / Double(max(rows, 1)))
    }
}
