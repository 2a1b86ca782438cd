/// Integers stored in `width` bits each above a base (frame of reference): how a sealed
/// segment holds a column of numbers whose spread is narrow, and a string heap the
/// ends of its strings.
///
/// Dates of one decade in whole seconds take 29 bits instead of 64; prices in cents
/// up to 10,000 take 20. Reading a value is a shift and a mask over one or two words.
struct PackedInts: Sendable {
    /// The smallest value; every value is `base + bits`.
    let base: Int64
    /// Bits per value, 0 (every value is `base`) to 63.
    let width: Int
    let count: Int
    private(set) var words: [UInt64]

    /// `values` packed, or nil when their spread needs more than `maximumWidth` bits.
    /// Positions whose bit `present` leaves clear (a nil value's placeholder) are
    /// stored as `base` and do not widen the frame.
    /// - Complexity: O(n)
    init?(_ values: UnsafeBufferPointer<Int64>, maximumWidth: Int = 48, present: [UInt64]? = nil) {
        var low = Int64.max, high = Int64.min
        for i in values.indices where present.map({ Bitmap.test($0, i) }) ?? true {
            low = min(low, values[i])
            high = max(high, values[i])
        }
        if low > high { low = 0; high = 0 }  // nothing present
        // The spread as an unsigned number (it may not fit an Int64).
        let spread = UInt64(bitPattern: high &- low)
        let width = spread == 0 ? 0 : 64 - spread.leadingZeroBitCount
        guard width <= min(maximumWidth, 63) else { return nil }
        self.base = low
        self.width = width
        self.count = values.count
        // One word more than the bits need: a read takes the word after its own
        // without a branch (`Self.bits`).
        let wordCount = width == 0 ? 0 : (values.count * width + 63) >> 6 + 1
        var words = [UInt64](repeating: 0, count: wordCount)
        if width > 0 {
            for i in values.indices where present.map({ Bitmap.test($0, i) }) ?? true {
                Self.write(UInt64(bitPattern: values[i] &- low), at: i, width: width, into: &words)
            }
        }
        self.words = words
    }

    /// The value at `position`.
    /// - Complexity: O(1)
    @inline(__always)
    subscript(position: Int) -> Int64 {
        base &+ Int64(bitPattern: bits(at: position))
    }

    @inline(__always)
    private func bits(at position: Int) -> UInt64 {
        guard width > 0 else { return 0 }
        return words.withUnsafeBufferPointer { Self.bits(at: position &* width, in: $0) } & ((1 << UInt64(width)) - 1)
    }

    /// The 64 bits of `words` from bit `bit` on (the word after `bit`'s must exist:
    /// the padding word). Branch-free: the next word's part is shifted in by two shifts
    /// that stay below 64, and is zero when `bit` starts a word.
    @inline(__always)
    private static func bits(at bit: Int, in words: UnsafeBufferPointer<UInt64>) -> UInt64 {
        let w = bit >> 6, shift = UInt64(bit & 63)
        return words[w] &>> shift | (words[w + 1] &<< 1) &<< (63 &- shift)
    }

    /// Stores `value` at `position` when it fits the frame; false (nothing changed)
    /// when it does not, and the column must be unpacked to take it.
    /// - Complexity: O(1), plus a copy of the words while they are shared
    mutating func set(_ value: Int64, at position: Int) -> Bool {
        let (offset, overflow) = value.subtractingReportingOverflow(base)
        guard !overflow, offset >= 0, UInt64(offset) >> UInt64(width) == 0 else { return false }
        guard width > 0 else { return true }
        Self.write(UInt64(offset), at: position, width: width, into: &words)
        return true
    }

    /// Every value, in order.
    /// - Complexity: O(n)
    func unpacked() -> [Int64] {
        [Int64](unsafeUninitializedCapacity: count) { buffer, initialized in
            forEach { buffer[$0] = $1 }
            initialized = count
        }
    }

    /// Calls `body` with each position and its value, in order, in one pass over the
    /// words.
    /// - Complexity: O(n)
    @inline(__always)
    func forEach(_ body: (Int, Int64) -> Void) { forEach(in: 0..<count, body) }

    /// Calls `body` with each position of `positions` and its value, in order, in one
    /// pass over the words.
    /// - Complexity: O(`positions.count`)
    @inline(__always)
    func forEach(in positions: Range<Int>, _ body: (Int, Int64) -> Void) {
        guard width > 0 else {
            for i in positions { body(i, base) }
            return
        }
        let mask: UInt64 = (1 << UInt64(width)) - 1
        words.withUnsafeBufferPointer { words in
            for i in positions { body(i, base &+ Int64(bitPattern: Self.bits(at: i &* width, in: words) & mask)) }
        }
    }

    /// The bitmap of the positions whose offset above `base` lies in `offsets`, read
    /// straight from the words (nothing unpacked, nothing allocated but the bitmap).
    /// - Complexity: O(n)
    func positions(withOffsetsIn offsets: Range<UInt64>) -> [UInt64] {
        var bitmap = [UInt64](repeating: 0, count: Bitmap.wordCount(count))
        guard !offsets.isEmpty else { return bitmap }
        let low = offsets.lowerBound, span = offsets.upperBound &- offsets.lowerBound
        let width = self.width, count = self.count
        guard width > 0 else { return low == 0 ? Bitmap.allSet(count) : bitmap }
        let mask: UInt64 = (1 << UInt64(width)) - 1
        words.withUnsafeBufferPointer { words in
            bitmap.withUnsafeMutableBufferPointer { out in
                // A word of the bitmap at a time; each offset tested with one unsigned
                // comparison (`offset - low < span`), with no branch.
                for w in 0..<out.count {
                    var word: UInt64 = 0
                    let first = w &* 64
                    for b in 0..<min(64, count &- first) {
                        let v = Self.bits(at: (first &+ b) &* width, in: words) & mask
                        word |= (v &- low < span ? 1 : 0) &<< UInt64(b)
                    }
                    out[w] = word
                }
            }
        }
        return bitmap
    }

    /// The bytes the packed values take.
    var byteCount: Int { words.count * 8 }

    @inline(__always)
    private static func write(_ bits: UInt64, at position: Int, width: Int, into words: inout [UInt64]) {
        let bit = position * width
        let w = bit >> 6, shift = bit & 63
        let mask: UInt64 = (1 << UInt64(width)) - 1
        words[w] = words[w] & ~(mask << UInt64(shift)) | (bits << UInt64(shift))
        if shift + width > 64 {
            let spill = 64 - shift
            words[w + 1] = words[w + 1] & ~(mask >> UInt64(spill)) | (bits >> UInt64(spill))
        }
    }
}

/// Doubles that are whole multiples of a power of ten (dates in whole seconds, prices in
/// cents) as integers of that unit, packed: each value is `Double(k) / 10^scale`
/// exactly, checked value by value, so every bit pattern round-trips (others, `-0.0`
/// and NaN among them, leave the column unpacked).
struct PackedDoubles: Sendable {
    /// The power of ten the integers count in.
    let scale: Int
    private(set) var integers: PackedInts

    /// The largest scale tried: prices and measurements in thousandths and coarser.
    static let maximumScale = 4
    private static let powers: [Double] = [1, 10, 100, 1_000, 10_000]

    /// `values` packed (nil positions, per `present`, as the frame's base), or nil when
    /// some present value is no multiple of 10⁻ᵏ for any k up to `maximumScale`, or
    /// their spread needs more than 48 bits.
    /// - Complexity: O(n × scales tried); a column of random fractions fails at its first value
    init?(_ values: UnsafeBufferPointer<Double>, present: [UInt64]) {
        var scale = 0
        var integers = [Int64](repeating: 0, count: values.count)
        var i = 0
        while i < values.count {
            if Bitmap.test(present, i) {
                if let k = Self.integer(values[i], scale: scale) {
                    integers[i] = k
                } else {
                    // Start over at the next scale that holds this value.
                    scale += 1
                    while scale <= Self.maximumScale, Self.integer(values[i], scale: scale) == nil { scale += 1 }
                    guard scale <= Self.maximumScale else { return nil }
                    i = 0
                    continue
                }
            }
            i += 1
        }
        guard let packed = integers.withUnsafeBufferPointer({ PackedInts($0, present: present) }) else { return nil }
        self.scale = scale
        self.integers = packed
    }

    /// The integer that stands for `value` at `scale`, when it does exactly.
    @inline(__always)
    private static func integer(_ value: Double, scale: Int) -> Int64? {
        let scaled = (value * powers[scale]).rounded()
        guard abs(scaled) < 0x1p53 else { return nil }  // also NaN and the infinities
        let k = Int64(scaled)
        return (Double(k) / powers[scale]).bitPattern == value.bitPattern ? k : nil
    }

    /// The value at `position`.
    /// - Complexity: O(1)
    @inline(__always)
    subscript(position: Int) -> Double {
        scale == 0 ? Double(integers[position]) : Double(integers[position]) / Self.powers[scale]
    }

    /// Stores `value` at `position` when it is a multiple of this scale's unit and
    /// fits the frame; false (nothing changed) when not.
    /// - Complexity: O(1), plus a copy of the words while they are shared
    mutating func set(_ value: Double, at position: Int) -> Bool {
        guard let k = Self.integer(value, scale: scale) else { return false }
        return integers.set(k, at: position)
    }

    /// Every value, in order (nil positions as the frame's base).
    /// - Complexity: O(n)
    func unpacked() -> [Double] {
        let divisor = Self.powers[scale]
        return [Double](unsafeUninitializedCapacity: integers.count) { buffer, initialized in
            // (Whole units, dates in seconds, need no division.)
            if scale == 0 {
                integers.forEach { buffer[$0] = Double($1) }
            } else {
                integers.forEach { buffer[$0] = Double($1) / divisor }
            }
            initialized = integers.count
        }
    }

    /// Calls `body` with each position of `positions` and its value, in order, in one
    /// pass over the words.
    /// - Complexity: O(`positions.count`)
    @inline(__always)
    func forEach(in positions: Range<Int>, _ body: (Int, Double) -> Void) {
        if scale == 0 {
            integers.forEach(in: positions) { body($0, Double($1)) }
        } else {
            let divisor = Self.powers[scale]
            integers.forEach(in: positions) { body($0, Double($1) / divisor) }
        }
    }

    var count: Int { integers.count }
    var byteCount: Int { integers.byteCount }

    /// The bitmap of the positions whose value `v` holds `v op c` (`comparison` nil:
    /// `v == c`), as Swift compares doubles; nil positions' bits are arbitrary. The
    /// constant becomes a range of the frame's offsets, so no value is unpacked or
    /// divided: values are `Double(k) / 10^scale`, non-decreasing in k. `c` must not be
    /// NaN (the callers' loops give NaN its own meaning).
    /// - Complexity: O(n)
    func positions(_ comparison: QueryExpression.ComparisonOperator?, _ c: Double) -> [UInt64] {
        precondition(!c.isNaN, "a NaN constant is compared value by value")
        let reaching = offset(reaching: c, strictly: false), above = offset(reaching: c, strictly: true)
        let end = UInt64(1) << UInt64(integers.width)
        let offsets: Range<UInt64> = switch comparison {
        case nil: reaching..<max(reaching, above)
        case .lessThan: 0..<reaching
        case .lessThanOrEqual: 0..<above
        case .greaterThan: above..<end
        case .greaterThanOrEqual: reaching..<end
        }
        return integers.positions(withOffsetsIn: offsets)
    }

    /// The smallest offset in the frame (0 … 2^width) whose value is ≥ `c` (> `c` when
    /// `strictly`); 2^width when none is.
    private func offset(reaching c: Double, strictly: Bool) -> UInt64 {
        let low = integers.base, high = integers.base + (Int64(1) << Int64(integers.width)) - 1
        let divisor = Self.powers[scale]
        func reaches(_ k: Int64) -> Bool {
            let v = Double(k) / divisor
            return strictly ? v > c : v >= c
        }
        // A guess within a step or two of the answer, then exact steps.
        let scaled = (c * divisor).rounded(.down)
        var k = scaled <= Double(low) ? low : (scaled > Double(high) ? high + 1 : Int64(scaled))
        while k > low, reaches(k - 1) { k -= 1 }
        while k <= high, !reaches(k) { k += 1 }
        return UInt64(k - low)
    }
}
