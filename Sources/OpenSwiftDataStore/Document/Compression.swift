import CZstd

/// zstd, as documents use it: one frame per document frame, of known size.
enum Zstd {
    /// Level for journal frames: they are small and on the save path.
    static let journalLevel: Int32 = 1
    /// Level for snapshot sections: written by compaction, read at every open.
    static let snapshotLevel: Int32 = 3
    /// The largest window a reader accepts (16 MiB). Writers at the levels above use
    /// at most 2 MiB; a hostile frame cannot make the decoder allocate more.
    static let windowLogMax: Int32 = 24

    /// The most bytes `compress` can write for `count` input bytes.
    static func bound(_ count: Int) -> Int { ZSTD_compressBound(count) }

    /// Compresses `bytes` at `level` into `destination`, which has room for
    /// `bound(bytes.count)` bytes; returns how many it wrote. With a `context` the
    /// output is the same bytes, but zstd's tables are allocated once per context
    /// instead of once per call.
    static func compress(
        _ bytes: UnsafeRawBufferPointer, level: Int32, into destination: UnsafeMutableRawPointer, context: Context? = nil
    ) -> Int {
        let written = if let context {
            ZSTD_compressCCtx(context.pointer, destination, bound(bytes.count), bytes.baseAddress, bytes.count, level)
        } else {
            ZSTD_compress(destination, bound(bytes.count), bytes.baseAddress, bytes.count, level)
        }
        // Compression into a buffer of ZSTD_compressBound bytes cannot fail.
        precondition(ZSTD_isError(written) == 0, "zstd: \(String(cString: ZSTD_getErrorName(written)))")
        return written
    }

    /// A compression context one thread reuses from frame to frame: a snapshot
    /// compresses hundreds of frames, and a fresh context allocates and clears its
    /// tables (about 1 MiB at level 3) every time.
    final class Context {
        let pointer: OpaquePointer

        init() {
            guard let pointer = ZSTD_createCCtx() else { fatalError("zstd: out of memory for a compression context") }
            self.pointer = pointer
        }

        deinit { ZSTD_freeCCtx(pointer) }
    }

    /// Writes a skippable zstd frame of exactly `length` bytes (at least 8) at
    /// `destination`, which has room for it, and returns `length`: decoders pass
    /// over it. Writers append one to keep a frame's expansion under
    /// `DocumentFormat.maximumExpansion`.
    @discardableResult
    static func writeSkippableFrame(length: Int, at destination: UnsafeMutableRawPointer) -> Int {
        precondition(length >= 8 && length - 8 <= Int(UInt32.max))
        destination.initializeMemory(as: UInt8.self, repeating: 0, count: length)
        let magic = UInt32(ZSTD_MAGIC_SKIPPABLE_START).littleEndian
        let size = UInt32(length - 8).littleEndian
        withUnsafeBytes(of: magic) { destination.copyMemory(from: $0.baseAddress!, byteCount: 4) }
        withUnsafeBytes(of: size) { (destination + 4).copyMemory(from: $0.baseAddress!, byteCount: 4) }
        return length
    }

    /// Decompresses `bytes` into exactly `size` bytes, or returns the reason it cannot.
    ///
    /// `size` is a claim read from the file. Up to `trustedRatio` times the input it
    /// is allocated at once and decoded in one call (the common case, and the
    /// fastest); beyond that nothing is allocated for it up front: the output grows
    /// (doubling) with what zstd actually produces, and decoding stops as soon as it
    /// would pass `size`. Memory is at most twice the real output plus the decoder's
    /// window (≤ 2^`windowLogMax`).
    static func decompress(_ bytes: UnsafeRawBufferPointer, size: Int) -> Result<[UInt8], ZstdFailure> {
        if size <= bytes.count * trustedRatio + (1 << 16) {
            var output = [UInt8](repeating: 0, count: size)
            let written = output.withUnsafeMutableBytes { out in
                ZSTD_decompress(out.baseAddress, size, bytes.baseAddress, bytes.count)
            }
            if ZSTD_isError(written) != 0 { return .failure(ZstdFailure(reason: String(cString: ZSTD_getErrorName(written)))) }
            if written != size { return .failure(ZstdFailure(reason: "decompressed to \(written) bytes, expected \(size)")) }
            return .success(output)
        }
        return decompressStreaming(bytes, size: size)
    }

    /// Expansion up to which a claimed size is allocated before decoding: typical
    /// documents compress 3–10×.
    static let trustedRatio = 32

    private static func decompressStreaming(_ bytes: UnsafeRawBufferPointer, size: Int) -> Result<[UInt8], ZstdFailure> {
        // One byte past `size` shows an overlong frame without allocating for it.
        switch stream(bytes, limit: size + 1, initial: max(1 << 16, bytes.count * 4)) {
        case let .failure(failure): return .failure(failure)
        case let .success((output, complete)):
            if output.count > size { return .failure(ZstdFailure(reason: "decompresses to more than \(size) bytes")) }
            if !complete { return .failure(ZstdFailure(reason: "the compressed data ends inside a zstd frame")) }
            if output.count != size { return .failure(ZstdFailure(reason: "decompressed to \(output.count) bytes, expected \(size)")) }
            return .success(output)
        }
    }

    /// Decodes `bytes` (zstd frames, skippable ones included) into at most `limit`
    /// bytes, the output starting at `initial` bytes and doubling as zstd fills it.
    /// `complete` says every frame was decoded and flushed; it is false when the
    /// output reached `limit` first, or the input ended (or stalled) inside a frame.
    private static func stream(
        _ bytes: UnsafeRawBufferPointer, limit: Int, initial: Int
    ) -> Result<(output: [UInt8], complete: Bool), ZstdFailure> {
        guard let stream = ZSTD_createDStream() else { return .failure(ZstdFailure(reason: "out of memory")) }
        defer { ZSTD_freeDStream(stream) }
        _ = ZSTD_initDStream(stream)
        _ = ZSTD_DCtx_setParameter(stream, ZSTD_d_windowLogMax, windowLogMax)
        var output = [UInt8](repeating: 0, count: min(limit, initial))
        var produced = 0
        var consumed = 0
        var complete = false
        while true {
            if produced == output.count {
                if produced == limit { break }
                output.append(contentsOf: repeatElement(0, count: min(limit, output.count * 2) - output.count))
            }
            let before = (produced, consumed)
            let result = output.withUnsafeMutableBytes { out in
                var outBuffer = ZSTD_outBuffer(dst: out.baseAddress, size: out.count, pos: produced)
                var inBuffer = ZSTD_inBuffer(src: bytes.baseAddress, size: bytes.count, pos: consumed)
                let result = ZSTD_decompressStream(stream, &outBuffer, &inBuffer)
                produced = outBuffer.pos
                consumed = inBuffer.pos
                return result
            }
            if ZSTD_isError(result) != 0 {
                return .failure(ZstdFailure(reason: String(cString: ZSTD_getErrorName(result))))
            }
            // 0: every frame so far is decoded and flushed.
            if result == 0, consumed == bytes.count {
                complete = true
                break
            }
            // The input ended inside a frame, or the decoder stalled with room left.
            if produced < output.count, consumed == bytes.count || before == (produced, consumed) { break }
        }
        output.removeSubrange(produced...)
        return .success((output, complete))
    }

    struct ZstdFailure: Error { var reason: String }
}
