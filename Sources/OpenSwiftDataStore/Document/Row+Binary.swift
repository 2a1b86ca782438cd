import Foundation

/// Rows as documents hold them: the slot values in order, with large
/// external-storage values replaced by blob references.
extension ByteWriter {
    /// Writes `row`; `external` receives each external-storage value at least
    /// `BlobStore.inlineLimit` long and returns the reference to write instead.
    mutating func row(
        _ row: Row, of entity: EntityDescription, external: (Data) throws(DocumentError) -> BlobReference
    ) throws(DocumentError) {
        for (slot, value) in row.enumerated() {
            if slot < entity.attributes.count, entity.attributes[slot].isExternalStorage,
               case let .data(data) = value, data.count >= BlobStore.inlineLimit {
                blobReference(try external(data))
            } else {
                self.value(value)
            }
        }
    }
}

extension ByteReader {
    mutating func row(slotCount: Int, blob: (BlobReference) throws(Failure) -> Value) throws(Failure) -> Row {
        var row: Row = []
        row.reserveCapacity(slotCount)
        for _ in 0..<slotCount { row.append(try value(blob: blob)) }
        return row
    }
}
