import Foundation
import SwiftData
import Testing

/// A model with more attributes than a 64-bit mask has bits: changes to slots on
/// both sides of 64 are saved and read back.
@Model
final class WideRecord {
    @Attribute(.unique) var key: String
    var a0: Int = 0
    var a1: Int = 0
    var a2: Int = 0
    var a3: Int = 0
    var a4: Int = 0
    var a5: Int = 0
    var a6: Int = 0
    var a7: Int = 0
    var a8: Int = 0
    var a9: Int = 0
    var a10: Int = 0
    var a11: Int = 0
    var a12: Int = 0
    var a13: Int = 0
    var a14: Int = 0
    var a15: Int = 0
    var a16: Int = 0
    var a17: Int = 0
    var a18: Int = 0
    var a19: Int = 0
    var a20: Int = 0
    var a21: Int = 0
    var a22: Int = 0
    var a23: Int = 0
    var a24: Int = 0
    var a25: Int = 0
    var a26: Int = 0
    var a27: Int = 0
    var a28: Int = 0
    var a29: Int = 0
    var a30: Int = 0
    var a31: Int = 0
    var a32: Int = 0
    var a33: Int = 0
    var a34: Int = 0
    var a35: Int = 0
    var a36: Int = 0
    var a37: Int = 0
    var a38: Int = 0
    var a39: Int = 0
    var a40: Int = 0
    var a41: Int = 0
    var a42: Int = 0
    var a43: Int = 0
    var a44: Int = 0
    var a45: Int = 0
    var a46: Int = 0
    var a47: Int = 0
    var a48: Int = 0
    var a49: Int = 0
    var a50: Int = 0
    var a51: Int = 0
    var a52: Int = 0
    var a53: Int = 0
    var a54: Int = 0
    var a55: Int = 0
    var a56: Int = 0
    var a57: Int = 0
    var a58: Int = 0
    var a59: Int = 0
    var a60: Int = 0
    var a61: Int = 0
    var a62: Int = 0
    var a63: Int = 0
    var a64: Int = 0
    var a65: Int = 0
    var a66: Int = 0
    var a67: Int = 0
    var a68: Int = 0
    var a69: Int = 0

    init(key: String) {
        self.key = key
    }
}

@Suite struct WideModelTests {
    @Test func changesOnEitherSideOfSlot64AreSaved() throws {
        let container = try ModelContainer(for: WideRecord.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let record = WideRecord(key: "w")
        context.insert(record)
        try context.save()
        record.a1 = 11
        record.a63 = 63
        record.a64 = 64
        record.a69 = 69
        #expect(context.hasChanges)
        #expect(context.changedModelsArray.count == 1)
        try context.save()
        #expect(!context.hasChanges)

        let other = ModelContext(container)
        let read = try #require(try other.fetch(FetchDescriptor<WideRecord>(predicate: #Predicate { $0.key == "w" })).first)
        let values: [Int] = [read.a0, read.a1, read.a62, read.a63, read.a64, read.a65, read.a69]
        #expect(values == [0, 11, 0, 63, 64, 0, 69])

        // A later change to one high slot writes that slot only: another context's
        // change to a low slot in between survives.
        read.a2 = 2
        try other.save()
        record.a68 = 68
        try context.save()
        let third = ModelContext(container)
        let again = try #require(try third.fetch(FetchDescriptor<WideRecord>()).first)
        let merged: [Int] = [again.a1, again.a2, again.a64, again.a68]
        #expect(merged == [11, 2, 64, 68])
    }
}
