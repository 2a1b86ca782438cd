import Foundation
import Synchronization
import OpenSwiftDataStore
import Testing

/// FIFOs, devices, directories and links where osd expects documents, blobs or
/// outputs: a clear error at once, never a hang, never a replaced device.
@Suite struct SpecialFileTests {
    static func fifo(_ path: String) throws {
        try #require(mkfifo(path, 0o644) == 0)
    }

    @Test func aFIFOOrDirectoryAsTheDocumentIsRefused() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let pipe = folder.path("pipe.osd")
        try Self.fifo(pipe)
        let directory = folder.path("folder.osd")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        for path in [pipe, directory] {
            for command in ["info", "verify", "dump", "compact"] {
                let result = try OSD.run([command, path])
                #expect(result.status == 1, "\(command) \(path)")
                #expect(result.error.contains("is not a regular file"), "\(command): \(result.error)")
            }
        }
    }

    @Test func aFIFOAsABlobIsReportedNotRead() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd")
        try TripDocument.create(at: path)
        let blobs = BlobStore(documentPath: path)
        let name = try #require(blobs.names().first)
        try FileManager.default.removeItem(atPath: blobs.path(of: name))
        try Self.fifo(blobs.path(of: name))

        let verify = try OSD.run(["verify", path])
        #expect(verify.status == 2)
        #expect(verify.output.contains("external-storage blob \(name): is not a regular file"), "\(verify.output)")
        let dump = try OSD.run(["dump", path])
        #expect(dump.status == 1)
        #expect(dump.error.contains("is not a regular file"), "\(dump.error)")
    }

    /// A blob that cannot be read (here: its folder is a file, so the open fails
    /// with ENOTDIR) is an I/O error, exit 1, not a "missing" blob and not damage.
    @Test func anUnreadableBlobIsAnIOErrorNotDamage() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd")
        try TripDocument.create(at: path)
        try FileManager.default.removeItem(atPath: path + ".blobs")
        try Data("not a folder".utf8).write(to: URL(fileURLWithPath: path + ".blobs"))

        let verify = try OSD.run(["verify", path])
        #expect(verify.status == 1, "\(verify.output)")
        #expect(verify.error.contains("errno \(ENOTDIR)"), "\(verify.error)")
        #expect(!verify.output.contains("missing"))
    }

    @Test func forceNeverReplacesADeviceFIFOOrLink() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd")
        try TripDocument.create(at: path)
        let export = folder.path("trips.json")
        #expect(try OSD.run(["export", path, "-o", export]).status == 0)
        let pipe = folder.path("pipe")
        try Self.fifo(pipe)
        let link = folder.path("link.osd")
        let target = folder.path("target.osd")
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: target))
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)

        for output in ["/dev/null", pipe, link] {
            for command in [["export", path, "-o", output, "--force"], ["import", export, "-o", output, "--force"],
                            ["save-as", path, output, "--force"]] {
                let result = try OSD.run(command)
                #expect(result.status == 1, "\(command)")
                #expect(result.error.contains("is not a regular file"), "\(command): \(result.error)")
            }
        }
        var info = stat()
        #expect(lstat("/dev/null", &info) == 0 && info.st_mode & S_IFMT == S_IFCHR)
        #expect(lstat(pipe, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO)
        #expect(lstat(link, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK)
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep me")
    }

    /// Imports racing to one new path: the document that results is whole, blobs
    /// included (they used to delete each other's blobs and both exit 0).
    @Test func concurrentImportsToOneNewPathLeaveAnIntactDocument() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("trips.osd")
        try TripDocument.create(at: path)
        let export = folder.path("trips.json")
        #expect(try OSD.run(["export", path, "-o", export]).status == 0)
        for round in 0..<4 {
            let target = folder.path("copy-\(round).osd")
            let statuses = Mutex<[Int32]>([])
            DispatchQueue.concurrentPerform(iterations: 3) { _ in
                let status = (try? OSD.run(["import", export, "-o", target]))?.status ?? -1
                statuses.withLock { $0.append(status) }
            }
            #expect(statuses.withLock { $0.sorted() } == [0, 1, 1])
            let verify = try OSD.run(["verify", target])
            #expect(verify.status == 0, "\(verify.output)")
            #expect(verify.output.contains("blobs: 2 referenced, 2 intact"), "\(verify.output)")
        }
    }
}
