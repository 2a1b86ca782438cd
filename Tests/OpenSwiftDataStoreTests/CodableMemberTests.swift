import Foundation
import OpenSwiftDataStore
import Testing

/// Reading members of stored `Codable` values from their JSON, as compiled
/// predicates do (`QueryExpression.member`).
@Suite struct CodableMemberTests {
    struct Inner: Codable {
        var when: Date
        var id: UUID
        var blob: Data
        var ratio: Float
        var big: UInt64
        var set: Set<Int>
    }

    struct Outer: Codable {
        var name: String
        var path: String
        var count: Int
        var flag: Bool
        var missing: String?
        var inner: Inner
        var list: [Int]
    }

    static let outer = Outer(
        name: "quote \" and \\ and ü", path: "a/b", count: -7, flag: true, missing: nil,
        inner: Inner(
            when: Date(timeIntervalSinceReferenceDate: 12_345.625), id: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
            blob: Data([0, 1, 2, 255]), ratio: 0.1, big: .max, set: [3, 1, 2]),
        list: [3, 1, 2])

    /// The value as the model layer stores it: JSON with sorted keys.
    static var stored: Value {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return .codable(try! encoder.encode(outer))
    }

    func member(_ path: [String], _ type: ValueType) throws -> Value {
        try Value.member(at: path, of: Self.stored, as: type)
    }

    @Test func primitivesReadAsTheModelLayerStoresThem() throws {
        #expect(try member(["name"], .string) == .string(Self.outer.name))
        #expect(try member(["path"], .string) == .string("a/b"))
        #expect(try member(["count"], .int(bits: 64)) == .int(-7))
        #expect(try member(["flag"], .bool) == .bool(true))
        #expect(try member(["inner", "when"], .date) == .date(Self.outer.inner.when))
        #expect(try member(["inner", "id"], .uuid) == .uuid(Self.outer.inner.id))
        #expect(try member(["inner", "blob"], .data) == .data(Data([0, 1, 2, 255])))
        #expect(try member(["inner", "ratio"], .float) == .double(Double(Float(0.1))))
        #expect(try member(["inner", "big"], .uint(bits: 64)) == .uint(.max))
        #expect(try member(["list"], .array(.int(bits: 64))) == .array([.int(3), .int(1), .int(2)]))
        #expect(try member(["inner", "set"], .set(.int(bits: 64))) == .array([.int(1), .int(2), .int(3)]))
    }

    @Test func nestedValuesKeepTheirOwnEncoding() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        #expect(try member(["inner"], .codable("Inner")) == .codable(try encoder.encode(Self.outer.inner)))
    }

    @Test func missingMembersAndNilValuesReadAsNil() throws {
        #expect(try member(["missing"], .string) == .null)
        #expect(try member(["nothing", "here"], .string) == .null)
        #expect(try member(["name", "deeper"], .string) == .null)
        #expect(try Value.member(at: ["name"], of: .null, as: .string) == .null)
    }

    @Test func damageIsATypeMismatch() throws {
        #expect(throws: QueryEvaluationError.self) { try member(["name"], .int(bits: 64)) }
        #expect(throws: QueryEvaluationError.self) { try Value.member(at: ["a"], of: .codable(Data("{\"a\": ".utf8)), as: .string) }
        #expect(throws: QueryEvaluationError.self) { try Value.member(at: ["a"], of: .string("x"), as: .string) }
    }

    @Test func thePathReaderSkipsWhatItPasses() throws {
        let text = Array(#"{"a": [1, {"b": "}"}, "x\"y"], "b" : {"c": null, "d": [true, false]}, "e": 1.5e3}"#.utf8)
        #expect(try JSONParser.value(at: ["b", "d"], in: text).map { "\($0)" } == "\(JSON.array([.bool(true), .bool(false)]))")
        let span = try #require(try JSONParser.span(of: ["b"], in: text))
        #expect(String(decoding: text[span], as: UTF8.self) == #"{"c": null, "d": [true, false]}"#)
        #expect(try JSONParser.value(at: ["b", "c"], in: text).map(\.isNull) == true)
        #expect(try JSONParser.value(at: ["z"], in: text) == nil)
        #expect(throws: JSONParser.Failure.self) { try JSONParser.value(at: ["e"], in: Array(#"{"a": [1,, 2], "e": 1}"#.utf8)) }
    }
}
