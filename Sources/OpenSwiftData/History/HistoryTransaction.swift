import Foundation

/// A point in a store's history that later fetches start from: `Comparable` so
/// predicates can say `$0.token > lastToken`, `Codable` so an app can keep it.
public protocol HistoryToken: Comparable, Decodable, Encodable, Hashable, Identifiable, Sendable {}

/// One commit of a store: its changes, who made them and when.
public protocol HistoryTransaction: Hashable, Identifiable, Sendable {
    associatedtype TokenType: Comparable, Hashable, Identifiable, Sendable
    var timestamp: Date { get }
    var changes: [HistoryChange] { get }
    var token: Self.TokenType { get }
    var storeIdentifier: String { get }
    var author: String? { get }
}

/// The token of the built-in store's transactions: the store generation the
/// transaction's commit published. Tokens of one store order as its commits did.
public struct DefaultHistoryToken: HistoryToken, Comparable, Hashable, Identifiable, Sendable, Codable {
    public var id: Int

    public init(id: Int) {
        self.id = id
    }

    public static func < (lhs: DefaultHistoryToken, rhs: DefaultHistoryToken) -> Bool { lhs.id < rhs.id }
}

/// A transaction of the built-in store (`ModelContext.fetchHistory(_:)`).
///
/// `bundleIdentifier` and `processIdentifier` are the reading process's: the
/// document does not record which process of the app wrote a transaction.
public struct DefaultHistoryTransaction: HistoryTransaction {
    public typealias TransactionIdentifier = Int64
    public typealias TokenType = DefaultHistoryToken

    public var id: Int64
    public let timestamp: Date
    public let changes: [HistoryChange]
    public let token: DefaultHistoryTransaction.TokenType
    public let transactionIdentifier: Int64
    public let storeIdentifier: String
    public let bundleIdentifier: String
    public let processIdentifier: String
    public let author: String?

    init(generation: UInt64, timestamp: Date, author: String?, changes: [HistoryChange], storeIdentifier: String) {
        self.id = Int64(generation)
        self.timestamp = timestamp
        self.changes = changes
        self.token = DefaultHistoryToken(id: Int(generation))
        self.transactionIdentifier = Int64(generation)
        self.storeIdentifier = storeIdentifier
        self.bundleIdentifier = Bundle.main.bundleIdentifier ?? ""
        self.processIdentifier = String(ProcessInfo.processInfo.processIdentifier)
        self.author = author
    }

    /// Transactions are the same when they are the same commit of the same store.
    public static func == (lhs: DefaultHistoryTransaction, rhs: DefaultHistoryTransaction) -> Bool {
        lhs.transactionIdentifier == rhs.transactionIdentifier && lhs.storeIdentifier == rhs.storeIdentifier
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(transactionIdentifier)
        hasher.combine(storeIdentifier)
    }
}

/// The names the history article uses (`History.DefaultToken`, …).
public enum History {
    public typealias DefaultToken = DefaultHistoryToken
    public typealias DefaultTransaction = DefaultHistoryTransaction
    public typealias DefaultInsert<Model: PersistentModel> = DefaultHistoryInsert<Model>
    public typealias DefaultUpdate<Model: PersistentModel> = DefaultHistoryUpdate<Model>
    public typealias DefaultDelete<Model: PersistentModel> = DefaultHistoryDelete<Model>
    public typealias Tombstone<Model: PersistentModel> = HistoryTombstone<Model>
}
