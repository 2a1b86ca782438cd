import Foundation

/// How a container stores its data.
///
/// CloudKit and group-container parameters are accepted for source compatibility
/// and ignored: neither exists on Linux. A configuration that is not in memory
/// only keeps its data in a document file at `url` (see OpenSwiftData.docc/WorkingWithDocuments.md).
public struct ModelConfiguration: Identifiable, Hashable, Sendable, DataStoreConfiguration {
    /// The built-in store, as the `DataStore` protocol names it; a container opens
    /// the engine directly instead.
    public typealias Store = DefaultStore

    /// The document file that keeps the configuration's data; `/dev/null` for an
    /// in-memory configuration.
    public let url: URL
    /// The configuration's name: the one given, else the file name without extension,
    /// else `"default"`.
    public let name: String
    /// The entities this configuration offers to keep; `nil` offers every entity of
    /// the container's schema. Each entity goes to the first configuration offering it.
    public var schema: Schema?
    /// Whether the container may write this store; `false` opens its document read-only.
    public let allowsSave: Bool
    /// Whether the data lives in memory only, never in a file, and is gone when the
    /// container is.
    public let isStoredInMemoryOnly: Bool
    /// OpenSwiftData: how far `save()` goes to survive power loss; `.full`
    /// (fsync on every save) unless set otherwise.
    public var durability: Durability = .full

    /// Accepted for source compatibility; ignored on Linux.
    public struct CloudKitDatabase: Sendable, Hashable {
        let value: String
        /// The app's default CloudKit database (ignored).
        public static var automatic: CloudKitDatabase { CloudKitDatabase(value: "automatic") }
        /// No CloudKit database (ignored).
        public static var none: CloudKitDatabase { CloudKitDatabase(value: "none") }
        /// The private CloudKit database named `privateDBName` (ignored).
        public static func `private`(_ privateDBName: String) -> CloudKitDatabase { CloudKitDatabase(value: privateDBName) }
    }

    /// Accepted for source compatibility; ignored on Linux.
    public struct GroupContainer: Sendable, Hashable {
        let value: String
        /// The app's default group container (ignored).
        public static var automatic: GroupContainer { GroupContainer(value: "automatic") }
        /// No group container (ignored).
        public static var none: GroupContainer { GroupContainer(value: "none") }
        /// The group container named `groupName` (ignored).
        public static func identifier(_ groupName: String) -> GroupContainer { GroupContainer(value: groupName) }
    }

    /// Creates the `"default"` configuration for every entity of the container's
    /// schema, kept in `default.store` in the data directory or in memory.
    public init(isStoredInMemoryOnly: Bool = false) {
        self.init(nil, schema: nil, isStoredInMemoryOnly: isStoredInMemoryOnly)
    }

    /// Creates the `"default"` configuration keeping the entities of `forTypes` (and the
    /// models they relate to).
    public init(for forTypes: any PersistentModel.Type..., isStoredInMemoryOnly: Bool = false) {
        self.init(nil, schema: Schema(forTypes), isStoredInMemoryOnly: isStoredInMemoryOnly)
    }

    /// Creates a configuration stored in `<data directory>/<name>.store`, or in memory.
    ///
    /// The data directory is `$XDG_DATA_HOME/OpenSwiftData`, or
    /// `~/.local/share/OpenSwiftData` when that variable is not set; `name`
    /// defaults to `"default"`.
    public init(
        _ name: String? = nil, schema: Schema? = nil, isStoredInMemoryOnly: Bool = false, allowsSave: Bool = true,
        groupContainer: GroupContainer = .automatic, cloudKitDatabase: CloudKitDatabase = .automatic
    ) {
        let name = name ?? "default"
        self.name = name
        self.schema = schema
        self.isStoredInMemoryOnly = isStoredInMemoryOnly
        self.allowsSave = allowsSave
        self.url = isStoredInMemoryOnly
            ? URL(fileURLWithPath: "/dev/null")
            : Self.defaultDirectory.appendingPathComponent("\(name).store")
    }

    /// Creates a configuration stored in the document file at `url`, named after the file
    /// unless `name` is given.
    public init(
        _ name: String? = nil, schema: Schema? = nil, url: URL, allowsSave: Bool = true,
        cloudKitDatabase: CloudKitDatabase = .automatic
    ) {
        self.name = name ?? url.deletingPathExtension().lastPathComponent
        self.schema = schema
        self.url = url
        self.allowsSave = allowsSave
        self.isStoredInMemoryOnly = false
    }

    /// `$XDG_DATA_HOME/OpenSwiftData`, else `~/.local/share/OpenSwiftData`.
    static var defaultDirectory: URL {
        if let xdg = ProcessInfo.processInfo.environment["XDG_DATA_HOME"], !xdg.isEmpty {
            return URL(fileURLWithPath: xdg).appendingPathComponent("OpenSwiftData")
        }
        return FileManager.default.homeDirectoryForCurrentUser
            .appendingPathComponent(".local/share/OpenSwiftData")
    }

    /// The configuration's file URL; every in-memory configuration has the same one
    /// (`/dev/null`).
    public var id: URL { url }

    /// Configurations are equal when their URL, name, memory-only flag and `allowsSave`
    /// are; schema and durability are not compared.
    public static func == (lhs: ModelConfiguration, rhs: ModelConfiguration) -> Bool {
        lhs.url == rhs.url && lhs.name == rhs.name && lhs.isStoredInMemoryOnly == rhs.isStoredInMemoryOnly
            && lhs.allowsSave == rhs.allowsSave
    }

    /// Hashes the URL and name, which equal configurations share.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(url)
        hasher.combine(name)
    }
}
