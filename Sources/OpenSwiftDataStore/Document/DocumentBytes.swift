import Foundation

/// A document's bytes as a reader takes them: a frame at a time, so that opening a
/// large document never holds the whole file beside the store it builds from it.
protocol DocumentBytes {
    /// How many bytes there are (an open file's size when the reading began).
    var count: Int { get }
    /// The bytes at `range`, which lies in `0..<count`; fewer when the file was cut
    /// short meanwhile.
    func bytes(_ range: Range<Int>) throws(DocumentError) -> [UInt8]
    /// All of them: what only damaged or torn files need (`Frame.followed`, salvage).
    func all() throws(DocumentError) -> [UInt8]
}

extension [UInt8]: DocumentBytes {
    func bytes(_ range: Range<Int>) -> [UInt8] { Array(self[range]) }
    func all() -> [UInt8] { self }
}

/// An open file read through a window of `windowSize` bytes: a frame inside the window
/// is copied from it, a larger one read on its own. Not for several threads at once.
final class FileBytes: DocumentBytes {
    let file: DocumentFile
    let count: Int
    /// Read ahead at a time: a journal of small frames costs one read per window.
    static let windowSize = 1 << 20
    private var window: [UInt8] = []
    private var windowStart = 0

    /// The bytes of `file` as its size is now.
    init(_ file: DocumentFile) throws(DocumentError) {
        self.file = file
        count = try file.size
    }

    func bytes(_ range: Range<Int>) throws(DocumentError) -> [UInt8] {
        if range.lowerBound >= windowStart, range.upperBound <= windowStart + window.count {
            return Array(window[(range.lowerBound - windowStart)..<(range.upperBound - windowStart)])
        }
        if range.count >= Self.windowSize / 2 { return try file.read(at: range.lowerBound, count: range.count) }
        window = try file.read(at: range.lowerBound, count: min(Self.windowSize, count - range.lowerBound))
        windowStart = range.lowerBound
        return Array(window.prefix(range.count))
    }

    func all() throws(DocumentError) -> [UInt8] { try file.read(at: 0, count: count) }
}
