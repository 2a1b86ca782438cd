import Foundation
import SwiftData
import Testing

/// Issue #12, point 7: `@Model` subclasses of `@Model` classes (Apple's model inheritance).
@Suite struct InheritanceTests {
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
}

