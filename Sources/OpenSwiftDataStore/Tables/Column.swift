import Foundation

/// How a column stores its values: contiguous typed buffers for the kinds scans and
/// indexes read most, `Value`s for the rest.
public enum ColumnKind: Hashable, Sendable {
    case bool
    case int
    case uint
    /// `Double` and `Float` attributes.
    case double
    /// Seconds since the reference date, as `Date` holds them.
    case date
    case string
    /// A to-one relationship: the destination row's identifier.
    case reference
    /// A to-many relationship: the destination rows' identifiers, in order.
    case references
    /// Any other value (data, UUIDs, URLs, decimals, collections, `Codable` composites).
    case value

    /// The column kind for an attribute of `type`.
    public init(_ type: ValueType) {
        switch type {
        case .bool: self = .bool
        case .int: self = .int
        case .uint: self = .uint
        case .float, .double: self = .double
        case .date: self = .date
        case .string: self = .string
        default: self = .value
        }
    }

    /// The column kinds of a row of `entity`, slot by slot.
    public static func kinds(of entity: EntityDescription) -> [ColumnKind] {
        entity.attributes.map { ColumnKind($0.type) } + entity.relationships.map { $0.isToMany ? .references : .reference }
    }
}

/// One column of one segment: the values of one slot for the segment's positions.
///
/// One form holds the values: the buffer `kind` names, or, once its segment is full
/// and sealed, a smaller form of it (a dictionary and codes, a string heap, packed
/// numbers: `seal(mayHeapLongStrings:)`). `present` marks the positions whose value
/// is not nil (typed kinds only: a `.value` column stores `.null` itself).
/// A value that does not fit the typed buffer (an integer in a `Double` column, say,
/// from an imported document) turns the column into a `.value` column, so every
/// `Value` round-trips exactly.
///
/// Buffers are shared by the versions that hold the column, so a commit copies only
/// the columns it writes: Swift arrays, but for the integers, doubles and strings,
/// which an insert appends to without copying (`AppendBuffer`). (An append sets a bit
/// in the last word of `present` and `bits`, which copies those 64 words at most.)
struct Column: Sendable {
    private(set) var kind: ColumnKind
    private(set) var ints: AppendBuffer<Int64> = []
    private(set) var uints: AppendBuffer<UInt64> = []
    /// `.double` values, and `.date` values as seconds since the reference date.
    private(set) var doubles: AppendBuffer<Double> = []
    /// `.string` values, one per position, unless the column is encoded.
    private(set) var strings: AppendBuffer<String> = []
    /// An encoded `.string` column's distinct strings (`seal(mayHeapLongStrings:)`): the value at a
    /// position is `dictionary[codes[position]]`. Empty when not encoded.
    private(set) var dictionary: [String] = []
    /// An encoded `.string` column's code at each position.
    private(set) var codes: [UInt16] = []
    /// `.references` values: empty while every list of the column is (to-many
    /// relationships of a large import usually are, or are held on the other side),
    /// else one per position. An empty array per row was 8 bytes a row.
    private(set) var lists: [[RowID]] = []
    private(set) var values: [Value] = []
    /// `.bool` values, one bit per position.
    private(set) var bits: [UInt64] = []
    /// One bit per position: set where the value is not nil (typed kinds).
    private(set) var present: [UInt64] = []
    private(set) var count = 0
    /// A sealed `.double` or `.date` column's values, packed (`seal(mayHeapLongStrings:)`); `doubles` is
    /// then empty.
    private(set) var packedDoubles: PackedDoubles?
    /// A sealed `.int` or `.reference` column's values, packed (`seal(mayHeapLongStrings:)`); `ints` is
    /// then empty.
    private(set) var packedInts: PackedInts?
    /// A sealed `.string` column's strings back to back (`seal(mayHeapLongStrings:)`); `strings` is then
    /// empty.
    private(set) var heap: StringHeap?

    init(kind: ColumnKind) {
        self.kind = kind
    }

    /// A column of `count` positions whose buffers were read whole (a document's
    /// column frame): `present` and the buffer `kind` names must cover `count`
    /// positions, with zero values, `""` and `[]` where a value is nil, as `clear`
    /// leaves them (`lists` may be empty instead when every list is).
    init(
        kind: ColumnKind, count: Int, present: [UInt64], ints: AppendBuffer<Int64> = [], uints: AppendBuffer<UInt64> = [],
        doubles: AppendBuffer<Double> = [], strings: AppendBuffer<String> = [], lists: [[RowID]] = [], values: [Value] = [],
        bits: [UInt64] = []
    ) {
        self.kind = kind
        self.count = count
        self.present = present
        self.ints = ints
        self.uints = uints
        self.doubles = doubles
        self.strings = strings
        self.lists = lists
        self.values = values
        self.bits = bits
    }

    // MARK: Reading

    /// The value at `position`.
    /// - Complexity: O(1)
    func value(at position: Int) -> Value {
        if kind == .value { return values[position] }
        guard Bitmap.test(present, position) else { return .null }
        switch kind {
        case .bool: return .bool(Bitmap.test(bits, position))
        case .int: return .int(int(at: position))
        case .uint: return .uint(uints[position])
        case .double: return .double(double(at: position))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: double(at: position)))
        case .string: return .string(storedString(at: position))
        case .reference: return .reference(RowID(int(at: position)))
        case .references: return .references(list(at: position))
        case .value: return values[position]
        }
    }

    /// The list at `position` of a `.references` column (`[]` where it is nil).
    /// - Complexity: O(1)
    @inline(__always)
    func list(at position: Int) -> [RowID] { lists.isEmpty ? [] : lists[position] }

    /// The string a `.string` column holds at `position` (`""` where it is nil, unless
    /// encoded), present or not.
    /// - Complexity: O(1)
    @inline(__always)
    func storedString(at position: Int) -> String {
        // (A forced unwrap reads the sealed form in place. `if let` copied it, and
        // `??`'s autoclosure copied the whole column: a retain and a release of each of
        // its buffers per value read.)
        if !dictionary.isEmpty { return dictionary[Int(codes[position])] }
        if heap != nil { return heap![position] }
        return strings[position]
    }

    /// The number an `.int` or `.reference` column holds at `position` (whatever it
    /// holds where the value is nil).
    /// - Complexity: O(1)
    @inline(__always)
    func int(at position: Int) -> Int64 {
        if packedInts != nil { return packedInts![position] }
        return ints[position]
    }

    /// The number a `.double` or `.date` column holds at `position` (whatever it holds
    /// where the value is nil).
    /// - Complexity: O(1)
    @inline(__always)
    func double(at position: Int) -> Double {
        if packedDoubles != nil { return packedDoubles![position] }
        return doubles[position]
    }

    /// Calls `body` with the numbers of an `.int` or `.reference` column, one per
    /// position, unpacked into a buffer of their own when the column is packed.
    /// - Complexity: O(1); O(positions) when packed
    func withInts<R>(_ body: (UnsafeBufferPointer<Int64>) -> R) -> R {
        if let packedInts { return packedInts.unpacked().withUnsafeBufferPointer(body) }
        return ints.withUnsafeBufferPointer(body)
    }

    /// Calls `body` with the numbers of a `.double` or `.date` column, one per
    /// position, unpacked into a buffer of their own when the column is packed.
    /// - Complexity: O(1); O(positions) when packed
    func withDoubles<R>(_ body: (UnsafeBufferPointer<Double>) -> R) -> R {
        if let packedDoubles { return packedDoubles.unpacked().withUnsafeBufferPointer(body) }
        return doubles.withUnsafeBufferPointer(body)
    }

    /// Calls `body` with each position of `positions` and the number an `.int` or
    /// `.reference` column holds there, reading a packed column in one pass over its
    /// words (a document's save writes a segment's run of rows at a time).
    /// - Complexity: O(`positions.count`)
    @inline(__always)
    func forEachInt(in positions: Range<Int>, _ body: (Int, Int64) -> Void) {
        if let packedInts { return packedInts.forEach(in: positions, body) }
        ints.withUnsafeBufferPointer { ints in
            for p in positions { body(p, ints[p]) }
        }
    }

    /// Calls `body` with each position of `positions` and the number a `.double` or
    /// `.date` column holds there, reading a packed column in one pass over its words.
    /// - Complexity: O(`positions.count`)
    @inline(__always)
    func forEachDouble(in positions: Range<Int>, _ body: (Int, Double) -> Void) {
        if let packedDoubles { return packedDoubles.forEach(in: positions, body) }
        doubles.withUnsafeBufferPointer { doubles in
            for p in positions { body(p, doubles[p]) }
        }
    }

    /// Calls `body` with each position of `positions` and the UTF-8 bytes of the
    /// string a `.string` column stores there (`storedString(at:)`), in place: a
    /// heap's strings are not made again, which cost an allocation for each longer
    /// than 15 bytes.
    /// - Complexity: O(`positions.count` + their bytes)
    func forEachStoredUTF8(in positions: Range<Int>, _ body: (Int, UnsafeBufferPointer<UInt8>) -> Void) {
        if !dictionary.isEmpty {
            codes.withUnsafeBufferPointer { codes in
                for p in positions {
                    var string = dictionary[Int(codes[p])]
                    string.withUTF8 { body(p, $0) }
                }
            }
        } else if let heap {
            heap.forEachUTF8(in: positions, body)
        } else {
            strings.withUnsafeBufferPointer { strings in
                for p in positions {
                    var string = strings[p]
                    string.withUTF8 { body(p, $0) }
                }
            }
        }
    }

    /// The string at `position` of a `.string` column `column` points to (nil where the
    /// value is nil or the column holds another kind), reading only the fields it
    /// needs in place. A method called on `pointee` copied the whole column first (a
    /// retain and a release of each of its buffers), which made a million-entry index
    /// build at a document's open half again as long.
    /// - Complexity: O(1)
    @inline(__always)
    static func string(in column: UnsafePointer<Column>, at position: Int) -> String? {
        guard column.pointee.kind == .string, isPresent(in: column, at: position) else { return nil }
        if !column.pointee.dictionary.isEmpty { return column.pointee.dictionary[Int(column.pointee.codes[position])] }
        if column.pointee.heap != nil { return column.pointee.heap![position] }
        return column.pointee.strings[position]
    }

    /// Whether the value at `position` of the column `column` points to is not nil,
    /// read in place (`string(in:at:)`).
    @inline(__always)
    static func isPresent(in column: UnsafePointer<Column>, at position: Int) -> Bool {
        column.pointee.present.withUnsafeBufferPointer { $0[position >> 6] & (1 << UInt64(position & 63)) != 0 }
    }

    /// `value(at:)` of the column `column` points to, in place (`string(in:at:)`): how
    /// rows are read for models.
    /// - Complexity: O(1)
    @inline(__always)
    static func value(in column: UnsafePointer<Column>, at position: Int) -> Value {
        let kind = column.pointee.kind
        if kind == .value { return column.pointee.values[position] }
        guard isPresent(in: column, at: position) else {
            return .null
        }
        switch kind {
        case .bool: return .bool(Bitmap.test(column.pointee.bits, position))
        case .int, .reference:
            let v = column.pointee.packedInts != nil ? column.pointee.packedInts![position] : column.pointee.ints[position]
            return kind == .int ? .int(v) : .reference(RowID(v))
        case .uint: return .uint(column.pointee.uints[position])
        case .double, .date:
            let v = column.pointee.packedDoubles != nil ? column.pointee.packedDoubles![position] : column.pointee.doubles[position]
            return kind == .double ? .double(v) : .date(Date(timeIntervalSinceReferenceDate: v))
        case .string:
            if !column.pointee.dictionary.isEmpty { return .string(column.pointee.dictionary[Int(column.pointee.codes[position])]) }
            if column.pointee.heap != nil { return .string(column.pointee.heap![position]) }
            return .string(column.pointee.strings[position])
        case .references: return .references(column.pointee.lists.isEmpty ? [] : column.pointee.lists[position])
        case .value: return column.pointee.values[position]
        }
    }

    /// The value at `position` of the column `column` points to, packed as an index key
    /// of `scalar` kind; nil where it is nil or the column holds another kind. In place
    /// (`string(in:at:)`).
    /// - Complexity: O(1)
    @inline(__always)
    static func packed(in column: UnsafePointer<Column>, at position: Int, as scalar: ScalarKind) -> PackedKey? {
        guard isPresent(in: column, at: position) else { return nil }
        switch (column.pointee.kind, scalar) {
        case (.int, .int):
            let v = column.pointee.packedInts != nil ? column.pointee.packedInts![position] : column.pointee.ints[position]
            return PackedKey(bits: ScalarKind.pack(v))
        case (.uint, .uint): return PackedKey(bits: column.pointee.uints[position])
        case (.double, .double), (.date, .date):
            let v = column.pointee.packedDoubles != nil ? column.pointee.packedDoubles![position] : column.pointee.doubles[position]
            return PackedKey(bits: ScalarKind.pack(v))
        case (.bool, .bool): return PackedKey(bits: Bitmap.test(column.pointee.bits, position) ? 1 : 0)
        default: return nil
        }
    }

    /// Whether the column's strings are encoded (`seal(mayHeapLongStrings:)`).
    var isEncoded: Bool { !dictionary.isEmpty }

    /// Whether a sealed form holds the values (`seal(mayHeapLongStrings:)`): writes unpack it, or write
    /// in place where the value fits.
    var isPacked: Bool { isEncoded || heap != nil || packedInts != nil || packedDoubles != nil }

    // MARK: Writing

    /// Adds `value` after the last position.
    ///
    /// Appends the typed value itself (a placeholder, then `set`, cost a second
    /// switch and a second uniqueness check of each buffer: about a tenth of storing
    /// a large insert).
    /// - Complexity: amortized O(1)
    mutating func append(_ value: Value) {
        if isPacked { unpack() }
        let position = count
        count += 1
        if Bitmap.wordCount(count) > present.count { present.append(0) }
        if kind == .bool, Bitmap.wordCount(count) > bits.count { bits.append(0) }
        switch (kind, value) {
        case let (.int, .int(v)): ints.append(v)
        case let (.uint, .uint(v)): uints.append(v)
        case let (.double, .double(v)): doubles.append(v)
        case let (.date, .date(v)): doubles.append(v.timeIntervalSinceReferenceDate)
        case let (.string, .string(v)): strings.append(v)
        case let (.reference, .reference(v)): ints.append(v.rawValue)
        case let (.references, .references(v)): appendList(v)
        case let (.bool, .bool(v)): if v { bits[position >> 6] |= 1 << UInt64(position & 63) }
        case (.value, _):
            values.append(value)
            return
        default:
            // Nil, or a value the typed buffer cannot hold: a placeholder, then `set`.
            appendPlaceholder()
            set(value, at: position)
            return
        }
        present[position >> 6] |= 1 << UInt64(position & 63)
    }

    /// Appends the value in `slot` of each of `rows`: typed values straight into the
    /// buffer `kind` names; a value of another kind (or nil) through `append(_:)`,
    /// after which the rest go that way if it changed the column's kind.
    mutating func append(_ rows: ArraySlice<Row>, slot: Int) {
        // A batch of some size (a look's kept inserts, a commit's bulk insert) reserves
        // the whole segment: batches of 1,024 reserving what each needed copied every
        // column one and a half times over while a segment filled.
        // (A small one lets the buffers grow as arrays do: reserving exactly what each
        // needs copied the column every time.)
        if isPacked { unpack() }
        if rows.count >= 256 { reserve(max(count + rows.count, Table.segmentSize)) }
        let kind = self.kind
        var i = rows.startIndex
        while i < rows.endIndex {
            let value = rows[i][slot]
            switch (kind, value) {
            case let (.double, .double(v)): doubles.append(v); appendPresent()
            case let (.date, .date(v)): doubles.append(v.timeIntervalSinceReferenceDate); appendPresent()
            case let (.int, .int(v)): ints.append(v); appendPresent()
            case let (.string, .string(v)): strings.append(v); appendPresent()
            default:
                append(value)
                if self.kind != kind {
                    for row in rows[(i + 1)...] { append(row[slot]) }
                    return
                }
            }
            i += 1
        }
    }

    /// Makes room for `capacity` positions in the buffers this column's kind writes.
    private mutating func reserve(_ capacity: Int) {
        present.reserveCapacity(Bitmap.wordCount(capacity))
        switch kind {
        case .int, .reference: ints.reserveCapacity(capacity)
        case .uint: uints.reserveCapacity(capacity)
        case .double, .date: doubles.reserveCapacity(capacity)
        case .string: strings.reserveCapacity(capacity)
        case .references: if !lists.isEmpty { lists.reserveCapacity(capacity) }
        case .value: values.reserveCapacity(capacity)
        case .bool: bits.reserveCapacity(Bitmap.wordCount(capacity))
        }
    }

    /// Counts a new last position, present: its value was just appended to the typed
    /// buffer.
    @inline(__always)
    private mutating func appendPresent() {
        let position = count
        count += 1
        if Bitmap.wordCount(count) > present.count { present.append(0) }
        present[position >> 6] |= 1 << UInt64(position & 63)
    }

    /// A zero value, `""` or `[]` at the new last position, as `clear` leaves them.
    private mutating func appendPlaceholder() {
        switch kind {
        case .bool, .value: break
        case .int, .reference: ints.append(0)
        case .uint: uints.append(0)
        case .double, .date: doubles.append(0)
        case .string: strings.append("")
        case .references: appendList([])
        }
    }

    /// Appends `list` at the last position (counted already), making the lists whole
    /// first when it is the first that is not empty.
    @inline(__always)
    private mutating func appendList(_ list: [RowID]) {
        if lists.isEmpty {
            guard !list.isEmpty else { return }
            lists = Array(repeating: [], count: count - 1)
        }
        lists.append(list)
    }

    /// Replaces the value at `position`.
    /// - Complexity: O(1); O(count) when the value does not fit the typed buffer.
    mutating func set(_ value: Value, at position: Int) {
        if kind == .value {
            values[position] = value
            return
        }
        if case .null = value {
            clear(at: position)
            return
        }
        switch (kind, value) {
        case let (.bool, .bool(v)): Bitmap.set(&bits, position, v)
        case let (.int, .int(v)): setInt(v, at: position)
        case let (.uint, .uint(v)): uints[position] = v
        case let (.double, .double(v)): setDouble(v, at: position)
        case let (.date, .date(v)): setDouble(v.timeIntervalSinceReferenceDate, at: position)
        case let (.string, .string(v)):
            if isEncoded {
                setEncoded(v, at: position)
            } else {
                if heap != nil { unpack() }
                strings[position] = v
            }
        case let (.reference, .reference(v)): setInt(v.rawValue, at: position)
        case let (.references, .references(v)):
            if lists.isEmpty {
                if !v.isEmpty {
                    lists = Array(repeating: [], count: count)
                    lists[position] = v
                }
            } else {
                lists[position] = v
            }
        default:
            becomeValues()
            values[position] = value
            return
        }
        Bitmap.set(&present, position, true)
    }

    /// Writes `v` at `position` of an `.int` or `.reference` column: in the packed
    /// frame when it fits, else into the unpacked numbers.
    private mutating func setInt(_ v: Int64, at position: Int) {
        if packedInts != nil {
            if packedInts!.set(v, at: position) { return }
            unpack()
        }
        ints[position] = v
    }

    /// Writes `v` at `position` of a `.double` or `.date` column: in the packed frame
    /// when it fits, else into the unpacked numbers.
    private mutating func setDouble(_ v: Double, at position: Int) {
        if packedDoubles != nil {
            if packedDoubles!.set(v, at: position) { return }
            unpack()
        }
        doubles[position] = v
    }

    /// Makes the value at `position` nil, releasing what it held (an encoded string
    /// stays in its column's dictionary, a heap's bytes in the heap).
    mutating func clear(at position: Int) {
        switch kind {
        case .value: values[position] = .null
        // (An encoded column keeps the code: its string stays in the dictionary anyway.)
        case .string: if !isEncoded && heap == nil { strings[position] = "" }
        case .references: if !lists.isEmpty { lists[position] = [] }
        default: break
        }
        Bitmap.set(&present, position, false)
    }

    // MARK: Sealing

    /// Stores a full segment's column in the fewest bytes that still read in O(1):
    /// strings that repeat enough as codes into a dictionary (`encodedStrings()`), other
    /// strings back to back (`StringHeap`), numbers of narrow spread bit-packed above
    /// a base (`PackedInts`, `PackedDoubles`). A column no form makes smaller stays as
    /// it is; a sealed column stays sealed (this does nothing).
    ///
    /// `mayHeapLongStrings` says whether strings longer than a small string may move
    /// into a heap: not where an index holds them too, since an index key shares such
    /// a string's storage with the column, which keeps it alive after the column lets
    /// go of it (the heap's bytes would come on top). Short strings are copied into
    /// every key anyway.
    /// - Complexity: O(positions)
    mutating func seal(mayHeapLongStrings: Bool) {
        guard count >= 64, !isPacked else { return }
        switch kind {
        case .string:
            // What a heap would take, when it may hold these strings (it is built only
            // when chosen).
            let heapBytes = mayHeapLongStrings || !StringHeap.holdsLongStrings(strings)
                ? StringHeap.byteCount(of: strings, present: present) : nil
            if let (dictionary, codes) = encodedStrings() {
                // The smaller, but a dictionary of short strings unless a heap takes less
                // than half: segments may share it, and index builds number its strings
                // once (2,000 cities take about as much either way, before sharing). A
                // dictionary of long strings is rarely shared: long notes, 30 % filled,
                // take a third as much in a heap.
                let encodedBytes = codes.count * 2 + StringHeap.arrayByteCount(dictionary)
                let heapWins = heapBytes.map {
                    StringHeap.holdsLongStrings(dictionary) ? $0 < encodedBytes : $0 * 2 <= encodedBytes
                }
                if heapWins != true {
                    self.dictionary = dictionary
                    self.codes = codes
                    strings = []
                    return
                }
            }
            // A heap pays when it saves an eighth: each read makes the string again.
            guard let heapBytes, heapBytes * 8 <= StringHeap.arrayByteCount(strings) * 7 else { return }
            heap = StringHeap(strings, present: present)
            strings = []
        case .double, .date:
            guard let packed = doubles.withUnsafeBufferPointer({ PackedDoubles($0, present: present) }) else { return }
            packedDoubles = packed
            doubles = []
        case .int, .reference:
            guard let packed = ints.withUnsafeBufferPointer({ PackedInts($0, present: present) }) else { return }
            packedInts = packed
            ints = []
        default:
            return
        }
    }

    /// Turns a sealed column back into a value per position in the typed buffer, as
    /// appends and writes that do not fit the sealed form need. Nil positions hold
    /// zero values and `""`, as `clear` leaves them.
    /// - Complexity: O(positions)
    mutating func unpack() {
        if isEncoded { decodeStrings() }
        if let heap {
            strings = AppendBuffer(heap.unpacked())
            self.heap = nil
            for p in 0..<count where !Bitmap.test(present, p) { strings[p] = "" }
        }
        if let packedInts {
            ints = AppendBuffer(packedInts.unpacked())
            self.packedInts = nil
            for p in 0..<count where !Bitmap.test(present, p) { ints[p] = 0 }
        }
        if let packedDoubles {
            doubles = AppendBuffer(packedDoubles.unpacked())
            self.packedDoubles = nil
            for p in 0..<count where !Bitmap.test(present, p) { doubles[p] = 0 }
        }
    }

    /// Shares `previous`'s dictionary when this column's strings are all in it, or
    /// extends a copy of it with the ones that are not while that stays within
    /// `encodedStrings()`'s limit: a city column's segments then hold one dictionary
    /// between them, where each held its own (about 7 bytes a row for 2,000 cities).
    /// Both columns must be encoded; otherwise nothing changes.
    /// - Complexity: O(distinct strings of both)
    mutating func shareDictionary(with previous: Column) {
        guard isEncoded, previous.isEncoded else { return }
        // The same buffer already (an array's storage is shared until written).
        if Self.sameStorage(dictionary, previous.dictionary) { return }
        var table = StringCodeTable(capacity: previous.dictionary.count + dictionary.count)
        for (code, string) in previous.dictionary.enumerated() { table.insert(string, code: UInt16(code)) }
        var shared = previous.dictionary
        let limit = count * 5 / 8
        var recode = [UInt16](repeating: 0, count: dictionary.count)
        for (code, string) in dictionary.enumerated() {
            if let found = table.code(of: string, in: shared) {
                recode[code] = found
            } else {
                guard shared.count < limit, shared.count < Int(UInt16.max) else { return }
                shared.append(string)
                table.insert(string, code: UInt16(shared.count - 1))
                recode[code] = UInt16(shared.count - 1)
            }
        }
        codes = codes.map { recode[Int($0)] }
        dictionary = shared
    }

    /// Whether two arrays are one buffer.
    private static func sameStorage(_ a: [String], _ b: [String]) -> Bool {
        a.count == b.count && a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { a.baseAddress == $0.baseAddress } }
    }

    /// The dictionary and codes of a `.string` column whose strings repeat enough that
    /// a code per position (2 bytes) and each distinct string once take at most three
    /// quarters of a string per position (16 bytes): a city or a category column, or a
    /// column mostly nil; nil when they do not. Realm's string enumeration, per
    /// segment (`seal(mayHeapLongStrings:)` weighs it against a heap). Strings are told apart by their two words (`StringOrder.words`), so
    /// one is never given another's code: small strings by their bytes, long ones by
    /// their storage (equal long strings in different storage are stored apart).
    /// - Complexity: O(positions)
    private func encodedStrings() -> (dictionary: [String], codes: [UInt16])? {
        guard kind == .string, !isEncoded, count >= 64 else { return nil }
        let limit = count * 5 / 8
        var table = [UInt16](repeating: 0, count: Self.tableSize(for: count))
        let mask = table.count - 1
        var dictionary: [String] = []
        var codes = [UInt16](repeating: 0, count: count)
        for p in 0..<count {
            // Nearly every string distinct so far (a name column): it will not pay.
            if p == 1_024, dictionary.count > 920 { return nil }
            let string = strings[p]
            let (w0, w1) = StringOrder.words(string)
            var slot = Self.hash(w0, w1) & mask
            while true {
                let entry = table[slot]
                if entry == 0 {
                    guard dictionary.count < limit else { return nil }
                    dictionary.append(string)
                    table[slot] = UInt16(dictionary.count)
                    codes[p] = UInt16(dictionary.count - 1)
                    break
                }
                let (v0, v1) = StringOrder.words(dictionary[Int(entry) - 1])
                if v0 == w0, v1 == w1 {
                    codes[p] = entry - 1
                    break
                }
                slot = (slot + 1) & mask
            }
        }
        // Pays: `limit` keeps the dictionary (16 bytes a string) and the codes within
        // three quarters of the strings.
        return (dictionary, codes)
    }

    /// The open-addressing table `encodedStrings()` sizes for `count` strings: a power of two,
    /// at most half full.
    fileprivate static func tableSize(for count: Int) -> Int {
        var size = 64
        while size < count * 2 { size <<= 1 }
        return size
    }

    @inline(__always)
    fileprivate static func hash(_ w0: UInt64, _ w1: UInt64) -> Int {
        var h = w0 &* 0x9E37_79B9_7F4A_7C15 ^ (w1 &+ 0x632B_E59B_D9B4_E019)
        h ^= h >> 29
        h = h &* 0xBF58_476D_1CE4_E5B9
        h ^= h >> 32
        return Int(truncatingIfNeeded: h)
    }

    /// Writes `string` at `position` of an encoded column: its code, a new one if it
    /// is new. Strings overwritten stay in the dictionary, so once it holds as many as
    /// `encodedStrings()` allows the column is decoded: updates of distinct strings (a note column
    /// filled row by row) then cost what they cost unencoded.
    /// - Complexity: O(distinct strings), at most five eighths of the positions
    private mutating func setEncoded(_ string: String, at position: Int) {
        let (w0, w1) = StringOrder.words(string)
        if let code = dictionary.firstIndex(where: { StringOrder.words($0) == (w0, w1) }) {
            codes[position] = UInt16(code)
        } else if dictionary.count < count * 5 / 8 {
            dictionary.append(string)
            codes[position] = UInt16(dictionary.count - 1)
        } else {
            decodeStrings()
            strings[position] = string
        }
    }

    /// Turns an encoded column back into a string per position.
    /// - Complexity: O(positions)
    private mutating func decodeStrings() {
        strings = AppendBuffer(codes.map { dictionary[Int($0)] })
        dictionary = []
        codes = []
    }

    /// Turns the column into a `.value` column holding the same values.
    private mutating func becomeValues() {
        let all = (0..<count).map(value(at:))
        self = Column(kind: .value)
        values = all
        count = all.count
    }

    /// The column without the positions `keep` does not list, in `keep`'s order.
    func compacted(keeping keep: [Int]) -> Column {
        var column = Column(kind: kind)
        for p in keep { column.append(value(at: p)) }
        return column
    }
}

/// Codes of a dictionary's strings by open addressing, told apart as `encodedStrings()`
/// tells them (`StringOrder.words`), for `Column.shareDictionary(with:)`.
private struct StringCodeTable {
    /// Code + 1 per slot; 0 where empty.
    private var slots: [UInt16]

    init(capacity: Int) {
        slots = [UInt16](repeating: 0, count: Column.tableSize(for: capacity))
    }

    /// Records `string` under `code` (it must not be recorded yet).
    mutating func insert(_ string: String, code: UInt16) {
        let (w0, w1) = StringOrder.words(string)
        let mask = slots.count - 1
        var slot = Column.hash(w0, w1) & mask
        while slots[slot] != 0 { slot = (slot + 1) & mask }
        slots[slot] = code + 1
    }

    /// The code of `string`, whose strings `dictionary` holds by code.
    func code(of string: String, in dictionary: [String]) -> UInt16? {
        let (w0, w1) = StringOrder.words(string)
        let mask = slots.count - 1
        var slot = Column.hash(w0, w1) & mask
        while slots[slot] != 0 {
            let code = slots[slot] - 1
            if StringOrder.words(dictionary[Int(code)]) == (w0, w1) { return code }
            slot = (slot + 1) & mask
        }
        return nil
    }
}

/// Bit operations on `[UInt64]` bitmaps, bit `i` in word `i / 64`.
enum Bitmap {
    @inline(__always)
    static func wordCount(_ bits: Int) -> Int { (bits + 63) >> 6 }

    @inline(__always)
    static func test(_ words: [UInt64], _ i: Int) -> Bool { words[i >> 6] & (1 << UInt64(i & 63)) != 0 }

    @inline(__always)
    static func set(_ words: inout [UInt64], _ i: Int, _ on: Bool) {
        if on { words[i >> 6] |= 1 << UInt64(i & 63) } else { words[i >> 6] &= ~(1 << UInt64(i & 63)) }
    }

    /// A bitmap of `count` bits, every one set.
    static func allSet(_ count: Int) -> [UInt64] {
        var words = [UInt64](repeating: ~0, count: wordCount(count))
        if count & 63 != 0 { words[words.count - 1] = (1 << UInt64(count & 63)) - 1 }
        return words
    }

    /// Sets the bits of `destination` from bit `first` on where `source` has the bits
    /// at `positions` set (`destination`'s are clear there), up to a word at a time;
    /// returns how many it set.
    /// - Complexity: O(`positions.count` / 64)
    @discardableResult
    static func copy(
        _ source: [UInt64], _ positions: Range<Int>, into destination: UnsafeMutableBufferPointer<UInt64>, at first: Int
    ) -> Int {
        var copied = 0
        source.withUnsafeBufferPointer { source in
            var p = positions.lowerBound, i = first
            while p < positions.upperBound {
                // As many bits as stay within `i`'s word.
                let take = min(64 - (i & 63), positions.upperBound - p)
                let shift = p & 63
                var bits = source[p >> 6] >> UInt64(shift)
                if shift + take > 64 { bits |= source[(p >> 6) + 1] << UInt64(64 - shift) }
                if take < 64 { bits &= (1 << UInt64(take)) - 1 }
                destination[i >> 6] |= bits << UInt64(i & 63)
                copied += bits.nonzeroBitCount
                p += take
                i += take
            }
        }
        return copied
    }

    /// The number of set bits.
    static func popcount(_ words: [UInt64]) -> Int { words.reduce(0) { $0 + $1.nonzeroBitCount } }

    /// Calls `body` with the position of every set bit, in order.
    @inline(__always)
    static func forEachSet(_ words: [UInt64], _ body: (Int) throws -> Void) rethrows {
        for (w, word) in words.enumerated() {
            var rest = word
            while rest != 0 {
                let bit = rest.trailingZeroBitCount
                try body(w << 6 | bit)
                rest &= rest - 1
            }
        }
    }
}
