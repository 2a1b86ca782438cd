import SwiftData
import Testing

@Suite struct ErrorTests {
    private static let allErrors: [SwiftDataError] = [
        .includePendingChangesWithBatchSize, .unsupportedPredicate, .unsupportedKeyPath,
        .sortingPendingChangesWithIdentifiers, .unsupportedSortDescriptor, .duplicateConfiguration,
        .configurationFileNameContainsInvalidCharacters, .configurationFileNameTooLong,
        .configurationSchemaNotFoundInContainerSchema, .loadIssueModelContainer, .modelValidationFailure,
        .missingModelContext, .backwardMigration, .unknownSchema, .historyTokenExpired,
        .invalidTransactionFetchRequest,
        // OpenSwiftData's additive errors.
        .uniqueConstraintViolation, .readOnlyConfiguration, .unknownModelType,
    ]

    private func makeContainer(_ types: any PersistentModel.Type...) throws -> ModelContainer {
        try ModelContainer(for: Schema(types), configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    }

    // MARK: SwiftDataError values

    @Test func swiftDataErrorStaticsAreDistinct() {
        let errors = Self.allErrors
        for (i, a) in errors.enumerated() {
            for (j, b) in errors.enumerated() {
                #expect((a == b) == (i == j), "\(a) vs \(b)")
            }
        }
    }

    @Test func swiftDataErrorIsHashable() {
        let set = Set(Self.allErrors)
        #expect(set.count == Self.allErrors.count)
        #expect(set.contains(.modelValidationFailure))

        var seen: [SwiftDataError: Int] = [:]
        for error in Self.allErrors + Self.allErrors { seen[error, default: 0] += 1 }
        #expect(seen.count == Self.allErrors.count)
        #expect(seen.values.allSatisfy { $0 == 2 })
        #expect(SwiftDataError.duplicateConfiguration.hashValue == SwiftDataError.duplicateConfiguration.hashValue)
    }

    @Test func swiftDataErrorIsAnErrorAndSendable() {
        func requireSendable<T: Sendable>(_ value: T) -> T { value }
        let error: any Error = requireSendable(SwiftDataError.missingModelContext)
        #expect(error as? SwiftDataError == .missingModelContext)
    }

    @Test func catchPatternMatchesSwiftDataError() {
        func fail() throws { throw SwiftDataError.modelValidationFailure }
        var matched = false
        do {
            try fail()
        } catch SwiftDataError.modelValidationFailure {
            matched = true
        } catch {
            Issue.record("unexpected error \(error)")
        }
        #expect(matched)

        #expect(SwiftDataError.modelValidationFailure ~= SwiftDataError.modelValidationFailure)
        #expect(!(SwiftDataError.unknownSchema ~= SwiftDataError.modelValidationFailure))
        #expect(!(SwiftDataError.modelValidationFailure ~= DataStoreError.invalidPredicate))
    }

    @Test func catchPatternMatchesErrorThrownBySave() throws {
        let container = try makeContainer(GDepartment.self, GEmployee.self)
        let context = ModelContext(container)
        let department = GDepartment(name: "Legal")
        department.employees = [GEmployee(name: "Sam")]
        context.insert(department)
        try context.save()

        context.delete(department)
        var outcome = "none"
        do {
            try context.save()
            outcome = "saved"
        } catch SwiftDataError.uniqueConstraintViolation {
            outcome = "wrong case"
        } catch SwiftDataError.modelValidationFailure {
            outcome = "validation"
        } catch {
            outcome = "other: \(error)"
        }
        #expect(outcome == "validation")
    }

    @Test func switchOverCaughtError() {
        let thrown: any Error = SwiftDataError.backwardMigration
        let name: String = switch thrown {
        case SwiftDataError.unknownSchema: "unknownSchema"
        case SwiftDataError.backwardMigration: "backwardMigration"
        default: "other"
        }
        #expect(name == "backwardMigration")
    }

    // MARK: Errors thrown by the API

    @Test func fetchingUnknownModelTypeThrows() throws {
        let container = try makeContainer(Trip.self)
        let context = ModelContext(container)
        #expect(throws: SwiftDataError.unknownModelType) {
            _ = try context.fetch(FetchDescriptor<Animal>())
        }
        #expect(throws: SwiftDataError.unknownModelType) {
            _ = try context.fetchCount(FetchDescriptor<GDevice>())
        }
        // Types reachable through relationships are in the schema.
        #expect(try context.fetchCount(FetchDescriptor<BucketListItem>()) == 0)
    }

    @Test func duplicateConfigurationsThrow() throws {
        #expect(throws: SwiftDataError.duplicateConfiguration) {
            _ = try ModelContainer(
                for: Trip.self,
                configurations: ModelConfiguration(isStoredInMemoryOnly: true), ModelConfiguration(isStoredInMemoryOnly: true))
        }
        // Two configurations with different names are fine.
        let container = try ModelContainer(
            for: Trip.self,
            configurations: ModelConfiguration("one", isStoredInMemoryOnly: true),
            ModelConfiguration("two", isStoredInMemoryOnly: true))
        #expect(container.configurations.count == 2)
    }

    @Test func configurationSchemaOutsideContainerSchemaThrows() throws {
        #expect(throws: SwiftDataError.configurationSchemaNotFoundInContainerSchema) {
            _ = try ModelContainer(
                for: Schema([Trip.self]),
                configurations: ModelConfiguration(schema: Schema([GDevice.self]), isStoredInMemoryOnly: true))
        }
    }

    @Test func caughtErrorComparesByCode() throws {
        let container = try ModelContainer(
            for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true, allowsSave: false))
        let context = ModelContext(container)
        context.insert(Trip(name: "X", destination: "Y"))
        do {
            try context.save()
            Issue.record("save succeeded on a read-only configuration")
        } catch let error as SwiftDataError {
            #expect(error == .readOnlyConfiguration)
            #expect(error != .modelValidationFailure)
        }
    }

    @Test func saveOnReadOnlyConfigurationThrows() throws {
        let container = try ModelContainer(
            for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true, allowsSave: false))
        let context = ModelContext(container)
        context.insert(Trip(name: "Read only", destination: "Nowhere"))
        #expect(throws: SwiftDataError.readOnlyConfiguration) {
            try context.save()
        }
        let other = ModelContext(container)
        #expect(try other.fetchCount(FetchDescriptor<Trip>()) == 0)
    }

    @Test func saveWithoutChangesOnReadOnlyConfigurationDoesNotThrow() throws {
        let container = try ModelContainer(
            for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true, allowsSave: false))
        let context = ModelContext(container)
        #expect(!context.hasChanges)
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 0)
    }

    @Test func throwingPredicateSurfacesAsFetchError() throws {
        let container = try makeContainer(Trip.self)
        let context = ModelContext(container)
        let withNotes = Trip(name: "Noted", destination: "A")
        withNotes.notes = "x"
        context.insert(withNotes)
        context.insert(Trip(name: "Unnoted", destination: "B"))
        try context.save()

        let predicate = #Predicate<Trip> { $0.notes! == "x" }
        #expect(throws: (any Error).self) {
            _ = try context.fetch(FetchDescriptor<Trip>(predicate: predicate))
        }
        #expect(throws: (any Error).self) {
            _ = try context.fetchCount(FetchDescriptor<Trip>(predicate: predicate))
        }
        // The context still works afterwards.
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 2)
    }

    @Test func throwingPredicateOverPendingInsertSurfacesAsFetchError() throws {
        let container = try makeContainer(Trip.self)
        let context = ModelContext(container)
        context.insert(Trip(name: "Unsaved", destination: "C"))
        let predicate = #Predicate<Trip> { $0.notes! == "x" }
        #expect(throws: (any Error).self) {
            _ = try context.fetch(FetchDescriptor<Trip>(predicate: predicate))
        }
    }

    @Test func dataStoreErrorCasesExist() {
        let cases: [DataStoreError] = [.invalidPredicate, .preferInMemoryFilter, .preferInMemorySort, .unsupportedFeature]
        #expect(Set(cases).count == 4)
        let error: any Error = DataStoreError.unsupportedFeature
        #expect(error as? DataStoreError == .unsupportedFeature)
        #expect(DataStoreError.invalidPredicate != DataStoreError.preferInMemorySort)
    }
}
