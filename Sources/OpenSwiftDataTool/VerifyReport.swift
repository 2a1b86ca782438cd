import OpenSwiftDataStore

/// What `verify` found.
struct VerifyReport {
    let path: String
    /// Damage, one line each; empty when intact.
    private(set) var problems: [String] = []
    private(set) var frames = 0
    private(set) var journalFrames = 0
    private(set) var tornTail: (offset: Int, reason: String)?
    private(set) var referencedBlobs = 0
    private(set) var unreferencedBlobs: [String] = []

    /// Reads and checks the document at `path`. Throws only when it cannot check
    /// at all (no such file, an I/O error, a newer format); damage is reported.
    init(path: String) throws(DocumentError) {
        self.path = path
        let contents: DocumentReader.Contents
        do {
            // Reading checks the header and every frame's checksums and structure;
            // blobs are checked below, each of them, rather than up to the first bad one.
            contents = try DocumentReader.readShowingProgress(path: path, blobs: .skip, label: "checking frames")
        } catch {
            switch error {
            case .damaged, .notADocument, .schemaMismatch, .blob:
                problems.append(error.description)
                return
            default:
                throw error
            }
        }
        frames = contents.frames.count
        journalFrames = contents.journalFrames
        tornTail = contents.tornTail
        referencedBlobs = contents.blobs.count
        // Both sides of every relationship agree (a tool or a hand-edited import
        // could have written a graph no context would).
        problems += contents.version.relationshipProblems().map { "relationship: " + $0 }

        let folder = BlobStore(documentPath: path)
        var progress = Progress("checking blobs", total: contents.blobs.count)
        for (name, length) in contents.blobs.sorted(by: { $0.key < $1.key }) {
            if let problem = try folder.problem(with: name, length: length) {
                problems.append("external-storage blob \(name): \(problem)")
            }
            progress.advance()
        }
        progress.finish()
        unreferencedBlobs = folder.names().filter { contents.blobs[$0] == nil }
    }

    func isIntact(strict: Bool) -> Bool {
        problems.isEmpty && !(strict && tornTail != nil)
    }

    func text(strict: Bool) -> String {
        var lines: [String] = []
        if frames > 0 {
            lines.append("\(path): \(plural(frames, "frame")) checked (\(frames - journalFrames) snapshot, \(journalFrames) journal)")
            let bad = problems.filter { $0.hasPrefix("external-storage blob") }.count
            lines.append("blobs: \(referencedBlobs) referenced, \(referencedBlobs - bad) intact")
        }
        if let tornTail {
            lines.append("\(strict ? "damaged" : "warning"): torn last frame at byte \(tornTail.offset): \(tornTail.reason) (the last save is dropped at the next open)")
        }
        if !unreferencedBlobs.isEmpty {
            lines.append("unreferenced blob files (not an error; compaction removes them): \(unreferencedBlobs.count)")
            lines += unreferencedBlobs.map { "  " + $0 }
        }
        lines += problems.map { "damaged: " + $0 }
        lines.append(isIntact(strict: strict) ? "intact" : "damaged")
        return lines.joined(separator: "\n") + "\n"
    }

    func json(strict: Bool) -> JSON {
        .object([
            ("path", .string(path)),
            ("intact", .bool(isIntact(strict: strict))),
            ("problems", .array(problems.map(JSON.string))),
            ("frames", .integer(Int64(frames))),
            ("journalFrames", .integer(Int64(journalFrames))),
            ("tornTail", tornTail.map { .object([("offset", .integer(Int64($0.offset))), ("reason", .string($0.reason))]) } ?? .null),
            ("referencedBlobs", .integer(Int64(referencedBlobs))),
            ("unreferencedBlobs", .array(unreferencedBlobs.map(JSON.string))),
        ])
    }
}
