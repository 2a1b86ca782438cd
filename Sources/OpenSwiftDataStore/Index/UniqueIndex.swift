import HashTreeCollections

/// The index behind one unique constraint: key values → the row that holds them.
///
/// A persistent hash tree, so store versions share it and a commit copies only the
/// paths it changes. Keys that contain `nil` are not indexed: like SQL, several rows
/// may leave a unique attribute unset.
public struct UniqueIndex: Sendable {
    /// The attribute slots that make up the key.
    public let slots: [Int]
    private var entries: TreeDictionary<[Value], RowID> = [:]

    public init(slots: [Int]) {
        self.slots = slots
    }

    /// The key of `row`, or nil when a part of it is nil.
    public func key(of row: Row) -> [Value]? {
        if slots.count == 1 {
            let value = row[slots[0]]
            return value.isNull ? nil : [value]
        }
        var key: [Value] = []
        key.reserveCapacity(slots.count)
        for slot in slots {
            let v = row[slot]
            if v.isNull { return nil }
            key.append(v)
        }
        return key
    }

    /// The row holding `key`.
    /// - Complexity: O(log n), expected O(1)
    public func lookup(_ key: [Value]) -> RowID? { entries[key] }

    public mutating func add(_ row: Row, at id: RowID) {
        if let key = key(of: row) { entries[key] = id }
    }

    public mutating func remove(_ row: Row, at id: RowID) {
        if let key = key(of: row), entries[key] == id { entries[key] = nil }
    }

    public var count: Int { entries.count }
}
