import Foundation
import SwiftData
import Testing

/// Three versions of one model, as an app would ship them (the entity name is
/// the class name, `Account`, in each).
enum AccountsV1 {
    @Model final class Account {
        @Attribute(.unique) var number: String
        var owner: String
        var balance: Int
        var memo: String?

        init(number: String, owner: String, balance: Int, memo: String? = nil) {
            self.number = number
            self.owner = owner
            self.balance = balance
            self.memo = memo
        }
    }
}

enum AccountsV2 {
    /// `owner` renamed, `memo` removed, two attributes and an entity added.
    @Model final class Account {
        @Attribute(.unique) var number: String
        @Attribute(originalName: "owner") var holder: String
        var balance: Int
        var currency: String = "EUR"
        var note: String?

        init(number: String, holder: String, balance: Int) {
            self.number = number
            self.holder = holder
            self.balance = balance
        }
    }

    @Model final class Budget {
        var limit: Int
        init(limit: Int) { self.limit = limit }
    }
}

enum AccountsV3 {
    /// A new attribute with no initial value, and `owner` made unique.
    @Model final class Account {
        @Attribute(.unique) var number: String
        @Attribute(.unique) var owner: String
        var balance: Int
        var memo: String?
        var rank: Int

        init(number: String, owner: String, balance: Int, rank: Int) {
            self.number = number
            self.owner = owner
            self.balance = balance
            self.rank = rank
        }
    }
}

/// Issue #12, point 1: opening a document whose schema is an earlier version of
/// the application's migrates it (lightweight), or says clearly why it cannot.
@Suite struct LightweightMigrationTests {
    let folder: TemporaryFolder
    let url: URL

    init() throws {
        folder = try TemporaryFolder()
        url = folder.file("accounts.store")
    }

    /// Saves version-1 accounts; returns the first one's identifier.
    @discardableResult
    private func saveVersionOne(owners: [String] = ["ada", "bob", "cy"]) throws -> PersistentIdentifier {
        let context = ModelContext(try ModelContainer(for: AccountsV1.Account.self, configurations: ModelConfiguration(url: url)))
        let accounts = owners.enumerated().map { i, owner in
            AccountsV1.Account(number: "n\(i)", owner: owner, balance: 100 * i, memo: i == 0 ? "first" : nil)
        }
        accounts.forEach(context.insert)
        try context.save()
        return accounts[0].persistentModelID
    }

    @Test func renamedAddedAndRemovedPropertiesMigrate() throws {
        defer { folder.remove() }
        let first = try saveVersionOne()

        do {
            let container = try ModelContainer(for: AccountsV2.Account.self, AccountsV2.Budget.self, configurations: ModelConfiguration(url: url))
            let context = ModelContext(container)
            let accounts = try context.fetch(FetchDescriptor<AccountsV2.Account>(sortBy: [SortDescriptor(\.number)]))
            #expect(accounts.map(\.holder) == ["ada", "bob", "cy"])
            #expect(accounts.map(\.balance) == [0, 100, 200])
            #expect(accounts.allSatisfy { $0.currency == "EUR" && $0.note == nil })
            #expect(try context.fetchCount(FetchDescriptor<AccountsV2.Budget>()) == 0)
            // Identifiers survive the migration; indexes were built anew.
            #expect((context.model(for: first) as? AccountsV2.Account)?.number == "n0")
            let found = try context.fetch(FetchDescriptor<AccountsV2.Account>(predicate: #Predicate { $0.number == "n2" }))
            #expect(found.map(\.holder) == ["cy"])
            context.insert(AccountsV2.Account(number: "n3", holder: "dee", balance: 5))
            context.insert(AccountsV2.Budget(limit: 900))
            try context.save()
        }
        // The document now has the new schema: it opens as it is, saves included.
        let context = ModelContext(try ModelContainer(
            for: AccountsV2.Account.self, AccountsV2.Budget.self, configurations: ModelConfiguration(url: url)))
        #expect(try context.fetch(FetchDescriptor<AccountsV2.Account>(sortBy: [SortDescriptor(\.number)])).map(\.holder) == ["ada", "bob", "cy", "dee"])
        #expect(try context.fetch(FetchDescriptor<AccountsV2.Budget>()).map(\.limit) == [900])
        // The unique index on `number` was rebuilt: an insert of a known number upserts.
        context.insert(AccountsV2.Account(number: "n1", holder: "eve", balance: 0))
        try context.save()
        let accounts = try context.fetch(FetchDescriptor<AccountsV2.Account>(sortBy: [SortDescriptor(\.number)]))
        #expect(accounts.map(\.holder) == ["ada", "eve", "cy", "dee"])
    }

    @Test func aReadOnlyOpenMigratesInMemoryAndWritesNothing() throws {
        defer { folder.remove() }
        try saveVersionOne()
        let before = try Data(contentsOf: url)
        let container = try ModelContainer(
            for: AccountsV2.Account.self, AccountsV2.Budget.self, configurations: ModelConfiguration(url: url, allowsSave: false))
        let holders = try ModelContext(container).fetch(FetchDescriptor<AccountsV2.Account>(sortBy: [SortDescriptor(\.number)])).map(\.holder)
        #expect(holders == ["ada", "bob", "cy"])
        #expect(try Data(contentsOf: url) == before)
    }

    @Test func whatCannotBeMigratedIsAClearErrorAndLeavesTheDocument() throws {
        defer { folder.remove() }
        try saveVersionOne(owners: ["ada", "ada"])
        let before = try Data(contentsOf: url)
        // `rank` is new, not optional, and has no initial value.
        #expect {
            _ = try ModelContainer(for: AccountsV3.Account.self, configurations: ModelConfiguration(url: url))
        } throws: { error in
            error as? SwiftDataError == .loadIssueModelContainer && "\(error)".contains("rank")
        }
        #expect(try Data(contentsOf: url) == before)
        // Reopened as version 1, everything is there.
        let context = ModelContext(try ModelContainer(for: AccountsV1.Account.self, configurations: ModelConfiguration(url: url)))
        #expect(try context.fetchCount(FetchDescriptor<AccountsV1.Account>()) == 2)
    }
}
