// The fuzz test's child process: reads mutated copies of a sample document for a
// set time, under a memory limit, and exits 0 only when every input ended in a
// typed error or in a document whose every row reads back.
//
//     DocumentFuzzer <sample document> <seconds> <seed>
//
// Mutations: bit flips, truncation, frames duplicated, dropped or swapped, length
// fields set to 2³¹, 2³²−1 or 0, payload edits (varints of 2³¹, 2⁶² and 2⁶³ inserted,
// bytes flipped, cut or repeated) with every checksum recomputed so the decoders
// see them, zstd bombs with honest and lying lengths, and header edits. Before each
// read the input's description goes to `fuzz-current.txt` beside the sample, so a
// crash can be reproduced. Memory: the address space is capped (`RLIMIT_AS`), and
// each read's peak resident memory (VmHWM, reset before it) may grow by at most
// 4 × the reader's decompression budget for that input plus 64 MiB; either limit
// broken is a failure.
import DocumentTestSupport
import Foundation
import OpenSwiftDataStore

struct XorShift: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("DocumentFuzzer: \(message)\n".utf8))
    exit(status)
}

let arguments = CommandLine.arguments
guard arguments.count == 4, let seconds = Double(arguments[2]), let seed = UInt64(arguments[3]) else {
    fail("usage: DocumentFuzzer <sample document> <seconds> <seed>", status: 64)
}
let samplePath = arguments[1]
let folder = URL(fileURLWithPath: samplePath).deletingLastPathComponent()
let inputPath = folder.appendingPathComponent("fuzz-input.store").path
let currentPath = folder.appendingPathComponent("fuzz-current.txt")
guard let sampleData = FileManager.default.contents(atPath: samplePath) else { fail("cannot read \(samplePath)", status: 66) }
let sample = [UInt8](sampleData)
do {
    _ = try DocumentReader.read(path: samplePath, blobs: .load)
} catch {
    fail("the sample does not read: \(error)", status: 65)
}
// Inputs read the sample's blobs through a link.
unlink(inputPath + ".blobs")
guard symlink(samplePath + ".blobs", inputPath + ".blobs") == 0 else { fail("cannot link the blob folder", status: 73) }

/// Varints a hostile file would use for counts and lengths.
let hostileVarints: [[UInt8]] = [UInt64(1) << 31, UInt64(1) << 32, UInt64(1) << 62, UInt64(1) << 63, UInt64.max, 0]
    .map(FrameBytes.varint)

// zstd bombs, made once: payloads of zeros and of a repeated row-like pattern.
let bombs: [(stored: [UInt8], raw: Int)] = [1 << 20, 12 << 20, 40 << 20].flatMap { size -> [([UInt8], Int)] in
    let zeros = [UInt8](repeating: 0, count: size)
    let pattern = (0..<size).map { UInt8(truncatingIfNeeded: $0 % 7 == 0 ? 12 : 0) }
    return [(FrameBytes.zstd(zeros, level: 1), size), (FrameBytes.zstd(pattern, level: 1), size)]
}

/// Makes inputs from the sample: each mutation returns the new bytes and what it did.
struct Mutator {
    var random: XorShift

    /// A frame of `file` (frames move as mutations pile up), or nil when none is whole.
    mutating func frame(of file: [UInt8]) -> FrameBytes.Place? {
        FrameBytes.frames(in: file).randomElement(using: &random)
    }

    /// A structural mutation of the sample (frame boundaries known), described.
    mutating func structural(_ file: [UInt8]) -> ([UInt8], String) {
        guard let f = frame(of: file), let other = frame(of: file) else { return (file, "nothing") }
        let bytes = Array(file[f.offset..<(f.offset + f.length)])
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            let at = other.offset
            return (Array(file[..<at]) + bytes + Array(file[at...]), "frame at \(f.offset) duplicated before \(at)")
        case 1:
            return (Array(file[..<f.offset]) + Array(file[(f.offset + f.length)...]), "frame at \(f.offset) dropped")
        case 2:
            let g = other
            guard g.offset != f.offset else { return (file, "nothing") }
            let (a, b) = f.offset < g.offset ? (f, g) : (g, f)
            let first = Array(file[a.offset..<(a.offset + a.length)]), second = Array(file[b.offset..<(b.offset + b.length)])
            let swapped = Array(file[..<a.offset]) + second + Array(file[(a.offset + a.length)..<b.offset]) + first
                + Array(file[(b.offset + b.length)...])
            return (swapped, "frames at \(a.offset) and \(b.offset) swapped")
        default:
            // A length field set to a hostile value, header checksum recomputed.
            let field = Bool.random(using: &random) ? 8 : 12
            let value: UInt32 = [1 << 31, UInt32.max, 0, (1 << 31) - 1, UInt32.random(in: 0...UInt32.max, using: &random)]
                .randomElement(using: &random)!
            var out = file
            out.replaceSubrange((f.offset + field)..<(f.offset + field + 4), with: FrameBytes.fixed32(value))
            return (FrameBytes.resealingFrameHeader(out, at: f.offset), "frame at \(f.offset): \(field == 8 ? "stored" : "raw") length \(value)")
        }
    }

    /// A payload edit behind valid checksums, so the decoders see it.
    mutating func payloadEdit(_ file: [UInt8]) -> ([UInt8], String) {
        guard let f = frame(of: file), var payload = FrameBytes.payload(of: f, in: file) else { return (file, "nothing") }
        var what: String
        let at = payload.isEmpty ? 0 : Int.random(in: 0..<payload.count, using: &random)
        switch Int.random(in: 0..<5, using: &random) {
        case 0:
            let varint = hostileVarints.randomElement(using: &random)!
            payload.insert(contentsOf: varint, at: at)
            what = "varint \(varint) inserted at \(at)"
        case 1:
            let varint = hostileVarints.randomElement(using: &random)!
            payload.replaceSubrange(at..<min(payload.count, at + varint.count), with: varint)
            what = "varint \(varint) written at \(at)"
        case 2:
            for _ in 0..<Int.random(in: 1...4, using: &random) where !payload.isEmpty {
                payload[Int.random(in: 0..<payload.count, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
            }
            what = "bytes flipped"
        case 3:
            payload.removeSubrange(at...)
            what = "cut at \(at)"
        default:
            let end = min(payload.count, at + Int.random(in: 1...64, using: &random))
            payload.insert(contentsOf: payload[at..<end], at: end)
            what = "bytes \(at)..<\(end) repeated"
        }
        let compressed = Bool.random(using: &random)
        let stored = compressed ? FrameBytes.zstd(payload, level: 1) : payload
        return (FrameBytes.replacing(f, in: file, codec: compressed ? 1 : 0, stored: stored, raw: payload.count),
                "\(f.kind) frame at \(f.offset), payload \(what), \(compressed ? "compressed" : "stored")")
    }

    /// A frame replaced by a zstd bomb, claiming its size or another.
    mutating func bomb(_ file: [UInt8]) -> ([UInt8], String) {
        guard let f = frame(of: file) else { return (file, "nothing") }
        let b = bombs.randomElement(using: &random)!
        let claim = [b.raw, b.raw / 2, b.raw + 1, Int(Int32.max)].randomElement(using: &random)!
        return (FrameBytes.replacing(f, in: file, codec: 1, stored: b.stored, raw: claim),
                "\(f.kind) frame at \(f.offset) replaced by a bomb of \(b.raw) bytes claiming \(claim)")
    }

    /// Byte-level damage with no checksum fixed.
    mutating func damage(_ file: [UInt8]) -> ([UInt8], String) {
        guard !file.isEmpty else { return (file, "nothing") }
        if Bool.random(using: &random) {
            let cut = Int.random(in: 0..<file.count, using: &random)
            return (Array(file[..<cut]), "cut at \(cut)")
        }
        var out = file
        var flips: [Int] = []
        for _ in 0..<Int.random(in: 1...8, using: &random) {
            let at = Int.random(in: 0..<out.count, using: &random)
            out[at] ^= 1 << UInt8.random(in: 0...7, using: &random)
            flips.append(at)
        }
        return (out, "bits flipped at \(flips)")
    }

    /// The document header's generation or version edited, checksum recomputed.
    mutating func headerEdit(_ file: [UInt8]) -> ([UInt8], String) {
        var out = file
        let field = [8, 10, 12, 16, 20].randomElement(using: &random)!
        out.replaceSubrange(field..<(field + 4), with: FrameBytes.fixed32(UInt32.random(in: 0...UInt32.max, using: &random)))
        return (FrameBytes.resealingHeader(out), "header bytes \(field)..<\(field + 4) changed")
    }
}

// The memory limit: room for the reader's worst case on these inputs, not for runaway claims.
let addressSpace: rlim_t = 3 << 30
var limit = rlimit(rlim_cur: addressSpace, rlim_max: addressSpace)
if setrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &limit) != 0 { fail("cannot limit the address space", status: 71) }

/// The process's resident and peak resident bytes, from /proc/self/status.
func residentBytes() -> (current: Int, peak: Int) {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return (0, 0) }
    func field(_ name: String) -> Int {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return 0 }
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }
    return (field("VmRSS"), field("VmHWM"))
}

/// Resets the peak (VmHWM) to the current size, so each input's peak is its own;
/// false where the kernel does not allow it.
func resetPeak() -> Bool {
    (try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)) != nil
}

// Without a resettable peak, each read's memory cannot be told apart: say so and stop.
guard resetPeak() else { fail("/proc/self/clear_refs cannot reset the peak RSS here", status: 70) }

var largestGrowth = 0
var outcomes: [String: Int] = [:]
var inputs = 0
var mutator = Mutator(random: XorShift(state: seed | 1))
let deadline = Date().addingTimeInterval(seconds)
while Date() < deadline {
    var file = sample
    var steps: [String] = []
    if Int.random(in: 0..<3, using: &mutator.random) == 0 { let (f, s) = mutator.structural(file); file = f; steps.append(s) }
    switch Int.random(in: 0..<6, using: &mutator.random) {
    case 0, 1: let (f, s) = mutator.payloadEdit(file); file = f; steps.append(s)
    case 2: let (f, s) = mutator.bomb(file); file = f; steps.append(s)
    case 3: let (f, s) = mutator.headerEdit(file); file = f; steps.append(s)
    default: break
    }
    if steps.isEmpty || Int.random(in: 0..<3, using: &mutator.random) == 0 { let (f, s) = mutator.damage(file); file = f; steps.append(s) }
    inputs += 1
    let description = "input \(inputs) (seed \(seed)): " + steps.joined(separator: "; ")
    try? Data(description.utf8).write(to: currentPath)
    guard FileManager.default.createFile(atPath: inputPath, contents: Data(file)) else { fail("cannot write \(inputPath)", status: 73) }

    _ = resetPeak()
    let before = residentBytes().current
    do throws(DocumentError) {
        let contents = try DocumentReader.read(path: inputPath, blobs: .load)
        // What opened must be whole: tables, indexes and unique keys agree (traps otherwise).
        contents.version._checkInvariants()
        var values = 0
        for table in contents.version.tables {
            table.forEach { _, row in values += row.count }
        }
        outcomes["read", default: 0] += 1
        _ = values
    } catch {
        // Any DocumentError is a typed answer; which one only feeds the summary.
        let kind = switch error {
        case .damaged: "damaged"
        case .notADocument: "not a document"
        case .unsupportedFormat: "unsupported format"
        case .blob: "blob"
        default: "other"
        }
        outcomes[kind, default: 0] += 1
    }
    // The reader may decompress 256 × the file + 16 MiB; decoded values may take a
    // few times that. Anything above means a claim was believed.
    let growth = residentBytes().peak - before
    largestGrowth = max(largestGrowth, growth)
    let allowed = 4 * (256 * file.count + (16 << 20)) + (64 << 20)
    if growth > allowed {
        fail("memory grew by \(growth) bytes, over \(allowed) for \(file.count), at \(description)", status: 3)
    }
}
try? FileManager.default.removeItem(atPath: currentPath.path)
let summary = outcomes.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
print("fuzzed \(inputs) inputs (seed \(seed)) in \(Int(seconds)) s: \(summary); largest memory growth \(largestGrowth) bytes")
