import Foundation
import OpenSwiftDataStore
import Testing

/// Blob names and schema stamps are SHA-256 digests written into documents that
/// earlier builds made with swift-crypto: ours must give the same digest for every
/// input, at every block boundary, however the input is split.
@Suite struct SHA256HasherTests {
    static func hex(_ digest: [UInt8]) -> String { digest.map { String(format: "%02x", $0) }.joined() }

    /// `n` bytes of a fixed pattern (the digests below are Python `hashlib`'s).
    static func pattern(_ n: Int) -> [UInt8] { (0..<n).map { UInt8(($0 * 31 + 7) % 256) } }

    @Test func theStandardVectors() {
        #expect(Self.hex(SHA256Hasher.hash(data: Data())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(Self.hex(SHA256Hasher.hash(data: Data("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Self.hex(SHA256Hasher.hash(data: Data("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(Self.hex(SHA256Hasher.hash(data: Data(repeating: UInt8(ascii: "a"), count: 1_000_000)))
            == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// Lengths around the padding's edges: 55 bytes leave room for the length in the
    /// last block, 56 do not.
    static let boundaries: [(Int, String)] = [
        (1, "ca358758f6d27e6cf45272937977a748fd88391db679ceda7dc7bf1f005ee879"),
        (55, "8aa994584139d128848eeebc4e815639ba5ab6e6e39574195a63ac4f14f7c43b"),
        (56, "ad574708f75c044c9b85de64cb568ee7711ff4f36448c6242f053ba8f6cc2b63"),
        (57, "5b46e502092be01b1100193e089fdda95638c12e19a1d24f308eb2c3d3ae849d"),
        (63, "280ed3e8ff1df845b2e7dfe6ac6cee817bef20e783cc65abc41b818b4d2fe076"),
        (64, "c6ab9724ade5b6a7a1edfffb12f3aa9181351355af8fd08c919952ad211339dd"),
        (65, "788367c73c7ddf4c53f65e68cc0d943e6227ab55b0e78ba63ace822b1c6301c0"),
        (119, "3d610547d68216dedf7435a4fb6260353911f6b3fd3f18805ddb8be285d726fe"),
        (120, "1f80156a804cb7862ad113e8200e9d74499723e7c7854d5f48776d3148e09656"),
        (127, "192409cd280e14b743642ad1343fbd3e82d9305de72c078117745a679210cc3d"),
        (128, "cc548ca2dec1f6fe4f58b2e27aa9c7521607df1130d140b55a4dad0665302356"),
        (129, "81e89a7b2911aaa7795f9e3d4910cb47d6cd2b00d83b8399481527261a1a7519"),
        (1000, "5097e7d587352f5097062ae679f37bda5802d9f875aba14c8cb4d1a188ada179"),
    ]

    @Test(arguments: boundaries)
    func everyBlockBoundary(_ length: Int, _ digest: String) {
        #expect(Self.hex(SHA256Hasher.hash(data: Self.pattern(length))) == digest)
    }

    /// Fed in pieces of every size from 1 to 130 bytes, the digest is the one-call digest.
    @Test func piecesGiveTheWholeDigest() {
        let bytes = Self.pattern(1000)
        let whole = SHA256Hasher.hash(data: bytes)
        for size in 1...130 {
            var hasher = SHA256Hasher()
            var start = 0
            while start < bytes.count {
                let end = min(start + size, bytes.count)
                hasher.update(data: bytes[start..<end])
                start = end
            }
            #expect(hasher.finalize() == whole, "pieces of \(size) bytes")
        }
    }

    /// `Data` made of several regions (`DispatchData`-like inputs) hashes its bytes in order.
    @Test func dataOfSeveralRegions() {
        var data = DispatchData.empty
        for part in [Self.pattern(10), Self.pattern(100), Self.pattern(3)] {
            part.withUnsafeBytes { data.append($0) }
        }
        #expect(SHA256Hasher.hash(data: data) == SHA256Hasher.hash(data: Self.pattern(10) + Self.pattern(100) + Self.pattern(3)))
    }
}
