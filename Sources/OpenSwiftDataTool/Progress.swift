/// A progress counter redrawn in place on standard error, for exports, imports
/// and verifications of many rows or blobs. It draws only when standard error is
/// a terminal, and at most ten times a second.
struct Progress {
    private let label: String
    private let total: Int
    private let enabled: Bool
    private var done = 0
    private var lastDrawn: ContinuousClock.Instant?
    private var drew = false

    init(_ label: String, total: Int) {
        self.label = label
        self.total = total
        self.enabled = Console.errorIsTerminal && total > 0
    }

    mutating func advance(by count: Int = 1) {
        done += count
        guard enabled else { return }
        let now = ContinuousClock.now
        if let lastDrawn, now - lastDrawn < .milliseconds(100), done < total { return }
        lastDrawn = now
        drew = true
        Console.errorText("\r\(label): \(done)/\(total)\u{1B}[K")
    }

    /// Clears the progress line, so the next message starts on a clean line.
    func finish() {
        if drew { Console.errorText("\r\u{1B}[K") }
    }
}
