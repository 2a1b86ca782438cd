#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import Observation

/// Tells whether a `withObservationTracking` is recording reads on this thread, so that
/// `@Model`'s generated `access` makes a model's registrar only when a read can register
/// an observer.
///
/// Making a registrar and ending it costs about 1,500 instructions a model: 29 % of the
/// instructions of a fetch that reads one property of each model (W5, W6 walk). `ObservationRegistrar`'s
/// `access` does nothing unless the Observation runtime's thread-local access list is
/// set, and a registrar made for a read outside tracking only ever serves later reads
/// (a write before any tracked read has no observer to notify). The runtime has no public
/// way to read that thread-local; its getter, `_swift_observation_tls_get`, is a local
/// symbol of `libswiftObservation`. The probe finds it in the library's symbol table
/// (the library mapped in this process, found through an exported symbol), calls it only
/// when the address is a defined function's inside an executable mapping of that file,
/// and keeps it only after checking, once, that it answers the outer list outside and a
/// new list inside a `withObservationTracking` of its own. (The runtime declares it with
/// the Swift calling convention; with no arguments and a pointer result that is the C
/// one on x86_64 and arm64.) Re-check it on every toolchain upgrade: the check shows that
/// `withObservationTracking` sets this thread-local, and today every way of tracking
/// (its willSet/didSet forms, `Observations`) goes through it.
///
/// Where any step fails (another platform, a stripped runtime, a renamed symbol, a
/// getter that does not behave) `isTracking` is always true: every read makes the
/// registrar, as before. (A statically linked runtime is the executable itself: the
/// probe reads the executable's symbol table, and falls back if it is stripped.)
/// `OPENSWIFTDATA_EAGER_OBSERVATION=1` forces the fallback.
enum ObservationTrackingProbe {
    typealias Getter = @convention(c) () -> UnsafeMutableRawPointer?

    /// The checked getter, or nil when reads must assume tracking.
    static let getter: Getter? = {
        if ProcessInfo.processInfo.environment["OPENSWIFTDATA_EAGER_OBSERVATION"] == "1" { return nil }
        guard let getter = findGetter(), behaves(getter) else { return nil }
        return getter
    }()

    /// Whether a read now may register an observer.
    @inline(__always)
    static var isTracking: Bool {
        guard let getter else { return true }
        return getter() != nil
    }

    /// The getter checked against the runtime's own behaviour: inside a tracking scope it
    /// must answer a list other than the one outside it, and the outer one after.
    private static func behaves(_ getter: Getter) -> Bool {
        let outer = getter()
        var inner: UnsafeMutableRawPointer?
        withObservationTracking { inner = getter() } onChange: {}
        return inner != nil && inner != outer && getter() == outer
    }

    #if os(Linux) && (canImport(Glibc) || canImport(Musl))
    /// `ObservationRegistrar.init()`, exported: where `libswiftObservation` is mapped.
    static let anchorName = "$s11Observation0A9RegistrarVACycfC"
    static let getterName = "_swift_observation_tls_get"

    private static func findGetter() -> Getter? {
        guard let process = dlopen(nil, RTLD_NOW), let anchor = dlsym(process, anchorName) else { return nil }
        let maps = Mappings.read()
        guard let path = maps.file(containing: UInt(bitPattern: anchor)),
              let image = readWhole(path).map({ Data($0) }),
              let values = ELFSymbols.functions(named: [anchorName, getterName], in: image),
              let anchorValue = values[anchorName], let getterValue = values[getterName]
        else { return nil }
        let address = UInt(bitPattern: anchor) &- UInt(anchorValue) &+ UInt(getterValue)
        // Called only where that file's code is mapped.
        guard maps.isExecutable(address, in: path), let pointer = UnsafeRawPointer(bitPattern: address) else { return nil }
        return unsafeBitCast(pointer, to: Getter.self)
    }

    /// The mapped library the probe reads symbols from, if found: for tests.
    static var libraryPath: String? {
        guard let process = dlopen(nil, RTLD_NOW), let anchor = dlsym(process, anchorName) else { return nil }
        return Mappings.read().file(containing: UInt(bitPattern: anchor))
    }

    /// This process's memory mappings, from `/proc/self/maps`.
    struct Mappings {
        var regions: [(start: UInt, end: UInt, executable: Bool, path: String)] = []

        static func read() -> Mappings {
            var maps = Mappings()
            guard let bytes = readWhole("/proc/self/maps") else { return maps }
            for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
                // "start-end perms offset dev inode path"
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count >= 6, fields[5].hasPrefix("/") else { continue }
                let range = fields[0].split(separator: "-")
                guard range.count == 2, let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16) else { continue }
                maps.regions.append((start, end, fields[1].contains("x"), fields[5...].joined(separator: " ")))
            }
            return maps
        }

        /// The path of the file mapped at `address`.
        func file(containing address: UInt) -> String? {
            regions.first { $0.start <= address && address < $0.end }?.path
        }

        /// Whether `address` lies in an executable mapping of `path`.
        func isExecutable(_ address: UInt, in path: String) -> Bool {
            regions.contains { $0.start <= address && address < $0.end && $0.executable && $0.path == path }
        }
    }

    /// The file's bytes, read to its end: a `/proc` file states no size, and
    /// Foundation's `String(contentsOfFile:)` stopped after its first page.
    private static func readWhole(_ path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
        }
    }
    #else
    private static func findGetter() -> Getter? { nil }
    #endif
}

/// Reads symbol values from the static symbol table (`.symtab`) of a 64-bit
/// little-endian ELF image, checking every offset against the image.
enum ELFSymbols {
    /// The values of those of `names` the image's symbol table defines as functions;
    /// nil when the image is not such an ELF file or has no symbol table.
    static func functions(named names: Set<String>, in image: Data) -> [String: UInt64]? {
        image.withUnsafeBytes { bytes -> [String: UInt64]? in
            func read<T: FixedWidthInteger>(_: T.Type, at offset: UInt64) -> T? {
                guard offset <= UInt64(bytes.count), UInt64(bytes.count) - offset >= UInt64(MemoryLayout<T>.size) else { return nil }
                return T(littleEndian: bytes.loadUnaligned(fromByteOffset: Int(offset), as: T.self))
            }
            /// The NUL-terminated string at `offset`, which must end before `limit`.
            func string(at offset: UInt64, limit: UInt64) -> String? {
                guard limit <= UInt64(bytes.count), offset < limit else { return nil }
                var end = Int(offset)
                while end < Int(limit), bytes[end] != 0 { end += 1 }
                guard end < Int(limit) else { return nil }
                return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[Int(offset)..<end]), as: UTF8.self)
            }
            // ELF magic, 64-bit class, little-endian.
            guard bytes.count >= 64, bytes[0] == 0x7F, bytes[1] == 0x45, bytes[2] == 0x4C, bytes[3] == 0x46,
                  bytes[4] == 2, bytes[5] == 1,
                  let sectionTable = read(UInt64.self, at: 0x28),
                  let entrySize = read(UInt16.self, at: 0x3A), entrySize >= 64,
                  let sectionCount = read(UInt16.self, at: 0x3C)
            else { return nil }
            func section(_ index: UInt64) -> (type: UInt32, offset: UInt64, size: UInt64, link: UInt32, entrySize: UInt64)? {
                let base = sectionTable &+ index &* UInt64(entrySize)
                guard index < UInt64(sectionCount), let type = read(UInt32.self, at: base &+ 4),
                      let offset = read(UInt64.self, at: base &+ 24), let size = read(UInt64.self, at: base &+ 32),
                      let link = read(UInt32.self, at: base &+ 40), let entries = read(UInt64.self, at: base &+ 56)
                else { return nil }
                return (type, offset, size, link, entries)
            }
            let symbolTableType: UInt32 = 2
            for index in 0..<UInt64(sectionCount) {
                guard let symbols = section(index), symbols.type == symbolTableType, symbols.entrySize >= 24,
                      let strings = section(UInt64(symbols.link))
                else { continue }
                var found: [String: UInt64] = [:]
                // (A damaged size claims no more entries than the image holds.)
                guard symbols.offset <= UInt64(bytes.count) else { return nil }
                let entries = min(symbols.size, UInt64(bytes.count) - symbols.offset) / symbols.entrySize
                let functionType: UInt8 = 2, undefinedSection: UInt16 = 0
                var entry: UInt64 = 0
                while entry < entries {
                    defer { entry += 1 }
                    let base = symbols.offset &+ entry &* symbols.entrySize
                    guard let nameOffset = read(UInt32.self, at: base), let info = read(UInt8.self, at: base &+ 4),
                          info & 0xF == functionType, let section = read(UInt16.self, at: base &+ 6), section != undefinedSection,
                          let value = read(UInt64.self, at: base &+ 8), value != 0,
                          let name = string(at: strings.offset &+ UInt64(nameOffset), limit: strings.offset &+ strings.size)
                    else { continue }
                    if names.contains(name) { found[name] = value }
                }
                return found
            }
            return nil
        }
    }
}
