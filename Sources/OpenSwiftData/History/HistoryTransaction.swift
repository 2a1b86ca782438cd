import Foundation

/// A point in a store's history that later fetches start from: `Comparable` so
/// predicates can say `$0.token > lastToken`, `Codable` so an app can keep it.
public protocol HistoryToken: Comparable, Decodable, Encodable, Hashable, Identifiable, Sendable {}

/// One commit of a store: its changes, who made them and when.
public protocol HistoryTransaction: Hashable, Identifiable, Sendable {
    /// The type of the transaction's position in history.
    associatedtype TokenType: Comparable, Hashable, Identifiable, Sendable
    /// When the transaction was committed.
    var timestamp: Date { get }
    /// The inserts, updates and deletes the transaction committed.
    var changes: [HistoryChange] { get }
    /// The transaction's position in history, to fetch what came after it.
    var token: Self.TokenType { get }
    /// The identifier of the store the transaction was committed to.
    var storeIdentifier: String { get }
    /// The `author` of the context that saved the transaction, if it had one.
    var author: String? { get }
}

/// The token of the built-in store's transactions: the store generation the
/// transaction's commit published. Tokens of one store order as its commits did.
public struct DefaultHistoryToken: HistoryToken, Comparable, Hashable, Identifiable, Sendable, Codable {
    /// The store generation the commit published; later commits have larger ones.
    public var id: Int

    /// Creates the token of store generation `id`.
    public init(id: Int) {
        self.id = id
    }

    /// Orders tokens by generation, which is commit order within one store.
    public static func < (lhs: DefaultHistoryToken, rhs: DefaultHistoryToken) -> Bool { lhs.id < rhs.id }
}

/// A transaction of the built-in store (`ModelContext.fetchHistory(_:)`).
///
/// `bundleIdentifier` and `processIdentifier` are the reading process's: the
/// document does not record which process of the app wrote a transaction.
public struct DefaultHistoryTransaction: HistoryTransaction {
    /// The type of `transactionIdentifier`: the commit's store generation.
    public typealias TransactionIdentifier = Int64
    /// The built-in store's token type.
    public typealias TokenType = DefaultHistoryToken

    /// The commit's store generation, the same number as `transactionIdentifier`.
    public var id: Int64
    /// When the store committed the transaction.
    public let timestamp: Date
    /// The inserts, updates and deletes of the commit, for the entities the container's
    /// schema knows.
    public let changes: [HistoryChange]
    /// The token of this commit; fetch with `$0.token > token` to continue after it.
    public let token: DefaultHistoryTransaction.TokenType
    /// The commit's store generation, unique within its store.
    public let transactionIdentifier: Int64
    /// The identifier of the container's store (the document's store UUID for a
    /// file-backed store).
    public let storeIdentifier: String
    /// The main bundle identifier of the process reading the history, not of the
    /// one that wrote it; empty when the process has none.
    public let bundleIdentifier: String
    /// The identifier of the process reading the history, not of the one that wrote it.
    public let processIdentifier: String
    /// The `author` the saving context had set, or `nil`.
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

    /// Hashes the commit's identity: its transaction identifier and store.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(transactionIdentifier)
        hasher.combine(storeIdentifier)
    }
}

/// The names the history article uses (`History.DefaultToken`, …).
public enum History {
    /// The built-in store's history token.
    public typealias DefaultToken = DefaultHistoryToken
    /// The built-in store's history transaction.
    public typealias DefaultTransaction = DefaultHistoryTransaction
    /// An insertion in the built-in store's history.
    public typealias DefaultInsert<Model: PersistentModel> = DefaultHistoryInsert<Model>
    /// An update in the built-in store's history.
    public typealias DefaultUpdate<Model: PersistentModel> = DefaultHistoryUpdate<Model>
    /// A deletion in the built-in store's history.
    public typealias DefaultDelete<Model: PersistentModel> = DefaultHistoryDelete<Model>
    /// The preserved values of a deleted model.
    public typealias Tombstone<Model: PersistentModel> = HistoryTombstone<Model>
}
