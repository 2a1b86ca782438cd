import SwiftData
import Testing

@Suite struct UniqueConstraintTests {
    private func makeContainer(_ types: any PersistentModel.Type...) throws -> ModelContainer {
        try ModelContainer(for: Schema(types), configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    }

    // MARK: @Attribute(.unique) upsert

    @Test func insertingExistingUniqueValueUpdatesTheStoredModel() throws {
        let container = try makeContainer(Trip.self)
        let context = ModelContext(container)
        let original = Trip(name: "Summer", destination: "Paris")
        original.price = 100
        context.insert(original)
        try context.save()
        let originalID = original.persistentModelID

        let replacement = Trip(name: "Summer", destination: "Lisbon")
        replacement.price = 250
        context.insert(replacement)
        try context.save()

        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 1)
        #expect(replacement.persistentModelID == originalID)
        let stored = try #require(try context.fetch(FetchDescriptor<Trip>()).first)
        #expect(stored.destination == "Lisbon")
        #expect(stored.price == 250)

        let other = ModelContext(container)
        let fresh = try other.fetch(FetchDescriptor<Trip>())
        #expect(fresh.count == 1)
        #expect(fresh.first?.destination == "Lisbon")
        #expect(fresh.first?.price == 250)
        #expect(fresh.first?.persistentModelID == originalID)
    }

    /// Unique keys match as Swift's `==` does, which is what `#Predicate { $0.name == x }`
    /// finds: canonically equivalent strings are one key, so the second upserts.
    @Test func canonicallyEquivalentNamesAreOneUniqueKey() throws {
        let container = try makeContainer(Trip.self)
        let context = ModelContext(container)
        let composed = Trip(name: "Caf\u{E9}", destination: "Paris")
        context.insert(composed)
        context.insert(Trip(name: "Cafe", destination: "Rome"))
        try context.save()
        let decomposed = Trip(name: "Cafe\u{301}", destination: "Lyon")
        context.insert(decomposed)
        try context.save()
        #expect(decomposed.persistentModelID == composed.persistentModelID)
        let reader = ModelContext(container)
        let stored = try reader.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.destination)]))
        #expect(stored.map(\.destination) == ["Lyon", "Rome"])
        let name = "Caf\u{E9}"
        #expect(try reader.fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == name })) == 1)
    }

    @Test func upsertFromAnotherContextUpdatesTheStoredRow() throws {
        let container = try makeContainer(AnimalCategory.self, Animal.self)
        let first = ModelContext(container)
        let category = AnimalCategory(name: "Mammal")
        first.insert(category)
        try first.save()

        let second = ModelContext(container)
        let duplicate = AnimalCategory(name: "Mammal")
        second.insert(duplicate)
        try second.save()

        #expect(duplicate.persistentModelID == category.persistentModelID)
        let third = ModelContext(container)
        #expect(try third.fetchCount(FetchDescriptor<AnimalCategory>()) == 1)
        #expect(try third.fetch(FetchDescriptor<AnimalCategory>()).map(\.name) == ["Mammal"])
    }

    @Test func twoInsertsWithSameKeyInOneSaveEndAsOneRow() throws {
        let container = try makeContainer(Trip.self)
        let context = ModelContext(container)
        let first = Trip(name: "Winter", destination: "Oslo")
        let second = Trip(name: "Winter", destination: "Helsinki")
        context.insert(first)
        context.insert(second)
        try context.save()

        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 1)
        let other = ModelContext(container)
        let stored = try other.fetch(FetchDescriptor<Trip>())
        #expect(stored.count == 1)
        #expect(stored.first?.name == "Winter")
        #expect(["Oslo", "Helsinki"].contains(stored.first?.destination ?? ""))
        #expect(first.persistentModelID == second.persistentModelID)
    }

    // MARK: #Unique compound constraints

    @Test func compoundConstraintAllowsSameTitleWithDifferentAuthor() throws {
        let container = try makeContainer(Book.self)
        let context = ModelContext(container)
        context.insert(Book(isbn: "111", title: "Collected Poems", author: "Plath", pageCount: 300))
        context.insert(Book(isbn: "222", title: "Collected Poems", author: "Frost", pageCount: 400))
        try context.save()

        let other = ModelContext(container)
        let books = try other.fetch(FetchDescriptor<Book>(sortBy: [SortDescriptor(\.isbn)]))
        #expect(books.map(\.author) == ["Plath", "Frost"])
    }

    @Test func compoundConstraintUpsertsOnSameTitleAndAuthor() throws {
        let container = try makeContainer(Book.self)
        let context = ModelContext(container)
        let first = Book(isbn: "111", title: "Dune", author: "Herbert", pageCount: 400)
        context.insert(first)
        try context.save()

        let again = Book(isbn: "999", title: "Dune", author: "Herbert", pageCount: 412)
        context.insert(again)
        try context.save()

        let other = ModelContext(container)
        let books = try other.fetch(FetchDescriptor<Book>())
        #expect(books.count == 1)
        #expect(books.first?.pageCount == 412)
        #expect(books.first?.isbn == "999")
        #expect(again.persistentModelID == first.persistentModelID)
    }

    @Test func compoundConstraintUpsertsOnSameIsbn() throws {
        let container = try makeContainer(Book.self)
        let context = ModelContext(container)
        context.insert(Book(isbn: "42", title: "Old Title", author: "Adams", pageCount: 100))
        try context.save()

        context.insert(Book(isbn: "42", title: "New Title", author: "Adams", pageCount: 120))
        try context.save()

        let other = ModelContext(container)
        let books = try other.fetch(FetchDescriptor<Book>())
        #expect(books.map(\.title) == ["New Title"])
        #expect(books.map(\.pageCount) == [120])
    }

    // MARK: Updates that clash

    @Test func updateToAnotherModelsUniqueValueThrows() throws {
        let container = try makeContainer(Trip.self)
        let context = ModelContext(container)
        let paris = Trip(name: "Paris", destination: "France")
        let rome = Trip(name: "Rome", destination: "Italy")
        context.insert(paris)
        context.insert(rome)
        try context.save()

        rome.name = "Paris"
        #expect(throws: SwiftDataError.uniqueConstraintViolation) {
            try context.save()
        }

        let other = ModelContext(container)
        let trips = try other.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.destination)]))
        #expect(trips.map(\.name) == ["Paris", "Rome"])
        #expect(trips.map(\.destination) == ["France", "Italy"])
    }

    @Test func updateToAnotherModelsCompoundKeyThrows() throws {
        let container = try makeContainer(Book.self)
        let context = ModelContext(container)
        let plath = Book(isbn: "1", title: "Ariel", author: "Plath", pageCount: 90)
        let frost = Book(isbn: "2", title: "Ariel", author: "Frost", pageCount: 80)
        context.insert(plath)
        context.insert(frost)
        try context.save()

        frost.author = "Plath"
        #expect(throws: SwiftDataError.uniqueConstraintViolation) {
            try context.save()
        }

        let other = ModelContext(container)
        let books = try other.fetch(FetchDescriptor<Book>(sortBy: [SortDescriptor(\.isbn)]))
        #expect(books.map(\.author) == ["Plath", "Frost"])
    }

    @Test func failedSaveWithClashAppliesNoneOfItsChanges() throws {
        let container = try makeContainer(Trip.self)
        let context = ModelContext(container)
        let paris = Trip(name: "Paris", destination: "France")
        let rome = Trip(name: "Rome", destination: "Italy")
        context.insert(paris)
        context.insert(rome)
        try context.save()

        // One save: an insert, a harmless update and a clashing update.
        context.insert(Trip(name: "Madrid", destination: "Spain"))
        paris.price = 500
        rome.name = "Paris"
        var caught: (any Error)?
        do {
            try context.save()
        } catch {
            caught = error
        }
        #expect(caught as? SwiftDataError == .uniqueConstraintViolation)

        let other = ModelContext(container)
        let trips = try other.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.destination)]))
        #expect(trips.map(\.name) == ["Paris", "Rome"])
        #expect(trips.map(\.price) == [0, 0])
    }

    @Test func clashBetweenTwoContextsThrowsOnUpdate() throws {
        let container = try makeContainer(AnimalCategory.self, Animal.self)
        let setup = ModelContext(container)
        setup.insert(AnimalCategory(name: "Bird"))
        setup.insert(AnimalCategory(name: "Fish"))
        try setup.save()

        let editor = ModelContext(container)
        let fish = try #require(try editor.fetch(FetchDescriptor<AnimalCategory>(predicate: #Predicate { $0.name == "Fish" })).first)
        fish.name = "Bird"
        #expect(throws: SwiftDataError.uniqueConstraintViolation) {
            try editor.save()
        }
        let reader = ModelContext(container)
        #expect(try reader.fetch(FetchDescriptor<AnimalCategory>(sortBy: [SortDescriptor(\.name)])).map(\.name) == ["Bird", "Fish"])
    }

    @Test func updateKeepingOwnUniqueValueSaves() throws {
        let container = try makeContainer(Trip.self)
        let context = ModelContext(container)
        let trip = Trip(name: "Cairo", destination: "Egypt")
        context.insert(trip)
        try context.save()

        trip.name = "Cairo"
        trip.destination = "Giza"
        try context.save()
        let other = ModelContext(container)
        #expect(try other.fetch(FetchDescriptor<Trip>()).map(\.destination) == ["Giza"])
    }

    // MARK: Optional unique attributes

    @Test func nilValuesInUniqueOptionalAttributeDoNotClash() throws {
        let container = try makeContainer(GDevice.self)
        let context = ModelContext(container)
        context.insert(GDevice(serial: nil, label: "A"))
        context.insert(GDevice(serial: nil, label: "B"))
        context.insert(GDevice(serial: "S-1", label: "C"))
        try context.save()
        context.insert(GDevice(serial: nil, label: "D"))
        try context.save()

        let other = ModelContext(container)
        let devices = try other.fetch(FetchDescriptor<GDevice>(sortBy: [SortDescriptor(\.label)]))
        #expect(devices.map(\.label) == ["A", "B", "C", "D"])
        #expect(try other.fetchCount(FetchDescriptor<GDevice>(predicate: #Predicate { $0.serial == nil })) == 3)
    }

    @Test func nonNilValuesInUniqueOptionalAttributeUpsert() throws {
        let container = try makeContainer(GDevice.self)
        let context = ModelContext(container)
        context.insert(GDevice(serial: "S-1", label: "old"))
        try context.save()
        context.insert(GDevice(serial: "S-1", label: "new"))
        try context.save()

        let other = ModelContext(container)
        #expect(try other.fetch(FetchDescriptor<GDevice>()).map(\.label) == ["new"])
    }

    // MARK: Scale

    @Test func oneHundredThousandUniqueModelsFetchByKey() throws {
        let container = try makeContainer(GKeyed.self)
        let context = ModelContext(container)
        let count = 100_000
        for key in 0..<count {
            context.insert(GKeyed(key: key, payload: "value \(key)"))
        }
        try context.save()

        let other = ModelContext(container)
        #expect(try other.fetchCount(FetchDescriptor<GKeyed>()) == count)
        for key in [0, 1, 4_242, 50_000, 99_999] {
            let matches = try other.fetch(FetchDescriptor<GKeyed>(predicate: #Predicate { $0.key == key }))
            #expect(matches.count == 1)
            #expect(matches.first?.payload == "value \(key)")
        }
        let missing = count
        #expect(try other.fetch(FetchDescriptor<GKeyed>(predicate: #Predicate { $0.key == missing })).isEmpty)

        // Re-inserting an existing key still upserts at this size.
        other.insert(GKeyed(key: 77_777, payload: "replaced"))
        try other.save()
        let third = ModelContext(container)
        #expect(try third.fetchCount(FetchDescriptor<GKeyed>()) == count)
        let target = 77_777
        let replaced = try third.fetch(FetchDescriptor<GKeyed>(predicate: #Predicate { $0.key == target }))
        #expect(replaced.map(\.payload) == ["replaced"])
    }
}
