/// A progress counter redrawn in place on standard error, for exports, imports
/// and verifications of many rows or blobs: the count, the rate and the time
/// left. It draws only when standard error is a terminal, and at most ten times a
/// second.
struct Progress {
    private let label: String
    private let total: Int
    private let enabled: Bool
    private let started = ContinuousClock.now
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
        Console.errorText("\r" + Self.line(label, done: done, total: total, elapsed: now - started) + "\u{1B}[K")
    }

    /// `label: done/total`, then the rate and the time left once a tenth of a second
    /// has passed: `exporting rows: 120000/1000000 (240000/s, 4 s left)`.
    static func line(_ label: String, done: Int, total: Int, elapsed: Duration) -> String {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        var text = "\(label): \(done)/\(total)"
        guard seconds >= 0.1, done > 0 else { return text }
        let rate = Double(done) / seconds
        text += " (\(Int(rate.rounded()))/s"
        if done < total {
            let left = Int((Double(total - done) / rate).rounded(.up))
            text += left >= 60 ? ", \(left / 60) min \(left % 60) s left" : ", \(left) s left"
        }
        return text + ")"
    }

    /// Clears the progress line, so the next message starts on a clean line.
    func finish() {
        if drew { Console.errorText("\r\u{1B}[K") }
    }
}
