import Foundation
import OpenSwiftDataPostgres
import SwiftData

// A second process for the change feed's tests (PostgresFeedTests): it saves notes
// to a PostgresStore database while the test's feed waits.
//
//     PostgresFeedProbe URL COUNT PAUSE-MS
//
// Prints "open" once the container is open, then, after each save, "saved N T":
// the note's number and the time the save returned (seconds since 1970).

@Model final class FeedNote {
    var number: Int
    var text: String

    init(number: Int, text: String) {
        self.number = number
        self.text = text
    }
}

/// Writes a line at once (unbuffered), so the test reads it as it comes.
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let arguments = CommandLine.arguments
guard arguments.count == 4, let count = Int(arguments[2]), let pause = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: PostgresFeedProbe URL COUNT PAUSE-MS\n".utf8))
    exit(2)
}
do {
    let container = try ModelContainer(for: Schema([FeedNote.self]), configurations: [try PostgresStoreConfiguration(url: arguments[1])])
    say("open")
    let context = ModelContext(container)
    context.author = "probe \(ProcessInfo.processInfo.processIdentifier)"
    for number in 1...max(1, count) {
        Thread.sleep(forTimeInterval: Double(pause) / 1000)
        context.insert(FeedNote(number: number, text: "from another process"))
        try context.save()
        say("saved \(number) \(Date().timeIntervalSince1970)")
    }
} catch {
    FileHandle.standardError.write(Data("PostgresFeedProbe: \(error)\n".utf8))
    exit(1)
}
