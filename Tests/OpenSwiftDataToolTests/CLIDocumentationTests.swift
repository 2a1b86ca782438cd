import Foundation
import Testing

/// Docs/CLI.md's examples, run as a reader pastes them: against the document the
/// README's example (`swift run Trips`) writes, at the path it writes it.
///
/// The examples come from the page itself, so an edit that breaks one fails here:
///
/// - In a fenced block, a line `osd …` is a command to run; a line `$ osd …` is a
///   command followed by what it prints (the lines up to the next `$ ` or the end of
///   the block). Synopsis lines (with `<placeholders>`) are skipped; a line that
///   writes into the reader's home folder (`> ~/…`) runs without that redirection.
/// - The page defines `doc=/tmp/OpenSwiftData-Trips/Trips.store` once. Here `Trips`
///   runs with `TMPDIR` set to a fresh folder, so it writes the same document under
///   that folder instead of `/tmp` (the shared path stays untouched); `$doc`, and the
///   `/tmp/OpenSwiftData-Trips` prefix in commands and sample outputs, name that copy.
/// - Each command runs in `/bin/bash -c` (the reader's shell does the quoting and
///   `$doc`), with the built `osd` first on `PATH`, in a working folder kept from one
///   example to the next (an `import` reads what an earlier `export` wrote). Before
///   each one, the document is put back as `Trips` wrote it, so every sample shows
///   what the command prints on the fresh document.
/// - A command with no sample must exit 0 and print something. A sample whose first
///   line starts `osd: ` documents a failure: the command must exit non-zero and print
///   that on standard error. Any other sample is standard output of a command that
///   exits 0. Sample lines match the printed lines one for one (trailing spaces
///   aside); `…` in a sample line stands for any text, and a line that is only `…`
///   for any number of lines.
@Suite(.serialized) struct CLIDocumentationTests {
    /// The folder of the document the README's example writes, as the page spells it.
    static let documentedFolder = "/tmp/OpenSwiftData-Trips"
    static let documentedDocument = documentedFolder + "/Trips.store"

    static let page = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Docs/CLI.md")

    @Test func pageDefinesTheDocumentTheExampleWrites() throws {
        let text = try String(contentsOf: Self.page, encoding: .utf8)
        let definitions = CLIExamples.codeLines(text).filter { $0.text.hasPrefix("doc=") }
        #expect(definitions.count == 1, "one `doc=` line: \(definitions.map(\.line))")
        let path = definitions.first.map { String($0.text.dropFirst(4).prefix { $0 != " " }) }
        #expect(path == Self.documentedDocument)
    }

    @Test func theExamplesRunAsDocumented() throws {
        let text = try String(contentsOf: Self.page, encoding: .utf8)
        let examples = CLIExamples.parse(text)
        // Guards against a parser that silently finds nothing.
        #expect(examples.count >= 20, "\(examples.count) examples found")
        #expect(examples.contains { $0.expectsFailure })
        #expect(examples.filter { $0.sample != nil }.count >= 8)

        let osd = try #require(OSD.executable, "no osd binary beside the test bundle")
        let trips = osd.deletingLastPathComponent().appendingPathComponent("Trips")
        try #require(FileManager.default.isExecutableFile(atPath: trips.path), "no Trips binary at \(trips.path)")

        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let temporary = folder.path("tmp"), work = folder.path("work"), template = folder.path("template")
        for path in [temporary, work, template] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }

        // The README's example, as `swift run Trips` runs it, with its temporary folder moved.
        let written = try OSD.runShell("TMPDIR=\(shellQuoted(temporary)) \(shellQuoted(trips.path))")
        try #require(written.status == 0, "Trips: \(written.error)")
        let actualFolder = temporary + "/OpenSwiftData-Trips"
        let document = actualFolder + "/Trips.store"
        #expect(written.output.contains("Inspect it with: swift run osd info \(document)\n"), "\(written.output)")
        try #require(FileManager.default.fileExists(atPath: document))
        try FileManager.default.copyItem(atPath: actualFolder, toPath: template + "/OpenSwiftData-Trips")

        for example in examples {
            // The document as Trips left it (an earlier example may have compacted it).
            try FileManager.default.removeItem(atPath: actualFolder)
            try FileManager.default.copyItem(atPath: template + "/OpenSwiftData-Trips", toPath: actualFolder)

            let command = example.command.replacingOccurrences(of: Self.documentedFolder, with: actualFolder)
            let result = try OSD.runShell(
                "export PATH=\(shellQuoted(osd.deletingLastPathComponent().path)):\"$PATH\"; "
                    + "doc=\(shellQuoted(document)); cd \(shellQuoted(work)) && \(command)")
            let place = "Docs/CLI.md line \(example.line): \(example.command)"
            guard let sample = example.sample else {
                #expect(result.status == 0, "\(place)\nexit \(result.status): \(result.error)")
                #expect(!result.output.isEmpty, "\(place)\nprinted nothing")
                continue
            }
            let expected = sample.map { $0.replacingOccurrences(of: Self.documentedFolder, with: actualFolder) }
            let stream: String
            if example.expectsFailure {
                #expect(result.status != 0, "\(place)\nsucceeded, but the page shows a failure")
                stream = result.error
            } else {
                #expect(result.status == 0, "\(place)\nexit \(result.status): \(result.error)")
                stream = result.output
            }
            let printed = CLIExamples.lines(stream)
            #expect(
                CLIExamples.matches(expected, printed),
                "\(place)\nthe page shows:\n\(expected.joined(separator: "\n"))\nit prints:\n\(printed.joined(separator: "\n"))")
        }
    }

    /// The matcher the examples rely on: `…` within a line and as a whole line.
    @Test func samplesMatchWithEllipses() {
        #expect(CLIExamples.matches(["a", "b"], ["a", "b"]))
        #expect(!CLIExamples.matches(["a", "b"], ["a", "b", "c"]))
        #expect(!CLIExamples.matches(["a"], ["b"]))
        #expect(CLIExamples.matches(["store id  …"], ["store id  6B1F"]))
        #expect(CLIExamples.matches(["a…c…e"], ["abcde"]))
        #expect(!CLIExamples.matches(["a…c…e"], ["abcd"]))
        #expect(!CLIExamples.matches(["ab…ba"], ["aba"]))
        #expect(CLIExamples.matches(["a", "…", "z"], ["a", "b", "c", "z"]))
        #expect(CLIExamples.matches(["a", "…", "z"], ["a", "z"]))
        #expect(!CLIExamples.matches(["a", "…", "z"], ["a", "b"]))
    }

    /// The parser's rules, on a page of its own.
    @Test func parserFindsCommandsAndSamples() {
        let page = """
            Text with `osd info x` inline is not an example.

            ```
            osd info <document> [--json]
            ```

            ```sh
            doc=/tmp/x
            osd verify "$doc"    # a comment
            osd --generate-completion-script bash > ~/.local/share/osd
            ```

            ```
            $ osd info "$doc"
            line 1
            line 2

            $ osd info nothing
            osd: nothing does not exist
            ```
            """
        let examples = CLIExamples.parse(page)
        #expect(examples.map(\.command) == [
            #"osd verify "$doc"    # a comment"#, "osd --generate-completion-script bash", #"osd info "$doc""#, "osd info nothing",
        ])
        #expect(examples.map(\.sample) == [nil, nil, ["line 1", "line 2"], ["osd: nothing does not exist"]])
        #expect(examples.map(\.expectsFailure) == [false, false, false, true])
        #expect(examples.map(\.line) == [9, 10, 14, 18])
    }
}

/// Reads the examples out of Docs/CLI.md (see `CLIDocumentationTests`).
enum CLIExamples {
    struct Example {
        var line: Int
        var command: String
        /// What the page shows the command printing, if it shows anything.
        var sample: [String]?

        var expectsFailure: Bool { sample?.first?.hasPrefix("osd: ") ?? false }
    }

    struct CodeLine {
        var line: Int
        var text: String
        /// The first line of each fenced block starts a new block.
        var startsBlock: Bool
    }

    /// The lines inside fenced code blocks, with their line numbers.
    static func codeLines(_ page: String) -> [CodeLine] {
        var result: [CodeLine] = []
        var inside = false, first = false
        for (index, line) in page.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                inside.toggle()
                first = inside
                continue
            }
            if inside {
                result.append(CodeLine(line: index + 1, text: String(line), startsBlock: first))
                first = false
            }
        }
        return result
    }

    static func parse(_ page: String) -> [Example] {
        var examples: [Example] = []
        /// The example whose sample is being read (a `$ osd` line's).
        var open: Int?
        for code in codeLines(page) {
            if code.startsBlock { open = nil }
            let text = code.text
            if text.hasPrefix("$ ") {
                open = nil
                guard text.hasPrefix("$ osd "), let command = runnable(String(text.dropFirst(2))) else { continue }
                examples.append(Example(line: code.line, command: command, sample: []))
                open = examples.count - 1
            } else if let index = open {
                examples[index].sample?.append(text)
            } else if text.hasPrefix("osd "), let command = runnable(text) {
                examples.append(Example(line: code.line, command: command, sample: nil))
            }
        }
        for index in examples.indices {
            while let last = examples[index].sample?.last, last.trimmingCharacters(in: .whitespaces).isEmpty {
                examples[index].sample?.removeLast()
            }
        }
        return examples
    }

    /// The command to run for a line: none for a synopsis (`<document>`, `<file.json>`),
    /// and an install into the reader's home folder (`> ~/…`) without its redirection.
    private static func runnable(_ line: String) -> String? {
        if line.contains(#/<[A-Za-z][A-Za-z.-]*>/#) { return nil }
        if let redirection = line.range(of: " > ~/") {
            return line[..<redirection.lowerBound].trimmingCharacters(in: .whitespaces)
        }
        return line
    }

    /// A command's output as lines, without the last line's newline and trailing spaces.
    static func lines(_ output: String) -> [String] {
        var lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(trimmed)
        if lines.last == "" { lines.removeLast() }
        return lines
    }

    private static func trimmed(_ line: Substring) -> String {
        var line = line
        while line.last == " " { line.removeLast() }
        return String(line)
    }

    /// Whether `printed` has the documented lines: `…` in a line matches any text; a
    /// line that is only `…` matches any number of lines.
    static func matches(_ documented: [String], _ printed: [String]) -> Bool {
        let documented = documented.map { trimmed($0[...]) }
        func match(_ d: Int, _ p: Int) -> Bool {
            if d == documented.count { return p == printed.count }
            if documented[d] == "…" {
                return (p...printed.count).contains { match(d + 1, $0) }
            }
            return p < printed.count && lineMatches(documented[d], printed[p]) && match(d + 1, p + 1)
        }
        return match(0, 0)
    }

    private static func lineMatches(_ pattern: String, _ line: String) -> Bool {
        let pieces = pattern.components(separatedBy: "…")
        guard pieces.count > 1 else { return pattern == line }
        guard line.hasPrefix(pieces[0]), line.hasSuffix(pieces[pieces.count - 1]),
            line.count >= pieces[0].count + pieces[pieces.count - 1].count
        else { return false }
        var rest = line.dropFirst(pieces[0].count).dropLast(pieces[pieces.count - 1].count)
        for piece in pieces.dropFirst().dropLast() where !piece.isEmpty {
            guard let range = rest.range(of: piece) else { return false }
            rest = rest[range.upperBound...]
        }
        return true
    }
}

/// `text` in single quotes for bash.
private func shellQuoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
}
