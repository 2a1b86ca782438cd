import Foundation
import SwiftData
import Testing

/// Issue #14, point 4: undo and redo of a context's changes, grouped per
/// `processPendingChanges()` or `save()`.
@Suite struct ModelContextUndoTests {
    private func context() throws -> ModelContext {
        let container = try ModelContainer(for: Flight.self, Leg.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        context.undoManager = UndoManager()
        return context
    }

    private func flights(_ context: ModelContext) throws -> [String] {
        try context.fetch(FetchDescriptor<Flight>(sortBy: [SortDescriptor(\.airlineBookingRef)])).map(\.airlineBookingRef)
    }

    @Test func attributeChangesUndoAndRedoPerGroup() throws {
        let context = try context()
        let flight = Flight(airlineBookingRef: "A1", destination: "Oslo", flightTime: 90)
        context.insert(flight)
        try context.save()

        flight.flightTime = 100
        flight.destination = "Bergen"
        context.processPendingChanges()
        flight.flightTime = 110
        context.processPendingChanges()

        let undo = try #require(context.undoManager)
        undo.undo()
        #expect(flight.flightTime == 100)
        #expect(flight.destination == "Bergen")
        undo.undo()
        #expect(flight.flightTime == 90)
        #expect(flight.destination == "Oslo")
        #expect(context.hasChanges, "the undone values are changes to save")
        undo.redo()
        #expect(flight.flightTime == 100 && flight.destination == "Bergen")

        // Saved, the undone state is what the store holds.
        undo.undo()
        try context.save()
        let other = ModelContext(context.container)
        let stored = try #require(try other.fetch(FetchDescriptor<Flight>()).first)
        #expect(stored.flightTime == 90 && stored.destination == "Oslo")
    }

    @Test func anInsertUndoesToNothingAndRedoesBack() throws {
        let context = try context()
        let flight = Flight(airlineBookingRef: "A1", destination: "Oslo", flightTime: 90)
        context.insert(flight)
        context.processPendingChanges()
        context.undoManager?.undo()
        #expect(!context.hasChanges)
        try context.save()
        #expect(try flights(context).isEmpty)

        context.undoManager?.redo()
        try context.save()
        #expect(try flights(context) == ["A1"])

        // Undone after its save: a delete the next save writes.
        context.undoManager?.undo()
        try context.save()
        #expect(try flights(context).isEmpty)
    }

    @Test func aSavedCascadeDeleteComesBackWithItsChildren() throws {
        let context = try context()
        let flight = Flight(airlineBookingRef: "A1", destination: "Oslo", flightTime: 90)
        let legs = [Leg(code: "OSL-BGO"), Leg(code: "BGO-SVG")]
        context.insert(flight)
        flight.legs = legs
        try context.save()
        let oldID = flight.persistentModelID

        context.delete(flight)
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Leg>()) == 0, "the legs went with the flight")

        context.undoManager?.undo()
        try context.save()
        #expect(try flights(context) == ["A1"])
        #expect(flight.persistentModelID != oldID, "a saved model comes back as a new one")
        let storedLegs = try context.fetch(FetchDescriptor<Leg>(sortBy: [SortDescriptor(\.code)]))
        #expect(storedLegs.map(\.code) == ["BGO-SVG", "OSL-BGO"])
        #expect(storedLegs.allSatisfy { $0.flight === flight })
        #expect(Set(flight.legs.map(\.code)) == ["OSL-BGO", "BGO-SVG"])

        // And the delete redoes.
        context.undoManager?.redo()
        try context.save()
        #expect(try flights(context).isEmpty)
        #expect(try context.fetchCount(FetchDescriptor<Leg>()) == 0)
    }

    @Test func aPendingDeleteUndoes() throws {
        let context = try context()
        let flight = Flight(airlineBookingRef: "A1", destination: "Oslo", flightTime: 90)
        context.insert(flight)
        try context.save()
        context.delete(flight)
        context.processPendingChanges()
        #expect(flight.isDeleted)
        context.undoManager?.undo()
        #expect(!flight.isDeleted)
        #expect(!context.hasChanges)
    }

    @Test func relationshipChangesRestoreBothSides() throws {
        let context = try context()
        let first = Flight(airlineBookingRef: "A1", destination: "Oslo", flightTime: 90)
        let second = Flight(airlineBookingRef: "A2", destination: "Rome", flightTime: 150)
        let leg = Leg(code: "OSL-BGO")
        [first, second].forEach(context.insert)
        context.insert(leg)
        leg.flight = first
        try context.save()

        leg.flight = second
        context.processPendingChanges()
        #expect(first.legs.isEmpty && second.legs.map(\.code) == ["OSL-BGO"])
        context.undoManager?.undo()
        #expect(leg.flight === first)
        #expect(first.legs.map(\.code) == ["OSL-BGO"])
        #expect(second.legs.isEmpty)
        try context.save()
        let other = ModelContext(context.container)
        let stored = try #require(try other.fetch(FetchDescriptor<Leg>()).first)
        #expect(stored.flight?.airlineBookingRef == "A1")
    }

    @Test func rollbackEmptiesTheStackAndUndoCanBeTurnedOff() throws {
        let context = try context()
        let flight = Flight(airlineBookingRef: "A1", destination: "Oslo", flightTime: 90)
        context.insert(flight)
        try context.save()
        flight.flightTime = 1
        #expect(context.undoManager?.canUndo == true)
        context.rollback()
        #expect(context.undoManager?.canUndo == false)
        #expect(flight.flightTime == 90)

        context.isUndoEnabled = false
        #expect(context.undoManager == nil)
        flight.flightTime = 2
        context.isUndoEnabled = true
        #expect(context.undoManager?.canUndo == false, "changes made without a manager are not recorded")
    }

    @Test func aDocumentUndoes() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let document = try ModelDocument(for: Flight.self, Leg.self, contentsOf: folder.file("trips.osd"))
        let context = document.mainContext
        #expect(context.undoManager != nil)
        let flight = Flight(airlineBookingRef: "A1", destination: "Oslo", flightTime: 90)
        context.insert(flight)
        context.processPendingChanges()
        flight.flightTime = 45
        context.undoManager?.undo()
        #expect(flight.flightTime == 90)
        try document.save()
        #expect(try flights(context) == ["A1"])
    }

    /// A saved flight with saved legs of `legs` codes, in a new context whose undo
    /// stack starts empty.
    private func savedFlight(legs codes: [String] = []) throws -> (ModelContext, Flight, UndoManager) {
        let context = try context()
        let flight = Flight(airlineBookingRef: "A1", destination: "Oslo", flightTime: 90)
        context.insert(flight)
        flight.legs = codes.map { Leg(code: $0) }
        try context.save()
        let undo = try #require(context.undoManager)
        undo.removeAllActions()
        return (context, flight, undo)
    }

    @Test func anUndoneDeleteRedoesAndAnUnchangedWriteRecordsNothing() throws {
        let (context, flight, undo) = try savedFlight()

        flight.flightTime = 90
        #expect(!undo.canUndo, "writing the value it has is no change")

        context.delete(flight)
        context.processPendingChanges()
        undo.undo()
        #expect(!flight.isDeleted)
        #expect(undo.canRedo)
        undo.redo()
        #expect(flight.isDeleted)
        undo.undo()
        #expect(!flight.isDeleted)
    }

    @Test func undoEndsAGroupTheAppBegan() throws {
        let (context, flight, undo) = try savedFlight()
        undo.beginUndoGrouping()
        flight.flightTime = 10
        undo.setActionName("Shorten")
        flight.destination = "Bergen"
        #expect(context.hasChanges)
        #expect(undo.canUndo)
        #expect(undo.undoActionName == "Shorten")
        undo.undo()
        #expect(flight.flightTime == 90 && flight.destination == "Oslo")
        #expect(undo.redoActionName == "Shorten")
    }

    @Test func aToOneStealUndoesOnEverySide() throws {
        let context = try context()
        let first = Flight(airlineBookingRef: "A1", destination: "Oslo", flightTime: 90)
        let second = Flight(airlineBookingRef: "A2", destination: "Rome", flightTime: 150)
        let one = Leg(code: "ONE"), two = Leg(code: "TWO")
        [first, second].forEach(context.insert)
        [one, two].forEach(context.insert)
        one.flight = first
        two.flight = second
        try context.save()

        // `two` moves to the first flight, then the first flight's legs are replaced.
        two.flight = first
        first.legs = [two]
        context.processPendingChanges()
        #expect(one.flight == nil && second.legs.isEmpty)
        context.undoManager?.undo()
        #expect(one.flight === first && two.flight === second)
        #expect(first.legs.map(\.code) == ["ONE"])
        #expect(second.legs.map(\.code) == ["TWO"])
    }

    @Test func aSaveAfterAnUndoneInsertKeepsTheRedo() throws {
        let context = try context()
        let flight = Flight(airlineBookingRef: "A1", destination: "Oslo", flightTime: 90)
        flight.legs = [Leg(code: "OSL-BGO"), Leg(code: "BGO-SVG")]
        context.insert(flight)
        try context.save()

        let undo = try #require(context.undoManager)
        undo.undo()
        #expect(flight.isDeleted)
        try context.save()
        #expect(try flights(context).isEmpty)
        #expect(try context.fetchCount(FetchDescriptor<Leg>()) == 0)
        #expect(undo.canRedo, "the save wrote the undo; it registered nothing of its own")
        #expect(!undo.canUndo)

        undo.redo()
        try context.save()
        #expect(try flights(context) == ["A1"])
        let legs = try context.fetch(FetchDescriptor<Leg>(sortBy: [SortDescriptor(\.code)]))
        #expect(legs.map(\.code) == ["BGO-SVG", "OSL-BGO"])
        #expect(legs.allSatisfy { $0.flight === flight })
    }

    @Test func deleteRulesRunWithTheEventOfTheDelete() throws {
        let (context, flight, undo) = try savedFlight(legs: ["OSL-BGO", "BGO-SVG", "LOOSE"])
        let legs = flight.legs

        context.delete(flight)
        context.processPendingChanges()
        #expect(legs.count == 3 && legs.allSatisfy { $0.isDeleted }, "the cascade ran at the end of the event")
        try context.save()
        #expect(!undo.canRedo)

        // One undo brings back the flight and what its deletion cascaded to.
        undo.undo()
        try context.save()
        #expect(try flights(context) == ["A1"])
        let stored = try context.fetch(FetchDescriptor<Leg>(sortBy: [SortDescriptor(\.code)]))
        #expect(stored.map(\.code) == ["BGO-SVG", "LOOSE", "OSL-BGO"])
        #expect(stored.allSatisfy { $0.flight === flight })
        #expect(Set(flight.legs.map(\.code)) == ["OSL-BGO", "BGO-SVG", "LOOSE"])
    }

    @Test func aNullifiedInverseUndoesInTheDeletesGroup() throws {
        let (context, flight, undo) = try savedFlight(legs: ["OSL-BGO"])
        let leg = try #require(flight.legs.first)

        context.delete(leg)
        context.processPendingChanges()
        #expect(flight.legs.isEmpty, "the nullify rule ran at the end of the event")
        try context.save()
        undo.undo()
        #expect(flight.legs.map(\.code) == ["OSL-BGO"])
        try context.save()
        let other = ModelContext(context.container)
        let stored = try #require(try other.fetch(FetchDescriptor<Leg>()).first)
        #expect(stored.flight?.airlineBookingRef == "A1")
    }

    @Test func undoingAnUpsertRestoresTheRowItTookOver() throws {
        let (context, flight, undo) = try savedFlight(legs: ["OSL-BGO"])
        let leg = try #require(flight.legs.first)

        // A new leg with the same unique code takes over the saved one's row.
        let replacement = Leg(code: "OSL-BGO")
        context.insert(replacement)
        try context.save()
        #expect(replacement.persistentModelID == leg.persistentModelID)
        #expect(replacement.flight === flight, "the upsert kept the relationship the new leg left empty")

        undo.undo()
        #expect(!replacement.isDeleted, "the row it took over stays")
        try context.save()
        let other = ModelContext(context.container)
        let stored = try other.fetch(FetchDescriptor<Leg>())
        #expect(stored.map(\.code) == ["OSL-BGO"])
        #expect(stored.first?.flight?.airlineBookingRef == "A1")
    }

    @Test func undoingAnUpsertThatChangedValuesRestoresThem() throws {
        let context = try context()
        let undo = try #require(context.undoManager)
        let first = Flight(airlineBookingRef: "A1", destination: "Oslo", flightTime: 90)
        let second = Flight(airlineBookingRef: "A2", destination: "Rome", flightTime: 150)
        let leg = Leg(code: "X")
        [first, second].forEach(context.insert)
        context.insert(leg)
        leg.flight = first
        try context.save()
        undo.removeAllActions()

        let replacement = Leg(code: "X")
        replacement.flight = second
        context.insert(replacement)
        try context.save()
        #expect(replacement.flight === second)

        undo.undo()
        #expect(replacement.flight === first)
        #expect(first.legs.map(\.code) == ["X"] && second.legs.isEmpty)
        try context.save()
        let reader = ModelContext(context.container)
        #expect(try reader.fetch(FetchDescriptor<Leg>()).first?.flight?.airlineBookingRef == "A1")

        undo.redo()
        #expect(replacement.flight === second)
        try context.save()
        let later = ModelContext(context.container)
        #expect(try later.fetch(FetchDescriptor<Leg>()).first?.flight?.airlineBookingRef == "A2")
    }

    @Test func referencesWithoutAnInverseFollowAReinsertedModel() throws {
        let container = try ModelContainer(
            for: Sight.self, MapPin.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let setup = ModelContext(container)
        let tower = Sight(name: "Tower")
        let pin = MapPin(label: "meet here")
        let tour = MapPin(label: "tour")
        setup.insert(pin)
        setup.insert(tour)
        pin.target = tower
        tour.stops = [tower, Sight(name: "Bridge")]
        try setup.save()

        // A context that never loads the pins deletes the tower, and undoes that
        // after the save.
        let context = ModelContext(container)
        context.undoManager = UndoManager()
        let landmark = try #require(try context.fetch(FetchDescriptor<Sight>(predicate: #Predicate { $0.name == "Tower" })).first)
        context.delete(landmark)
        try context.save()
        let between = ModelContext(container)
        #expect(try between.fetch(FetchDescriptor<MapPin>(predicate: #Predicate { $0.label == "meet here" })).first?.target == nil)
        context.undoManager?.undo()
        try context.save()

        let check = ModelContext(container)
        let pins = try check.fetch(FetchDescriptor<MapPin>(sortBy: [SortDescriptor(\.label)]))
        #expect(pins.map(\.label) == ["meet here", "tour"])
        #expect(pins[0].target?.name == "Tower")
        #expect(Set(pins[1].stops.map(\.name)) == ["Tower", "Bridge"])
        #expect(pins[0].target?.persistentModelID == landmark.persistentModelID)
    }

    @Test func undoneRelationshipChangesNotifyObservers() throws {
        let (context, flight, undo) = try savedFlight()
        let leg = Leg(code: "OSL-BGO")
        context.insert(leg)
        try context.save()
        undo.removeAllActions()

        leg.flight = flight
        context.processPendingChanges()
        let legSide = Observed(), flightSide = Observed()
        withObservationTracking { _ = leg.flight } onChange: { legSide.fire() }
        withObservationTracking { _ = flight.legs } onChange: { flightSide.fire() }
        undo.undo()
        #expect(leg.flight == nil && flight.legs.isEmpty)
        #expect(legSide.fired && flightSide.fired)
    }

    @Test func undoingAReplaceRestoresTheDeletedModelWhole() throws {
        let (context, flight, undo) = try savedFlight(legs: ["OSL-BGO"])
        let leg = try #require(flight.legs.first)

        // One event: the flight is replaced by another.
        context.delete(flight)
        context.insert(Flight(airlineBookingRef: "B2", destination: "Rome", flightTime: 150))
        undo.undo()
        #expect(!flight.isDeleted && !leg.isDeleted)
        #expect(leg.flight === flight && flight.legs.map(\.code) == ["OSL-BGO"])
        try context.save()
        #expect(try flights(context) == ["A1"])
        #expect(try context.fetchCount(FetchDescriptor<Leg>()) == 1)
    }

    @Test func insertingADeletedModelAgainUndoesItsDeleteRules() throws {
        let (context, flight, _) = try savedFlight(legs: ["OSL-BGO", "BGO-SVG"])
        let legs = flight.legs
        context.delete(flight)
        context.processPendingChanges()
        #expect(legs.allSatisfy { $0.isDeleted })

        context.insert(flight)
        #expect(legs.allSatisfy { !$0.isDeleted && $0.flight === flight })
        #expect(Set(flight.legs.map(\.code)) == ["OSL-BGO", "BGO-SVG"])
        try context.save()
        let other = ModelContext(context.container)
        #expect(try other.fetch(FetchDescriptor<Flight>()).first?.legs.count == 2)
    }

    @Test func anUpsertsRowIsRestoredOnlyByTheUndoOfItsInsert() throws {
        let (context, _, undo) = try savedFlight(legs: ["X"])
        let replacement = Leg(code: "X")
        context.insert(replacement)
        try context.save()

        context.delete(replacement)
        context.processPendingChanges()
        undo.undo()
        #expect(!replacement.isDeleted)
        undo.redo()
        #expect(replacement.isDeleted, "the redo of a delete deletes")
    }

    @Test func aReinsertionKeepsAReferrersUnsavedChange() throws {
        let container = try ModelContainer(
            for: Sight.self, MapPin.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let tower = Sight(name: "Tower"), bridge = Sight(name: "Bridge")
        let pin = MapPin(label: "meet here")
        context.insert(pin)
        context.insert(bridge)
        pin.target = tower
        try context.save()

        context.delete(tower)
        try context.save()
        pin.target = bridge
        context.insert(tower)
        try context.save()
        let check = ModelContext(container)
        #expect(try check.fetch(FetchDescriptor<MapPin>()).first?.target?.name == "Bridge")
    }

    @Test func anObserversWriteDuringUndoKeepsBothSides() throws {
        let context = try context()
        let undo = try #require(context.undoManager)
        let first = Flight(airlineBookingRef: "A1", destination: "Oslo", flightTime: 90)
        let second = Flight(airlineBookingRef: "A2", destination: "Rome", flightTime: 150)
        let leg = Leg(code: "L1"), other = Leg(code: "L2")
        [first, second].forEach(context.insert)
        [leg, other].forEach(context.insert)
        try context.save()
        undo.removeAllActions()

        leg.flight = first
        context.processPendingChanges()
        let write = Unchecked { other.flight = second }
        withObservationTracking { _ = leg.flight } onChange: { write.value() }
        undo.undo()
        #expect(leg.flight == nil && first.legs.isEmpty)
        #expect(other.flight === second && second.legs.map(\.code) == ["L2"])
    }

    @Test func denyGuardsWhatADeletedNewModelCascadesTo() throws {
        let container = try ModelContainer(
            for: Holding.self, GDepartment.self, GEmployee.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let department = GDepartment(name: "R&D")
        context.insert(department)
        department.employees = [GEmployee(name: "Ada")]
        try context.save()

        let holding = Holding(name: "Group")
        context.insert(holding)
        holding.departments = [department]
        context.delete(holding)
        #expect(throws: SwiftDataError.self) { try context.save() }
        context.rollback()
        #expect(try context.fetchCount(FetchDescriptor<GDepartment>()) == 1)
    }
}

/// A value an observation callback may use on the thread that runs it.
private final class Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// Counts an observation's change callback.
final class Observed: @unchecked Sendable {
    private(set) var fired = false
    func fire() { fired = true }
}

@Model final class Sight {
    var name: String
    init(name: String) { self.name = name }
}

/// Refers to landmarks without inverses.
@Model final class MapPin {
    var label: String
    var target: Sight?
    var stops: [Sight] = []
    init(label: String) { self.label = label }
}

/// Cascades to departments, which `deny` their deletion while they have employees.
@Model final class Holding {
    var name: String
    @Relationship(deleteRule: .cascade) var departments: [GDepartment] = []
    init(name: String) { self.name = name }
}
