/// A binary index: a B-tree over some attribute slots of an entity, on the
/// narrowest keys those slots allow.
///
/// An index over one non-optional number, date or `Bool` holds `PackedKey`s
/// (12 bytes an entry, compared as integers), one over a non-optional string holds
/// `StringKey`s (20 bytes, compared as strings), and the rest (compound keys,
/// optionals, other kinds) hold general `IndexKey`s (36 bytes, compared value by
/// value). Packed and string keys of few distinct values are held once a run of
/// equal keys (`BTree+Leaf.swift`). A value that does not fit the packed kind (an integer in a `Double`
/// column of an imported document, a nil) turns the index into a general one, so
/// every row keeps its entry.
public struct OrderedIndex: Sendable {
    /// The key an index holds.
    enum Layout: Sendable, Hashable {
        case general
        case scalar(ScalarKind)
        case string
    }

    /// The attribute slots, in key order.
    public let slots: [Int]
    var layout: Layout
    // One tree is in use, the one `layout` names; the others stay empty.
    var general = BTree<IndexKey>()
    var scalars = BTree<PackedKey>()
    var strings = BTree<StringKey>()

    /// An empty index over `slots` of `entity`.
    public init(slots: [Int], of entity: EntityDescription) {
        self.slots = slots
        self.layout = Self.layout(slots: slots, of: entity)
    }

    /// The packed layout `slots` of `entity` allow: one non-optional attribute of a
    /// scalar or string column kind.
    static func layout(slots: [Int], of entity: EntityDescription) -> Layout {
        guard slots.count == 1, slots[0] < entity.attributes.count else { return .general }
        let attribute = entity.attributes[slots[0]]
        guard !attribute.isOptional else { return .general }
        let kind = ColumnKind(attribute.type)
        if kind == .string { return .string }
        return ScalarKind(kind).map(Layout.scalar) ?? .general
    }

    /// The number of entries: one per row.
    public var count: Int {
        switch layout {
        case .general: general.count
        case .scalar: scalars.count
        case .string: strings.count
        }
    }

    /// The key of `row` in this index; nil values are keys too (they sort first).
    public func key(of row: Row) -> IndexKey { IndexKey(of: row, slots: slots) }

    // MARK: Changes

    /// Adds the entry of `row`, stored under `id`.
    /// - Complexity: O(log n); O(n) once if the value turns the index general.
    mutating func add(_ row: Row, at id: RowID) {
        switch layout {
        case let .scalar(kind):
            if let key = kind.pack(row[slots[0]]) { return scalars.insert(key, row: id) }
        case .string:
            if case let .string(string) = row[slots[0]] { return strings.insert(StringKey(string: string), row: id) }
        case .general:
            return general.insert(key(of: row), row: id)
        }
        becomeGeneral()
        general.insert(key(of: row), row: id)
    }

    /// Removes the entry of `row`, stored under `id`.
    /// - Complexity: O(log n)
    mutating func remove(_ row: Row, at id: RowID) {
        switch layout {
        case let .scalar(kind):
            // A value that does not pack has no entry here (it would have made the index general).
            if let key = kind.pack(row[slots[0]]) { scalars.remove(key, row: id) }
        case .string:
            if case let .string(string) = row[slots[0]] { strings.remove(StringKey(string: string), row: id) }
        case .general:
            general.remove(key(of: row), row: id)
        }
    }

    /// Moves every entry to a general tree, in the same order (packing preserves it).
    private mutating func becomeGeneral() {
        var entries: [BTree<IndexKey>.Entry] = []
        entries.reserveCapacity(count)
        scan { entry in
            entries.append(.init(key: entry.key, row: entry.row))
            return true
        }
        layout = .general
        general = BTree(sorted: entries)
        scalars = BTree()
        strings = BTree()
    }

    // MARK: Reading

    /// Calls `body` with the row of each entry whose key equals (`==`) `key`, in row
    /// order, until `body` returns false: what unique checks and lookups ask.
    /// - Complexity: O(log n + k) for k entries visited.
    public func forEachRow(equalTo key: IndexKey, _ body: (RowID) -> Bool) {
        withUnsafePointer(to: self) { Self.forEachRow(equalTo: key, in: $0, body) }
    }

    /// `forEachRow(equalTo:_:)` on the index at `index`, read in place: only the
    /// tree in use is copied out of it. A lookup in a version's indexes
    /// (`StoreVersion.lookup(unique:constraint:of:)`) otherwise copied the whole
    /// index out of their array, retaining and releasing its slots and its three
    /// trees (about 250 instructions of a W2 lookup).
    /// - Complexity: O(log n + k) for k entries visited.
    static func forEachRow(equalTo key: IndexKey, in index: UnsafePointer<OrderedIndex>, _ body: (RowID) -> Bool) {
        switch index.pointee.layout {
        case let .scalar(kind):
            // A value of another kind is never `==` to a packed one, and NaN to nothing.
            guard key.tail.isEmpty, let packed = kind.pack(key.head), !kind.isUnequalWhenTied(packed) else { return }
            index.pointee.scalars.forEachEntry(tiedWith: packed) { body($0.row) }
        case .string:
            // Strings tie in index order exactly when they are `==`.
            guard key.tail.isEmpty, case let .string(string) = key.head else { return }
            index.pointee.strings.forEachEntry(tiedWith: StringKey(string: string)) { body($0.row) }
        case .general:
            // Tied in index order is not always equal (`==`): two NaNs tie but differ, and
            // so do some URLs; keep looking past those.
            index.pointee.general.forEachEntry(tiedWith: key) { entry in entry.key != key || body(entry.row) }
        }
    }

    /// Calls `body` with each entry between `lower` and `upper` (nil: unbounded), in
    /// index order or, with `reverse`, backwards, until `body` returns false or throws.
    ///
    /// An error from `body` is caught inside the walk and thrown from here, so no
    /// error crosses the B-tree's generic frames: Swift 6.3 debug builds released
    /// the bounds twice on that path, freeing strings the table still held.
    /// - Complexity: O(log n + k) for k entries visited.
    public func scan<Failure: Error>(
        from lower: IndexBound? = nil, to upper: IndexBound? = nil, reverse: Bool = false,
        _ body: (IndexEntry) throws(Failure) -> Bool
    ) throws(Failure) {
        var failure: Failure?
        func visit(_ entry: IndexEntry) -> Bool {
            do {
                return try body(entry)
            } catch {
                failure = error
                return false
            }
        }
        switch layout {
        case let .scalar(kind):
            scalars.scan(from: lower.map { Self.packedBound($0, kind) }, to: upper.map { Self.packedBound($0, kind) }, reverse: reverse) {
                visit(IndexEntry(row: $0.row, stored: .scalar(kind, $0.key)))
            }
        case .string:
            strings.scan(from: lower.map { Self.stringBound($0) }, to: upper.map { Self.stringBound($0) }, reverse: reverse) {
                visit(IndexEntry(row: $0.row, stored: .string($0.key.string)))
            }
        case .general:
            general.scan(from: lower, to: upper, reverse: reverse) {
                visit(IndexEntry(row: $0.row, stored: .general($0.key)))
            }
        }
        if let failure { throw failure }
    }

    /// How many entries lie between `lower` and `upper` (nil: unbounded), up to `cap`
    /// (`BTree.count(from:to:cap:)`: the count, or a number at least `cap`).
    /// - Complexity: O(log n + k / b) for k entries counted, b entries a leaf.
    public func count(from lower: IndexBound?, to upper: IndexBound?, cap: Int = .max) -> Int {
        switch layout {
        case let .scalar(kind):
            scalars.count(from: lower.map { Self.packedBound($0, kind) }, to: upper.map { Self.packedBound($0, kind) }, cap: cap)
        case .string:
            strings.count(from: lower.map { Self.stringBound($0) }, to: upper.map { Self.stringBound($0) }, cap: cap)
        case .general:
            general.count(from: lower, to: upper, cap: cap)
        }
    }

    /// `bound` on packed keys: integer comparisons when its value packs, else value
    /// comparisons (a `.double` bound on an `.int` index, say).
    private static func packedBound(_ bound: IndexBound, _ kind: ScalarKind) -> BTree<PackedKey>.Bound {
        if let first = bound.prefix.first, let packed = kind.pack(first) { return .init(key: packed, inclusive: bound.inclusive) }
        return .init(bound.prefix, inclusive: bound.inclusive, decoding: kind)
    }

    /// `bound` on string keys.
    private static func stringBound(_ bound: IndexBound) -> BTree<StringKey>.Bound {
        if case let .string(string)? = bound.prefix.first { return .init(key: StringKey(string: string), inclusive: bound.inclusive) }
        return .init(bound.prefix, inclusive: bound.inclusive, decoding: ())
    }

    /// Traps unless the tree in use keeps its invariants (`BTree._checkInvariants`)
    /// and the others are empty.
    public func _checkInvariants() {
        general._checkInvariants()
        scalars._checkInvariants()
        strings._checkInvariants()
        precondition(general.count + scalars.count + strings.count == count, "entries outside the tree in use")
    }
}

/// An index entry as scans hand it out: the row, and its key on demand.
public struct IndexEntry {
    enum Stored {
        case general(IndexKey)
        case scalar(ScalarKind, PackedKey)
        case string(String)
    }

    public let row: RowID
    let stored: Stored

    /// The entry's key as values.
    public var key: IndexKey {
        switch stored {
        case let .general(key): key
        case let .scalar(kind, packed): IndexKey(kind.unpack(packed))
        case let .string(string): IndexKey(.string(string))
        }
    }
}
