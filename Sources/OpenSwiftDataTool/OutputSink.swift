#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Buffered text output to a file descriptor: exports of millions of rows go out
/// in 64 KiB writes rather than one system call per line.
final class OutputSink {
    private let descriptor: Int32
    private let name: String
    private var buffer: [UInt8] = []
    private static let flushThreshold = 1 << 16

    /// Standard output.
    static func standardOutput() -> OutputSink { OutputSink(descriptor: 1, name: "standard output") }

    init(descriptor: Int32, name: String) {
        self.descriptor = descriptor
        self.name = name
        buffer.reserveCapacity(Self.flushThreshold * 2)
    }

    func write(_ text: String) throws(ToolFailure) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= Self.flushThreshold { try flush() }
    }

    func line(_ text: String = "") throws(ToolFailure) {
        try write(text)
        try write("\n")
    }

    func flush() throws(ToolFailure) {
        guard !buffer.isEmpty else { return }
        let code = Console.writeAll(buffer, to: descriptor)
        buffer.removeAll(keepingCapacity: true)
        if code != 0 { throw ToolFailure("cannot write to \(name): \(String(cString: strerror(code)))") }
    }
}
