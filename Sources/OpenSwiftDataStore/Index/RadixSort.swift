/// Sorting by 64-bit keys without comparisons, for bulk builds: the R-tree's
/// packing (`RTree`), and the entries large inserts add to B-trees (`OrderedIndex`).
enum RadixSort {
    /// Sorts `elements` by `key`, least significant byte first: one counting pass per
    /// byte in which the keys differ (a million keys sort in a few tens of
    /// milliseconds, several times faster than comparison sorting). Stable: elements
    /// with equal keys keep their order.
    /// - Complexity: O(n) per byte in which the keys differ
    static func sort<Element>(_ elements: inout [Element], key: (Element) -> UInt64) {
        guard elements.count > 1 else { return }
        var other = elements
        var differing: UInt64 = 0
        let first = key(elements[0])
        for element in elements { differing |= key(element) ^ first }
        var counts = [Int](repeating: 0, count: 256)
        for shift in Swift.stride(from: 0, to: 64, by: 8) where (differing >> UInt64(shift)) & 0xFF != 0 {
            for i in 0..<256 { counts[i] = 0 }
            for element in elements { counts[Int((key(element) >> UInt64(shift)) & 0xFF)] += 1 }
            var total = 0
            for i in 0..<256 {
                let c = counts[i]
                counts[i] = total
                total += c
            }
            for element in elements {
                let bucket = Int((key(element) >> UInt64(shift)) & 0xFF)
                other[counts[bucket]] = element
                counts[bucket] += 1
            }
            swap(&elements, &other)
        }
    }

    /// Sorts `keys`, and `values` beside them, by the keys, as `sort(_:key:)` does:
    /// 12 bytes an element and as much again while sorting, where a `(UInt64, UInt32)`
    /// element takes 16 with its padding.
    /// - Complexity: O(n) per byte in which the keys differ
    static func sort(keys: inout [UInt64], values: inout [UInt32]) {
        precondition(keys.count == values.count, "keys and values of different counts")
        guard keys.count > 1 else { return }
        var otherKeys = [UInt64](repeating: 0, count: keys.count)
        var otherValues = [UInt32](repeating: 0, count: values.count)
        var differing: UInt64 = 0
        let first = keys[0]
        for key in keys { differing |= key ^ first }
        var counts = [Int](repeating: 0, count: 256)
        for shift in Swift.stride(from: 0, to: 64, by: 8) where (differing >> UInt64(shift)) & 0xFF != 0 {
            for i in 0..<256 { counts[i] = 0 }
            for key in keys { counts[Int((key >> UInt64(shift)) & 0xFF)] += 1 }
            var total = 0
            for i in 0..<256 {
                let c = counts[i]
                counts[i] = total
                total += c
            }
            keys.withUnsafeBufferPointer { keys in
                values.withUnsafeBufferPointer { values in
                    otherKeys.withUnsafeMutableBufferPointer { otherKeys in
                        otherValues.withUnsafeMutableBufferPointer { otherValues in
                            for i in 0..<keys.count {
                                let bucket = Int((keys[i] >> UInt64(shift)) & 0xFF)
                                otherKeys[counts[bucket]] = keys[i]
                                otherValues[counts[bucket]] = values[i]
                                counts[bucket] += 1
                            }
                        }
                    }
                }
            }
            swap(&keys, &otherKeys)
            swap(&values, &otherValues)
        }
    }
}
