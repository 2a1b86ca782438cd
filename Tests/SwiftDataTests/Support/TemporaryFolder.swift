import Foundation

/// A fresh folder under the system's temporary directory for a test's documents;
/// `remove()` deletes it with everything in it.
struct TemporaryFolder {
    let url: URL

    init(_ prefix: String = "osd-tests") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A file named `name` in the folder.
    func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    func remove() { try? FileManager.default.removeItem(at: url) }
}
