// W12's other writer (Sources/WorkloadKit/SharedWorkloads.swift): a second process saving
// on the document the benchmark saves on.
//
//   SharedSaver ours|sqlite PATH
//
// opens PATH (ours: a `ModelContainer` for the benchmark's models, `.full` durability;
// sqlite: a GRDB connection in WAL mode with `synchronous = FULL`), prints "opened", then
// changes one trip's price and saves, again and again, printing "saves K" every 20 saves,
// until its stdin closes (the benchmark's teardown closes it; so does the benchmark
// process's death); then prints "stopped K", K the saves it made, and exits 0.
import Foundation
import Synchronization
import WorkloadKit

func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let arguments = CommandLine.arguments
guard arguments.count == 3, let kind = OtherWriter.Kind(rawValue: arguments[1]) else {
    FileHandle.standardError.write(Data("usage: SharedSaver ours|sqlite <path>\n".utf8))
    exit(2)
}

enum Input {
    /// Set when stdin reaches its end: the loop stops after the save under way.
    static let closed = Atomic<Bool>(false)
}
Thread.detachNewThread {
    while !FileHandle.standardInput.availableData.isEmpty {}
    Input.closed.store(true, ordering: .relaxed)
}

do {
    let saves = try OtherWriter.run(
        kind, path: arguments[2], shouldStop: { Input.closed.load(ordering: .relaxed) },
        opened: { say("opened") }, progress: { say("saves \($0)") })
    say("stopped \(saves)")
} catch {
    FileHandle.standardError.write(Data("SharedSaver: \(error)\n".utf8))
    exit(1)
}
