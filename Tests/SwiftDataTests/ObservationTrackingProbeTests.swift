import Foundation
import Observation
@testable import OpenSwiftData
import Testing

/// The probe that lets `@Model` skip the registrar of reads nobody tracks
/// (`ObservationTrackingProbe`): it must find the runtime's getter on this toolchain
/// (otherwise every read silently pays the registrar again) and answer as the runtime
/// does; its ELF reader must find functions and refuse what is not a symbol table.
@Suite struct ObservationTrackingProbeTests {
    @Test func findsTheRuntimesGetterAndAnswersAsTrackingDoes() {
        #if os(Linux)
        #expect(ObservationTrackingProbe.getter != nil, "the probe fell back: every model read makes a registrar")
        #endif
        #expect(!ObservationTrackingProbe.isTracking || ObservationTrackingProbe.getter == nil)
        var inside = false
        var nested = false
        withObservationTracking {
            inside = ObservationTrackingProbe.isTracking
            withObservationTracking {
                nested = ObservationTrackingProbe.isTracking
            } onChange: {}
        } onChange: {}
        #expect(inside)
        #expect(nested)
    }

    #if os(Linux)
    @Test func elfReaderFindsFunctionsAndRefusesDamagedImages() throws {
        #expect(ELFSymbols.functions(named: ["x"], in: Data()) == nil)
        #expect(ELFSymbols.functions(named: ["x"], in: Data(repeating: 0x7F, count: 4_096)) == nil)
        let path = try #require(ObservationTrackingProbe.libraryPath)
        let image = try #require(FileManager.default.contents(atPath: path))
        let names: Set = [ObservationTrackingProbe.anchorName, ObservationTrackingProbe.getterName]
        let whole = try #require(ELFSymbols.functions(named: names, in: image))
        #expect(Set(whole.keys) == names)
        // Cut at every sixteenth (the section table is at the end, the symbols before
        // it): nothing found is wrong, and nothing traps.
        for sixteenth in 1 ..< 16 {
            let cut = image.prefix(image.count * sixteenth / 16)
            for (name, value) in ELFSymbols.functions(named: names, in: cut) ?? [:] {
                #expect(whole[name] == value)
            }
        }
        // A section table past the end: refused.
        var broken = image
        broken.replaceSubrange(0x28 ..< 0x30, with: withUnsafeBytes(of: (UInt64.max - 8).littleEndian) { Data($0) })
        #expect(ELFSymbols.functions(named: names, in: broken) == nil)
        // A symbol table claiming 2^64 bytes: read only as far as the image goes.
        var huge = image
        let table = Int(image.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 0x28, as: UInt64.self) })
        let entrySize = Int(image.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 0x3A, as: UInt16.self) })
        let sections = Int(image.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 0x3C, as: UInt16.self) })
        let symbolTable = try #require((0 ..< sections).first { index in
            image.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: table + index * entrySize + 4, as: UInt32.self) } == 2
        })
        let sizeField = table + symbolTable * entrySize + 32
        huge.replaceSubrange(sizeField ..< sizeField + 8, with: withUnsafeBytes(of: UInt64.max.littleEndian) { Data($0) })
        #expect(ELFSymbols.functions(named: names, in: huge) == whole)
    }
    #endif
}
