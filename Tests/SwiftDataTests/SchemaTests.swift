import Foundation
import SwiftData
import Testing

/// Point 3: schema description and every value type the docs list.
@Suite struct SchemaTests {
    @Test func relatedModelTypesAreIncludedAutomatically() {
        let schema = Schema([AnimalCategory.self])
        #expect(Set(schema.entities.map(\.name)) == ["AnimalCategory", "Animal"])
        let trips = Schema(Trip.self)
        #expect(Set(trips.entities.map(\.name)) == ["Trip", "BucketListItem", "LivingAccommodation"])
    }

    @Test func entityDescribesAttributesAndRelationships() throws {
        let schema = Schema(Trip.self)
        let trip = try #require(schema.entitiesByName["Trip"])
        #expect(Schema.entityName(for: Trip.self) == "Trip")
        #expect(trip.attributesByName["name"]?.isUnique == true)
        #expect(trip.attributesByName["notes"]?.isOptional == true)
        #expect(trip.attributesByName["destination"]?.isOptional == false)
        let bucketList = try #require(trip.relationshipsByName["bucketList"])
        #expect(bucketList.deleteRule == .cascade)
        #expect(bucketList.destination == "BucketListItem")
        #expect(bucketList.isToOneRelationship == false)
        #expect(bucketList.inverseName == "trip")
        let living = try #require(trip.relationshipsByName["livingAccommodation"])
        #expect(living.isToOneRelationship)
        #expect(living.inverseName == "trip")
        #expect(trip.uniquenessConstraints == [["name"]])
    }

    @Test func attributeOptionsAreAccepted() throws {
        let schema = Schema(OptionsModel.self)
        let entity = try #require(schema.entity(for: OptionsModel.self))
        #expect(entity.attributesByName["blob"]?.options == [.externalStorage])
        #expect(entity.attributesByName["secret"]?.options == [.allowsCloudEncryption, .spotlight])
        #expect(entity.attributesByName["kept"]?.options == [.preserveValueOnDeletion])
        #expect(entity.attributesByName["scratch"]?.options == [.ephemeral])
        #expect(entity.attributesByName["renamed"]?.originalName == "oldName")
        #expect(entity.attributesByName["transformed"]?.options == [.transformable(by: "MyTransformer")])
    }

    @Test func versionsCompare() {
        #expect(Schema.Version(1, 2, 3) < Schema.Version(1, 10, 0))
        #expect(Schema.Version(2, 0, 0).description == "2.0.0")
        #expect(Schema(Trip.self, version: .init(3, 1, 0)).version == Schema.Version(3, 1, 0))
    }

    /// Through the store in memory, and through a document closed and reopened.
    @Test(arguments: [false, true])
    func everyValueTypeRoundTrips(throughDocument: Bool) throws {
        let folder = try TemporaryFolder("osd-values")
        defer { folder.remove() }
        let configuration = throughDocument
            ? ModelConfiguration(url: folder.file("values.store"))
            : ModelConfiguration(isStoredInMemoryOnly: true)
        var container: ModelContainer? = try ModelContainer(for: EveryType.self, configurations: configuration)
        let original = EveryType(seed: 7)
        original.optionalInt = 42
        original.optionalString = "maybe"
        original.optionalDate = Date(timeIntervalSince1970: 99)
        original.optionalAddress = Address(street: "3 Elm", city: "Ogdenville", zip: 1)
        original.optionalPayment = .transfer(iban: "DE00")
        original.optionalStrings = ["x"]
        do {
            let writer = ModelContext(container!)
            writer.insert(original)
            writer.insert(EveryType(seed: 8))
            try writer.save()
        }
        if throughDocument {
            // Closing the container releases the document; a new one reads it back.
            container = nil
            container = try ModelContainer(for: EveryType.self, configurations: configuration)
        }

        let reader = ModelContext(container!)
        let rows = try reader.fetch(FetchDescriptor<EveryType>(sortBy: [SortDescriptor(\.int, order: .reverse)]))
        try #require(rows.count == 2)
        let copy = rows[0]
        #expect(copy !== original)
        #expect(copy.bool == original.bool)
        #expect(copy.int == -7)
        #expect(copy.int8 == Int8.min)
        #expect(copy.int16 == Int16.max)
        #expect(copy.int32 == Int32.min)
        #expect(copy.int64 == Int64.max)
        #expect(copy.uint == 7)
        #expect(copy.uint8 == UInt8.max)
        #expect(copy.uint16 == UInt16.max)
        #expect(copy.uint32 == UInt32.max)
        #expect(copy.uint64 == UInt64.max)
        #expect(copy.float == 1.5)
        #expect(copy.double == original.double)
        #expect(copy.string == "value 7 ✓")
        #expect(copy.date == original.date)
        #expect(copy.data == original.data)
        #expect(copy.url == original.url)
        #expect(copy.uuid == original.uuid)
        #expect(copy.decimal == Decimal(string: "12345.6789")!)
        #expect(copy.strings == ["a", "b", "7"])
        #expect(copy.scores == ["x": 1.5, "y": -2])
        #expect(copy.tags == ["red", "blue"])
        #expect(copy.address == original.address)
        #expect(copy.addresses == original.addresses)
        #expect(copy.payment == original.payment)
        #expect(copy.optionalInt == 42)
        #expect(copy.optionalString == "maybe")
        #expect(copy.optionalDate == Date(timeIntervalSince1970: 99))
        #expect(copy.optionalAddress == original.optionalAddress)
        #expect(copy.optionalPayment == .transfer(iban: "DE00"))
        #expect(copy.optionalStrings == ["x"])

        let blank = rows[1]
        #expect(blank.optionalInt == nil)
        #expect(blank.optionalString == nil)
        #expect(blank.optionalDate == nil)
        #expect(blank.optionalAddress == nil)
        #expect(blank.optionalPayment == nil)
        #expect(blank.optionalStrings == nil)
    }

    @Test func codableEnumsFromTheDocsRoundTrip() throws {
        let container = try ModelContainer(for: Animal.self, Book.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        context.insert(Animal(name: "Cow", diet: .herbivorous))
        context.insert(Book(isbn: "1", title: "Swift", author: "A", pageCount: 10, genre: .technical(field: "compilers")))
        try context.save()
        let other = ModelContext(container)
        #expect(try other.fetch(FetchDescriptor<Animal>()).first?.diet == .herbivorous)
        #expect(try other.fetch(FetchDescriptor<Book>()).first?.genre == .technical(field: "compilers"))
    }
}

@Model
final class OptionsModel {
    @Attribute(.externalStorage) var blob: Data
    @Attribute(.allowsCloudEncryption, .spotlight) var secret: String
    @Attribute(.preserveValueOnDeletion) var kept: String
    @Attribute(.ephemeral) var scratch: Int
    @Attribute(originalName: "oldName") var renamed: String
    @Attribute(.transformable(by: "MyTransformer")) var transformed: String

    init() {
        blob = Data()
        secret = ""
        kept = ""
        scratch = 0
        renamed = ""
        transformed = ""
    }
}
