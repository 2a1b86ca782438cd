import CZstd

/// zstd, as documents use it: one-shot frames of known size.
enum Zstd {
    /// Level for journal frames: they are small and on the save path.
    static let journalLevel: Int32 = 1
    /// Level for snapshot sections: written by compaction, read at every open.
    static let snapshotLevel: Int32 = 3

    /// `bytes` compressed at `level`.
    static func compress(_ bytes: UnsafeRawBufferPointer, level: Int32) -> [UInt8] {
        let bound = ZSTD_compressBound(bytes.count)
        var output = [UInt8](repeating: 0, count: bound)
        let written = output.withUnsafeMutableBytes { out in
            ZSTD_compress(out.baseAddress, bound, bytes.baseAddress, bytes.count, level)
        }
        // Compression into a buffer of ZSTD_compressBound bytes cannot fail.
        precondition(ZSTD_isError(written) == 0, "zstd: \(String(cString: ZSTD_getErrorName(written)))")
        output.removeSubrange(written...)
        return output
    }

    /// Decompresses `bytes` into exactly `size` bytes, or returns the reason it cannot.
    static func decompress(_ bytes: UnsafeRawBufferPointer, size: Int) -> Result<[UInt8], ZstdFailure> {
        var output = [UInt8](repeating: 0, count: size)
        let written = output.withUnsafeMutableBytes { out in
            ZSTD_decompress(out.baseAddress, size, bytes.baseAddress, bytes.count)
        }
        if ZSTD_isError(written) != 0 { return .failure(ZstdFailure(reason: String(cString: ZSTD_getErrorName(written)))) }
        if written != size { return .failure(ZstdFailure(reason: "decompressed to \(written) bytes, expected \(size)")) }
        return .success(output)
    }

    struct ZstdFailure: Error { var reason: String }
}
