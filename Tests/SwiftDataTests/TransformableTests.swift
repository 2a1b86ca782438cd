import Foundation
import SwiftData
import Testing

/// A colour that is not `Codable`: only a value transformer can store it.
final class Tint: Equatable, Sendable {
    let red: UInt8, green: UInt8, blue: UInt8

    init(_ red: UInt8, _ green: UInt8, _ blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    static func == (a: Tint, b: Tint) -> Bool { (a.red, a.green, a.blue) == (b.red, b.green, b.blue) }
}

/// Stores a `Tint` as three bytes.
final class TintTransformer: ValueTransformer, @unchecked Sendable {
    static let name = NSValueTransformerName("TintTransformer")

    override func transformedValue(_ value: Any?) -> Any? {
        (value as? Tint).map { Data([$0.red, $0.green, $0.blue]) }
    }

    override func reverseTransformedValue(_ value: Any?) -> Any? {
        guard let data = value as? Data, data.count == 3 else { return nil }
        return Tint(data[data.startIndex], data[data.startIndex + 1], data[data.startIndex + 2])
    }
}

@Model
final class Swatch {
    var name: String
    @Attribute(.transformable(by: "TintTransformer")) var tint: Tint?
    @Attribute(.transformable(by: "TintTransformer")) var base: Tint

    init(name: String, tint: Tint?, base: Tint) {
        self.name = name
        self.tint = tint
        self.base = base
    }
}

@Model
final class Stamp {
    @Attribute(.transformable(by: "NoSuchTransformer")) var ink: Tint?
    init(ink: Tint?) { self.ink = ink }
}

/// Upper-cases a string on the way into the store: a transformer over a type the
/// engine also stores natively, so `@Model`'s typed accessors must leave it to the
/// transformer.
final class ShoutTransformer: ValueTransformer, @unchecked Sendable {
    static let name = NSValueTransformerName("ShoutTransformer")

    override func transformedValue(_ value: Any?) -> Any? {
        (value as? String).map { Data($0.uppercased().utf8) }
    }

    override func reverseTransformedValue(_ value: Any?) -> Any? {
        (value as? Data).map { String(decoding: $0, as: UTF8.self) }
    }
}

@Model
final class Shout {
    @Attribute(.transformable(by: "ShoutTransformer")) var text: String
    var note: String
    init(text: String, note: String) {
        self.text = text
        self.note = note
    }
}

/// Issue #12, point 6: `.transformable(by:)` stores values through the named,
/// registered `ValueTransformer`.
@Suite struct TransformableTests {
    init() {
        ValueTransformer.setValueTransformer(TintTransformer(), forName: TintTransformer.name)
        ValueTransformer.setValueTransformer(ShoutTransformer(), forName: ShoutTransformer.name)
    }

    @Test func aTransformerOverANativelyStoredTypeStillRuns() throws {
        let container = try ModelContainer(for: Shout.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let shout = Shout(text: "quiet", note: "quiet")
        // The initializer's write, a setter's write and every read go through it.
        #expect(shout.text == "QUIET")
        #expect(shout.note == "quiet")
        context.insert(shout)
        shout.text = "still quiet"
        #expect(shout.text == "STILL QUIET")
        try context.save()
        let fetched = try ModelContext(container).fetch(FetchDescriptor<Shout>())
        #expect(fetched.map(\.text) == ["STILL QUIET"])
        #expect(fetched.map(\.note) == ["quiet"])
    }

    @Test func valuesRoundTripThroughTheTransformerAndTheDocument() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = folder.file("swatches.store")
        do {
            let context = ModelContext(try ModelContainer(for: Swatch.self, configurations: ModelConfiguration(url: url)))
            context.insert(Swatch(name: "sky", tint: Tint(10, 20, 250), base: Tint(0, 0, 0)))
            context.insert(Swatch(name: "plain", tint: nil, base: Tint(255, 255, 255)))
            try context.save()
        }
        let context = ModelContext(try ModelContainer(for: Swatch.self, configurations: ModelConfiguration(url: url)))
        let swatches = try context.fetch(FetchDescriptor<Swatch>(sortBy: [SortDescriptor(\.name)]))
        #expect(swatches.map(\.name) == ["plain", "sky"])
        #expect(swatches[0].tint == nil)
        #expect(swatches[0].base == Tint(255, 255, 255))
        #expect(swatches[1].tint == Tint(10, 20, 250))
        swatches[1].tint = Tint(1, 2, 3)
        try context.save()
        let again = try ModelContext(context.container).fetch(FetchDescriptor<Swatch>(predicate: #Predicate { $0.name == "sky" }))
        #expect(again.first?.tint == Tint(1, 2, 3))
    }

    @Test func predicatesOnTransformedValuesAreEvaluatedOnModels() throws {
        let context = ModelContext(try ModelContainer(for: Swatch.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true)))
        for i in 0..<6 {
            context.insert(Swatch(name: "s\(i)", tint: i.isMultiple(of: 2) ? nil : Tint(UInt8(i), 0, 0), base: Tint(0, 0, UInt8(i))))
        }
        try context.save()
        let descriptor = FetchDescriptor<Swatch>(predicate: #Predicate { $0.tint == nil })
        #expect(try context.fetch(descriptor).map(\.name).sorted() == ["s0", "s2", "s4"])
        guard case .fallback = try context.explain(descriptor).filtering else {
            Issue.record("a transformed value was compared as stored")
            return
        }
    }

    @Test func anUnregisteredTransformerIsAClearError() throws {
        #expect {
            _ = try ModelContainer(for: Stamp.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        } throws: { error in
            error as? SwiftDataError == .loadIssueModelContainer && "\(error)".contains("NoSuchTransformer")
        }
    }
}
