import Foundation
import Observation
@testable import OpenSwiftData
import Testing

/// The probe that lets `@Model` skip the registrar of reads nobody tracks
/// (`ObservationTrackingProbe`): it must find the runtime's getter on this toolchain
/// (otherwise every read silently pays the registrar again) and answer as the runtime
/// does; its ELF reader must refuse what is not a symbol table.
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

    @Test func elfReaderRefusesDamagedImages() throws {
        #expect(ELFSymbols.values(of: ["x"], in: Data()) == nil)
        #expect(ELFSymbols.values(of: ["x"], in: Data(repeating: 0x7F, count: 4_096)) == nil)
        #if os(Linux)
        let path = "/proc/self/exe"
        let image = try #require(FileManager.default.contents(atPath: path))
        // Cut anywhere, or with its section table pointing past the end, it yields no
        // value read from outside the image, and never traps.
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let cut = Int.random(in: 0..<min(image.count, 1 << 16), using: &generator)
            _ = ELFSymbols.values(of: ["main"], in: image.prefix(cut))
        }
        var broken = image
        broken.replaceSubrange(0x28..<0x30, with: withUnsafeBytes(of: UInt64.max - 8) { Data($0) })
        #expect(ELFSymbols.values(of: ["main"], in: broken) == nil)
        #endif
    }
}
