import Crypto
import Foundation

/// The `<document>.blobs` folder beside a document, seen from outside the engine:
/// which blob files it holds, how large they are, whether their content still
/// matches their name (the SHA-256 of the content, in hex).
struct BlobFolder {
    let path: String

    init(documentPath: String) {
        path = documentPath + ".blobs"
    }

    /// Whether `name` has the form of a blob file name: 64 lowercase hex digits.
    static func isBlobName(_ name: String) -> Bool {
        name.utf8.count == 64 && name.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    func path(of name: String) -> String { path + "/" + name }

    /// The blob files in the folder, sorted; none when there is no folder.
    func names() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter(Self.isBlobName).sorted()
    }

    /// The size of blob `name`, or nil when there is no such file.
    func size(of name: String) -> Int? {
        FileSystem.size(of: path(of: name))
    }

    /// What is wrong with blob `name`, or nil when its content hashes to its name.
    func problem(with name: String) -> String? {
        let file = path(of: name)
        guard FileSystem.size(of: file) != nil else { return "missing from \(path)" }
        guard let content = FileManager.default.contents(atPath: file) else { return "cannot be read" }
        let hex = SHA256.hash(data: content).map { String(format: "%02x", $0) }.joined()
        return hex == name ? nil : "content does not match its hash"
    }
}
