import SwiftData

/// A Codable struct stored as a composite attribute.
struct Address: Codable, Hashable {
    var street: String
    var city: String
    var zip: Int?
}

/// A Codable enum with associated values.
enum Payment: Codable, Hashable {
    case cash
    case card(last4: String, expires: Date)
    case transfer(iban: String)
}

/// A model with one property of every value type SwiftData's docs list.
@Model
final class EveryType {
    var bool: Bool
    var int: Int
    var int8: Int8
    var int16: Int16
    var int32: Int32
    var int64: Int64
    var uint: UInt
    var uint8: UInt8
    var uint16: UInt16
    var uint32: UInt32
    var uint64: UInt64
    var float: Float
    var double: Double
    var string: String
    var date: Date
    var data: Data
    var url: URL
    var uuid: UUID
    var decimal: Decimal
    var strings: [String]
    var scores: [String: Double]
    var tags: Set<String>
    var address: Address
    var addresses: [Address]
    var payment: Payment
    var optionalInt: Int?
    var optionalString: String?
    var optionalDate: Date?
    var optionalAddress: Address?
    var optionalPayment: Payment?
    var optionalStrings: [String]?

    init(seed: Int) {
        bool = seed % 2 == 0
        int = -seed
        int8 = Int8.min
        int16 = Int16.max
        int32 = Int32.min
        int64 = Int64.max
        uint = UInt(seed)
        uint8 = UInt8.max
        uint16 = UInt16.max
        uint32 = UInt32.max
        uint64 = UInt64.max
        float = 1.5
        double = Double(seed) / 3
        string = "value \(seed) ✓"
        date = Date(timeIntervalSince1970: TimeInterval(seed * 1000))
        data = Data([0, 1, 2, UInt8(seed % 256)])
        url = URL(string: "https://example.com/\(seed)?q=1")!
        uuid = UUID()
        decimal = Decimal(string: "12345.6789")!
        strings = ["a", "b", "\(seed)"]
        scores = ["x": 1.5, "y": -2]
        tags = ["red", "blue"]
        address = Address(street: "1 Main St", city: "Springfield", zip: 12345)
        addresses = [Address(street: "2 Side St", city: "Shelbyville", zip: nil)]
        payment = .card(last4: "4242", expires: Date(timeIntervalSince1970: 1_800_000_000))
    }
}
