import Foundation

/// SHA-256 (FIPS 180-4), for content-addressed blob names and schema stamps.
///
/// Ours rather than swift-crypto's: the engine needs this one hash, and swift-crypto
/// brought BoringSSL, the largest compile of the whole build, into every app that
/// links the core (#44). A 64-bit hash such as the XXH64 libzstd ships is not enough
/// here: equal names share a blob file, so a collision would hand one model another's
/// bytes. OpenSSL with the CPU's SHA instructions is about 6× faster (1,170 MB/s against
/// 160–190 MB/s here); a blob is hashed once when saved and once when first read,
/// beside its own write or read (Docs/Decisions.md).
///
/// Incremental: `update(_:)` any number of times, then `finalize()`.
public struct SHA256Hasher: Sendable {
    /// The digest's length in bytes.
    public static let byteCount = 32

    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19)
    /// Bytes of an unfinished block, waiting for the next `update`.
    private var pending: [UInt8] = []
    private var length: UInt64 = 0

    public init() { pending.reserveCapacity(64) }

    /// The digest of `data` in one call.
    /// - Complexity: O(n)
    public static func hash<D: DataProtocol>(data: D) -> [UInt8] {
        var hasher = SHA256Hasher()
        hasher.update(data: data)
        return hasher.finalize()
    }

    /// Adds `data` to the message.
    /// - Complexity: O(n)
    public mutating func update<D: DataProtocol>(data: D) {
        for region in data.regions {
            region.withUnsafeBytes { update(bytes: $0) }
        }
    }

    /// Adds `bytes` to the message.
    /// - Complexity: O(n)
    public mutating func update(bytes: UnsafeRawBufferPointer) {
        length &+= UInt64(bytes.count)
        var rest = bytes[...]
        if !pending.isEmpty {
            let taken = min(64 - pending.count, rest.count)
            pending.append(contentsOf: rest.prefix(taken))
            rest = rest.dropFirst(taken)
            guard pending.count == 64 else { return }
            pending.withUnsafeBytes { compress(blocks: $0) }
            pending.removeAll(keepingCapacity: true)
        }
        let whole = rest.count / 64 * 64
        if whole > 0 {
            compress(blocks: UnsafeRawBufferPointer(rebasing: rest.prefix(whole)))
        }
        pending.append(contentsOf: rest.dropFirst(whole))
    }

    /// The digest of everything added: the padding (a 1 bit, zeros, the bit length) is
    /// added and the 32 bytes returned. The hasher is spent.
    public mutating func finalize() -> [UInt8] {
        let bits = length &* 8
        var tail = pending
        tail.append(0x80)
        while tail.count % 64 != 56 { tail.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        tail.withUnsafeBytes { compress(blocks: $0) }
        pending = []
        var digest: [UInt8] = []
        digest.reserveCapacity(Self.byteCount)
        for word in [state.0, state.1, state.2, state.3, state.4, state.5, state.6, state.7] {
            digest.append(contentsOf: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: word >> $0) })
        }
        return digest
    }

    /// Runs the compression function over whole 64-byte blocks.
    private mutating func compress(blocks: UnsafeRawBufferPointer) {
        precondition(blocks.count % 64 == 0, "whole blocks")
        Self.roundConstants.withUnsafeBufferPointer { k in
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
                var (h0, h1, h2, h3, h4, h5, h6, h7) = state
                var offset = 0
                while offset < blocks.count {
                    for t in 0..<16 {
                        w[t] = UInt32(bigEndian: blocks.loadUnaligned(fromByteOffset: offset + 4 * t, as: UInt32.self))
                    }
                    for t in 16..<64 {
                        let a = w[t - 15], b = w[t - 2]
                        let s0 = a.rotatedRight(7) ^ a.rotatedRight(18) ^ (a >> 3)
                        let s1 = b.rotatedRight(17) ^ b.rotatedRight(19) ^ (b >> 10)
                        w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
                    }
                    var (a, b, c, d, e, f, g, h) = (h0, h1, h2, h3, h4, h5, h6, h7)
                    for t in 0..<64 {
                        let s1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
                        let choice = (e & f) ^ (~e & g)
                        let t1 = h &+ s1 &+ choice &+ k[t] &+ w[t]
                        let s0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
                        let majority = (a & b) ^ (a & c) ^ (b & c)
                        let t2 = s0 &+ majority
                        (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
                    }
                    h0 &+= a; h1 &+= b; h2 &+= c; h3 &+= d; h4 &+= e; h5 &+= f; h6 &+= g; h7 &+= h
                    offset += 64
                }
                state = (h0, h1, h2, h3, h4, h5, h6, h7)
            }
        }
    }

    /// The first 32 bits of the fractional parts of the cube roots of the first 64 primes.
    private static let roundConstants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]
}

extension UInt32 {
    @inline(__always)
    fileprivate func rotatedRight(_ n: UInt32) -> UInt32 { (self >> n) | (self << (32 - n)) }
}
