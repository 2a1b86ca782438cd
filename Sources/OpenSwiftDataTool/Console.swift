#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Standard error and standard output, written with `write(2)` so a command's
/// report, its progress line and its error messages never interleave out of order
/// the way separately buffered streams can.
enum Console {
    /// Whether standard error is a terminal: progress lines are drawn only then,
    /// so logs and pipes get nothing but messages.
    static var errorIsTerminal: Bool { isatty(2) == 1 }

    /// Writes `line` and a newline to standard error.
    static func error(_ line: String) {
        writeAll(Array((line + "\n").utf8), to: 2)
    }

    /// Writes raw text to standard error (for progress lines that redraw in place).
    static func errorText(_ text: String) {
        writeAll(Array(text.utf8), to: 2)
    }

    /// Writes every byte, retrying on interruption; returns the errno of a failure, or 0.
    @discardableResult
    static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Int32 {
        var done = 0
        while done < bytes.count {
            let wrote = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + done, bytes.count - done) }
            if wrote < 0 {
                if errno == EINTR { continue }
                return errno
            }
            done += wrote
        }
        return 0
    }
}
