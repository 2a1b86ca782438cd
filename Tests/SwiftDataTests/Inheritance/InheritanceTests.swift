import Foundation
import SwiftData
import Testing

/// Issue #12, point 7: `@Model` subclasses of `@Model` classes, as Apple's "Adopting
/// inheritance in SwiftData" uses them.
@Suite struct InheritanceTests {
    private static let types: [any PersistentModel.Type] = [
        Journey.self, BusinessJourney.self, PersonalJourney.self, ConferenceJourney.self,
    ]

    private func container(at url: URL? = nil) throws -> ModelContainer {
        let configuration = url.map { ModelConfiguration(url: $0) } ?? ModelConfiguration(isStoredInMemoryOnly: true)
        return try ModelContainer(for: Schema(Self.types), configurations: configuration)
    }

    private func day(_ n: Int) -> Date { Date(timeIntervalSince1970: Double(n) * 86_400) }

    /// One journey of each class, saved.
    private func fill(_ context: ModelContext) throws {
        context.insert(Journey(name: "Weekend", destination: "Oslo", startDate: day(1)))
        let kickoff = BusinessJourney(name: "Kickoff", destination: "Bergen", startDate: day(2), expenseCode: "K-1")
        kickoff.perDiemRate = 80
        context.insert(kickoff)
        context.insert(PersonalJourney(name: "Reunion", destination: "Rome", startDate: day(3), reason: .reunion))
        context.insert(ConferenceJourney(name: "WWDC", destination: "Cupertino", startDate: day(4), conference: "WWDC"))
        try context.save()
    }

    @Test func aSubclassModelHoldsItsOwnAndItsInheritedProperties() {
        let trip = BusinessJourney(name: "Kickoff", destination: "Oslo", startDate: .distantPast, expenseCode: "X1")
        #expect(trip.name == "Kickoff" && trip.destination == "Oslo" && trip.expenseCode == "X1")
        trip.perDiemRate = 80
        trip.destination = "Bergen"
        #expect(trip.perDiemRate == 80 && trip.destination == "Bergen")
        let conference = ConferenceJourney(name: "WWDC", destination: "Cupertino", startDate: .distantPast, conference: "WWDC")
        #expect(conference.name == "WWDC" && conference.expenseCode == "CONF" && conference.conference == "WWDC")
        let asBase: Journey = conference
        asBase.name = "WWDC 26"
        #expect(conference.name == "WWDC 26")
        #expect(BusinessJourney.schemaMetadata.map(\.name) == ["name", "destination", "startDate", "stopovers", "expenseCode", "perDiemRate", "meals"])
    }

    @Test func aFetchOfTheBaseClassReturnsEverySubclass() throws {
        let context = ModelContext(try container())
        try fill(context)
        let other = ModelContext(context.container)
        let all = try other.fetch(FetchDescriptor<Journey>(sortBy: [SortDescriptor(\.startDate)]))
        #expect(all.map(\.name) == ["Weekend", "Kickoff", "Reunion", "WWDC"])
        #expect(type(of: all[0]) == Journey.self)
        let kickoff = try #require(all[1] as? BusinessJourney)
        #expect(kickoff.expenseCode == "K-1" && kickoff.perDiemRate == 80)
        #expect((all[2] as? PersonalJourney)?.reason == .reunion)
        #expect((all[3] as? ConferenceJourney)?.conference == "WWDC")
        #expect(try other.fetchCount(FetchDescriptor<Journey>()) == 4)
    }

    @Test func aFetchOfASubclassReturnsItAndItsSubclasses() throws {
        let context = ModelContext(try container())
        try fill(context)
        let business = try context.fetch(FetchDescriptor<BusinessJourney>(sortBy: [SortDescriptor(\.name)]))
        #expect(business.map(\.name) == ["Kickoff", "WWDC"])
        #expect(try context.fetchCount(FetchDescriptor<BusinessJourney>()) == 2)
        #expect(try context.fetch(FetchDescriptor<PersonalJourney>()).map(\.name) == ["Reunion"])
        #expect(try context.fetch(FetchDescriptor<ConferenceJourney>()).map(\.name) == ["WWDC"])

        // Predicates and sorts on inherited and own properties, through the subclass.
        let coded = try context.fetch(FetchDescriptor<BusinessJourney>(
            predicate: #Predicate { $0.destination != "Oslo" && $0.expenseCode == "CONF" }))
        #expect(coded.map(\.name) == ["WWDC"])
        let start = day(2)
        let late = try context.fetch(FetchDescriptor<BusinessJourney>(
            predicate: #Predicate { $0.startDate >= start }, sortBy: [SortDescriptor(\.startDate, order: .reverse)]))
        #expect(late.map(\.name) == ["WWDC", "Kickoff"])
    }

    @Test func typeTestsInPredicates() throws {
        let context = ModelContext(try container())
        try fill(context)
        let business = try context.fetch(FetchDescriptor<Journey>(
            predicate: #Predicate { $0 is BusinessJourney }, sortBy: [SortDescriptor(\.startDate)]))
        #expect(business.map(\.name) == ["Kickoff", "WWDC"])
        let personalOrOslo = try context.fetch(FetchDescriptor<Journey>(
            predicate: #Predicate { $0 is PersonalJourney || $0.destination == "Oslo" }, sortBy: [SortDescriptor(\.name)]))
        #expect(personalOrOslo.map(\.name) == ["Reunion", "Weekend"])
        let notBusiness = try context.fetchCount(FetchDescriptor<Journey>(predicate: #Predicate { !($0 is BusinessJourney) }))
        #expect(notBusiness == 2)
        let explained = try context.explain(FetchDescriptor<Journey>(predicate: #Predicate { $0 is ConferenceJourney }))
        #expect(explained.filtering == .native, "a type test runs natively")
        #expect(explained.resultCount == 1)
    }

    @Test func unsavedModelsTakePartInFetchesByClass() throws {
        let context = ModelContext(try container())
        try fill(context)
        context.insert(BusinessJourney(name: "Audit", destination: "Paris", startDate: day(9), expenseCode: "A"))
        #expect(try context.fetch(FetchDescriptor<BusinessJourney>(sortBy: [SortDescriptor(\.name)])).map(\.name) == ["Audit", "Kickoff", "WWDC"])
        #expect(try context.fetchCount(FetchDescriptor<Journey>()) == 5)
        #expect(try context.fetchCount(FetchDescriptor<PersonalJourney>()) == 1)
    }

    @Test func relationshipsToTheBaseAcceptSubclassesAndDeleteRulesApply() throws {
        let context = ModelContext(try container())
        let conference = ConferenceJourney(name: "WWDC", destination: "Cupertino", startDate: day(4), conference: "WWDC")
        context.insert(conference)
        let stop = Stopover(place: "San Francisco")
        let dinner = Meal(cost: 42)
        stop.journey = conference
        dinner.journey = conference
        context.insert(stop)
        context.insert(dinner)
        try context.save()
        #expect(conference.stopovers.map(\.place) == ["San Francisco"])
        #expect(conference.meals.map(\.cost) == [42])

        let other = ModelContext(context.container)
        let stored = try #require(try other.fetch(FetchDescriptor<Stopover>()).first)
        let journey = try #require(stored.journey as? ConferenceJourney)
        #expect(journey.meals.map(\.cost) == [42])

        other.delete(journey)
        try other.save()
        #expect(try other.fetchCount(FetchDescriptor<Stopover>()) == 0, "the base class's cascade applies")
        #expect(try other.fetchCount(FetchDescriptor<Meal>()) == 0, "the subclass's cascade applies")
        #expect(try other.fetchCount(FetchDescriptor<Journey>()) == 0)
    }

    @Test func deleteHonoursIncludeSubclasses() throws {
        let context = ModelContext(try container())
        try fill(context)
        try context.delete(model: BusinessJourney.self, includeSubclasses: false)
        try context.save()
        #expect(try context.fetch(FetchDescriptor<Journey>(sortBy: [SortDescriptor(\.name)])).map(\.name) == ["Reunion", "WWDC", "Weekend"])
        try context.delete(model: Journey.self, where: #Predicate { $0.destination != "Oslo" })
        try context.save()
        #expect(try context.fetch(FetchDescriptor<Journey>()).map(\.name) == ["Weekend"])
    }

    @Test func aUniqueConstraintSpansTheHierarchy() throws {
        let context = ModelContext(try container())
        try fill(context)
        // Same class, same unique name: an upsert of the stored model.
        context.insert(BusinessJourney(name: "Kickoff", destination: "Stavanger", startDate: day(2), expenseCode: "K-2"))
        try context.save()
        let kickoff = try #require(try context.fetch(FetchDescriptor<BusinessJourney>(predicate: #Predicate { $0.name == "Kickoff" })).first)
        #expect(kickoff.destination == "Stavanger" && kickoff.expenseCode == "K-2")
        #expect(try context.fetchCount(FetchDescriptor<Journey>()) == 4)
    }

    @Test func theSchemaDescribesTheHierarchy() throws {
        let schema = Schema(Self.types)
        let base = try #require(schema.entity(for: Journey.self))
        let business = try #require(schema.entity(for: BusinessJourney.self))
        let conference = try #require(schema.entity(for: ConferenceJourney.self))
        #expect(base.superentity == nil)
        #expect(Set(base.subentities.map(\.name)) == ["BusinessJourney", "PersonalJourney"])
        #expect(business.superentityName == "Journey" && business.superentity === base)
        #expect(business.subentities.map(\.name) == ["ConferenceJourney"])
        #expect(conference.superentity === business)
        #expect(Set(business.attributesByName.keys) == ["name", "destination", "startDate", "expenseCode", "perDiemRate"])
        #expect(Set(business.relationshipsByName.keys) == ["stopovers", "meals"])
        #expect(Set(base.attributesByName.keys) == ["name", "destination", "startDate"])
        // A subclass alone brings its superclasses into the schema.
        #expect(Schema([ConferenceJourney.self]).entity(for: Journey.self) != nil)
    }

    @Test func aDocumentKeepsTheHierarchy() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = folder.file("journeys.store")
        do {
            let context = ModelContext(try container(at: url))
            try fill(context)
        }
        let context = ModelContext(try container(at: url))
        let all = try context.fetch(FetchDescriptor<Journey>(sortBy: [SortDescriptor(\.startDate)]))
        #expect(all.map { String(describing: type(of: $0)) } == ["Journey", "BusinessJourney", "PersonalJourney", "ConferenceJourney"])
        #expect(try context.fetch(FetchDescriptor<PersonalJourney>()).first?.reason == .reunion)
    }

    @Test func aCastInAPredicateIsEvaluatedOnModels() throws {
        let context = ModelContext(try container())
        try fill(context)
        let descriptor = FetchDescriptor<Journey>(predicate: #Predicate { ($0 as? BusinessJourney)?.expenseCode == "K-1" })
        #expect(try context.fetch(descriptor).map(\.name) == ["Kickoff"])
        if case .fallback = try context.explain(descriptor).filtering {} else {
            Issue.record("a cast is evaluated on models")
        }
    }

    @Test func aDocumentOfTheBaseClassGainsSubclasses() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = folder.file("journeys.store")
        do {
            // Written before the app declared subclasses.
            let context = ModelContext(try ModelContainer(for: Journey.self, configurations: ModelConfiguration(url: url)))
            context.insert(Journey(name: "Weekend", destination: "Oslo", startDate: day(1)))
            try context.save()
        }
        let context = ModelContext(try container(at: url))
        context.insert(BusinessJourney(name: "Kickoff", destination: "Bergen", startDate: day(2), expenseCode: "K-1"))
        try context.save()
        let all = try context.fetch(FetchDescriptor<Journey>(sortBy: [SortDescriptor(\.startDate)]))
        #expect(all.map { String(describing: type(of: $0)) } == ["Journey", "BusinessJourney"])
        #expect(try context.fetchCount(FetchDescriptor<BusinessJourney>()) == 1)
    }

    @Test func aRelationshipToASubclassSavesWithBothEnds() throws {
        let context = ModelContext(try container())
        let conference = ConferenceJourney(name: "WWDC", destination: "Cupertino", startDate: day(4), conference: "WWDC")
        let dinner = Meal(cost: 42)
        context.insert(conference)
        context.insert(dinner)
        dinner.journey = conference
        try context.save()
        let other = ModelContext(context.container)
        let meal = try #require(try other.fetch(FetchDescriptor<Meal>()).first)
        #expect(meal.journey?.name == "WWDC")
        #expect(meal.journey is ConferenceJourney)
    }

    @Test func onePredicateShapeServesEachClassApart() throws {
        let context = ModelContext(try container())
        try fill(context)
        #expect(try context.fetchCount(FetchDescriptor<Journey>(predicate: #Predicate { _ in true })) == 4)
        #expect(try context.fetch(FetchDescriptor<BusinessJourney>(predicate: #Predicate { _ in true })).count == 2)
        #expect(try context.fetch(FetchDescriptor<PersonalJourney>(predicate: #Predicate { _ in true })).count == 1)
        #expect(try context.fetchCount(FetchDescriptor<Journey>(predicate: #Predicate { _ in true })) == 4)
    }

    @Test func aKeyHeldByAnotherClassIsAViolation() throws {
        let context = ModelContext(try container())
        try fill(context)
        context.insert(PersonalJourney(name: "Kickoff", destination: "Rome", startDate: day(5), reason: .family))
        #expect(throws: SwiftDataError.self) { try context.save() }
    }

    @Test func aModelMovesToAContainerWithoutTheHierarchy() throws {
        let trip = Journey(name: "Weekend", destination: "Oslo", startDate: day(1))
        let first = ModelContext(try container())
        first.insert(trip)
        first.delete(trip)
        let plain = ModelContext(try ModelContainer(for: Journey.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true)))
        plain.insert(trip)
        try plain.save()
        let check = ModelContext(plain.container)
        #expect(try check.fetch(FetchDescriptor<Journey>()).map(\.destination) == ["Oslo"])
    }

    @Test func siblingsCannotShareAPropertyName() {
        #expect(throws: SwiftDataError.self) {
            _ = try ModelContainer(for: Figure.self, Circle.self, Square.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        }
    }

    @Test func aSubclassesRelationshipCountRulesApply() throws {
        let context = ModelContext(try ModelContainer(
            for: Vehicle.self, Truck.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true)))
        context.insert(Vehicle(plate: "V-1"))
        try context.save()
        let truck = Truck(plate: "T-1")
        context.insert(truck)
        #expect(throws: SwiftDataError.self, "a truck needs an axle") { try context.save() }
        truck.axles = [Axle(load: 8)]
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Vehicle>()) == 2)
    }

    @Test func anInheritedRelationshipInfersItsInverseBeforeInsert() throws {
        let context = ModelContext(try ModelContainer(
            for: Vehicle.self, Truck.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true)))
        let depot = Depot(city: "Oslo")
        context.insert(depot)
        try context.save()
        let truck = Truck(plate: "T-1")
        truck.axles = [Axle(load: 8)]
        truck.depot = depot
        #expect(depot.vehicles.map(\.plate) == ["T-1"], "the inverse, inferred from Vehicle, links the new truck")
        try context.save()
        let check = ModelContext(context.container)
        #expect(try check.fetch(FetchDescriptor<Depot>()).first?.vehicles.map(\.plate) == ["T-1"])
    }

    @Test func undoRestoresInheritedProperties() throws {
        let context = ModelContext(try container())
        context.undoManager = UndoManager()
        let trip = BusinessJourney(name: "Kickoff", destination: "Bergen", startDate: day(2), expenseCode: "K-1")
        context.insert(trip)
        try context.save()
        trip.destination = "Tromsø"
        trip.expenseCode = "K-9"
        context.undoManager?.undo()
        #expect(trip.destination == "Bergen" && trip.expenseCode == "K-1")
    }
}
