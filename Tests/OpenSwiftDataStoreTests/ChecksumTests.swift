import Foundation
import Testing
@testable import OpenSwiftDataStore

/// CRC-32C by the processor's instruction and by the tables: the published check
/// value, and the same checksum for every length and alignment.
@Suite struct ChecksumTests {
    @Test func theCheckValueOfBothWays() {
        let digits = Array("123456789".utf8)
        #expect(CRC32C.checksum(digits) == 0xE306_9283)
        #expect(digits.withUnsafeBytes { CRC32C.tableChecksum($0) } == 0xE306_9283)
        #expect(CRC32C.checksum([]) == 0)
        #if arch(x86_64) && os(Linux)
        // Where the processor lists SSE 4.2, the instruction is what runs.
        if let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8), info.contains(" sse4_2") {
            #expect(CRC32C.usesHardware)
        }
        #endif
    }

    @Test func theInstructionAgreesWithTheTablesAtEveryLengthAndOffset() {
        var rng = SplitMix(seed: 7)
        let bytes = (0..<1_100).map { _ in UInt8.random(in: 0...255, using: &rng) }
        bytes.withUnsafeBytes { all in
            for offset in 0..<9 {
                for length in 0...(all.count - offset) where length < 80 || length % 37 == 0 {
                    let slice = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + length)])
                    #expect(CRC32C.checksum(slice) == CRC32C.tableChecksum(slice), "offset \(offset), length \(length)")
                }
            }
        }
    }
}
