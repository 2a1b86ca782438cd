/// The form a segment's column holds its values in (`Column.seal(mayHeapLongStrings:)`).
public enum ColumnForm: String, Sendable, Hashable, CaseIterable {
    /// A value per position in a typed buffer (or `Value`s): every column that is not
    /// full, and full ones no other form makes smaller.
    case plain
    /// Strings as codes into a dictionary of the distinct ones, maybe shared with
    /// other segments.
    case dictionary
    /// Strings back to back in one buffer of bytes.
    case heap
    /// Numbers bit-packed above a base.
    case packed
}

/// What one slot of a table takes in memory.
public struct SlotStorage: Sendable, Hashable {
    /// The bytes its columns' buffers take, estimated from their sizes (a shared
    /// dictionary counted once; a string stored out of line with its object).
    public var bytes: Int
    /// How many segments hold the slot in each form.
    public var forms: [ColumnForm: Int]
    /// The raw size of the live rows' values: a string's UTF-8 bytes, 8 bytes a number,
    /// date or identifier, 1 a Boolean, nothing for nil (other values: 16).
    public var rawBytes: Int
}

extension Table {
    /// What each slot's columns take in memory and in which forms: for memory reports
    /// (bytes per row next to the raw size of its values) and for tests of sealing.
    /// Not for applications.
    /// - Complexity: O(rows × slots) (long strings are measured one by one)
    public func _storage() -> [SlotStorage] {
        var result = kinds.map { _ in SlotStorage(bytes: 0, forms: [:], rawBytes: 0) }
        var dictionariesSeen: [Set<UnsafeRawPointer>] = kinds.map { _ in [] }
        for segment in segments {
            for (slot, column) in segment.columns.enumerated() {
                result[slot].forms[column.form, default: 0] += 1
                Bitmap.forEachSet(segment.live) { p in result[slot].rawBytes += column.rawSize(at: p) }
                result[slot].bytes += column.byteCount(countingDictionary: {
                    column.dictionary.withUnsafeBufferPointer { buffer in
                        guard let base = buffer.baseAddress else { return false }
                        return dictionariesSeen[slot].insert(UnsafeRawPointer(base)).inserted
                    }
                }())
            }
            // The segment's live bitmap and identifiers, counted with its first slot.
            if !kinds.isEmpty { result[0].bytes += segment.live.count * 8 + segment.ids.count * 8 }
        }
        return result
    }
}

extension Column {
    /// The form the column holds its values in.
    var form: ColumnForm {
        if isEncoded { return .dictionary }
        if heap != nil { return .heap }
        if packedInts != nil || packedDoubles != nil { return .packed }
        return .plain
    }

    /// The raw size of the value at `position` (`SlotStorage.rawBytes`).
    func rawSize(at position: Int) -> Int {
        if kind != .value, !Bitmap.test(present, position) { return 0 }
        switch kind {
        case .bool: return 1
        case .int, .uint, .double, .date, .reference: return 8
        case .string: return storedString(at: position).utf8.count
        case .references: return list(at: position).count * 8
        case .value: return values[position] == .null ? 0 : 16
        }
    }

    /// The bytes the column's buffers take (its dictionary's only when
    /// `countingDictionary`).
    func byteCount(countingDictionary: Bool) -> Int {
        var bytes = (present.count + bits.count) * 8 + (ints.count + uints.count + doubles.count) * 8
        bytes += StringHeap.arrayByteCount(strings) + codes.count * 2
        if countingDictionary { bytes += StringHeap.arrayByteCount(dictionary) }
        bytes += (heap?.byteCount ?? 0) + (packedInts?.byteCount ?? 0) + (packedDoubles?.byteCount ?? 0)
        bytes += values.count * MemoryLayout<Value>.stride
        bytes += lists.reduce(lists.count * 8) { $0 + ($1.isEmpty ? 0 : 32 + $1.count * 8) }
        return bytes
    }
}
