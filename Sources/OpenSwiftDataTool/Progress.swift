import OpenSwiftDataStore

/// A progress counter redrawn in place on standard error, for the long parts of a
/// command: reading the document, compaction's rewrite, exports, imports and
/// verify's blobs. It shows the count, the rate and the time left; it draws only
/// when standard error is a terminal, and at most ten times a second.
struct Progress {
    /// What the counts are: things (`12000/50000`) or bytes (`12.0/50.0 MB`).
    enum Unit {
        case items
        case bytes
    }

    private let label: String
    private let total: Int
    private let unit: Unit
    private let enabled: Bool
    private let started = ContinuousClock.now
    private var done = 0
    private var lastDrawn: ContinuousClock.Instant?
    private var drew = false

    init(_ label: String, total: Int, unit: Unit = .items) {
        self.label = label
        self.total = total
        self.unit = unit
        self.enabled = Console.errorIsTerminal && total > 0
    }

    mutating func advance(by count: Int = 1) {
        advance(to: done + count)
    }

    /// Moves to `count` done (for operations that report their position).
    mutating func advance(to count: Int) {
        done = count
        guard enabled else { return }
        let now = ContinuousClock.now
        if let lastDrawn, now - lastDrawn < .milliseconds(100), done < total { return }
        lastDrawn = now
        drew = true
        Console.errorText("\r" + Self.line(label, done: done, total: total, elapsed: now - started, unit: unit) + "\u{1B}[K")
    }

    /// `label: done/total`, then the rate and the time left once a tenth of a second
    /// has passed: `exporting rows: 120000/1000000 (240000/s, 4 s left)`, or in bytes
    /// `reading the document: 12.0/45.3 MB (30.1 MB/s, 2 s left)`.
    static func line(_ label: String, done: Int, total: Int, elapsed: Duration, unit: Unit = .items) -> String {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        var text: String
        switch unit {
        case .items: text = "\(label): \(done)/\(total)"
        case .bytes: text = "\(label): \(megabytes(done))/\(megabytes(total)) MB"
        }
        guard seconds >= 0.1, done > 0 else { return text }
        let rate = Double(done) / seconds
        switch unit {
        case .items: text += " (\(Int(rate.rounded()))/s"
        case .bytes: text += " (\(megabytes(Int(rate.rounded()))) MB/s"
        }
        if done < total {
            let left = Int((Double(total - done) / rate).rounded(.up))
            text += left >= 60 ? ", \(left / 60) min \(left % 60) s left" : ", \(left) s left"
        }
        return text + ")"
    }

    /// Bytes as megabytes (10⁶) with one decimal: `45.3`.
    private static func megabytes(_ bytes: Int) -> String {
        let tenths = (bytes + 50_000) / 100_000
        return "\(tenths / 10).\(tenths % 10)"
    }

    /// Clears the progress line, so the next message starts on a clean line.
    func finish() {
        if drew { Console.errorText("\r\u{1B}[K") }
    }

    /// Runs `operation` with a progress line named `label` that it moves by
    /// reporting its position (`DocumentProgress`), and clears the line after.
    static func showing<T>(
        _ label: String, unit: Unit, _ operation: (DocumentProgress) throws(DocumentError) -> T
    ) throws(DocumentError) -> T {
        var progress: Progress?
        defer { progress?.finish() }
        return try operation { done, total in
            if progress == nil { progress = Progress(label, total: total, unit: unit) }
            progress?.advance(to: done)
        }
    }
}

extension DocumentReader {
    /// `read(path:blobs:)` with a progress line in bytes while the document is read:
    /// what every command does first.
    static func readShowingProgress(
        path: String, blobs policy: BlobPolicy, label: String = "reading the document"
    ) throws(DocumentError) -> Contents {
        try Progress.showing(label, unit: .bytes) { (progress) throws(DocumentError) in
            try read(path: path, blobs: policy, progress: progress)
        }
    }
}
