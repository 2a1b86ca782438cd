import Testing
@testable import OpenSwiftDataStore

/// `Bitmap.copy`, which a snapshot uses to move a run of rows' presence and boolean
/// bits into a column frame a word at a time, against a bit-by-bit copy: runs that
/// start and end anywhere in a word, on either side, and across several words.
@Suite struct BitmapCopyTests {
    @Test func copiesAnyRunToAnyOffsetAsBitByBitDoes() {
        var rng = SplitMix(seed: 42)
        for _ in 0..<2_000 {
            let sourceBits = Int.random(in: 1...400, using: &rng)
            let source = (0..<Bitmap.wordCount(sourceBits)).map { _ in UInt64.random(in: 0...UInt64.max, using: &rng) }
            let lower = Int.random(in: 0..<sourceBits, using: &rng)
            let positions = lower..<Int.random(in: lower...sourceBits, using: &rng)
            let first = Int.random(in: 0...200, using: &rng)
            let destinationBits = first + positions.count
            var expected = [UInt64](repeating: 0, count: Bitmap.wordCount(destinationBits))
            for (k, p) in positions.enumerated() where Bitmap.test(source, p) { Bitmap.set(&expected, first + k, true) }
            var copied = 0
            let destination = [UInt64](unsafeUninitializedCapacity: expected.count) { words, count in
                words.initialize(repeating: 0)
                copied = Bitmap.copy(source, positions, into: words, at: first)
                count = words.count
            }
            #expect(destination == expected, "\(positions) to \(first)")
            #expect(copied == Bitmap.popcount(expected))
        }
    }
}
