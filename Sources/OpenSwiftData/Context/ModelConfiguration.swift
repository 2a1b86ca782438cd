import Foundation

/// How a container stores its data.
///
/// CloudKit and group-container parameters are accepted for source compatibility
/// and ignored: neither exists on Linux. A configuration that is not in memory
/// only keeps its data in a document file at `url` (see Docs/Documents.md).
public struct ModelConfiguration: Identifiable, Hashable, Sendable, DataStoreConfiguration {
    public typealias Store = DefaultStore

    public let url: URL
    public let name: String
    public var schema: Schema?
    public let allowsSave: Bool
    public let isStoredInMemoryOnly: Bool
    /// OpenSwiftData: how far `save()` goes to survive power loss; `.full`
    /// (fsync on every save) unless set otherwise.
    public var durability: Durability = .full

    /// Accepted for source compatibility; ignored on Linux.
    public struct CloudKitDatabase: Sendable, Hashable {
        let value: String
        public static var automatic: CloudKitDatabase { CloudKitDatabase(value: "automatic") }
        public static var none: CloudKitDatabase { CloudKitDatabase(value: "none") }
        public static func `private`(_ privateDBName: String) -> CloudKitDatabase { CloudKitDatabase(value: privateDBName) }
    }

    /// Accepted for source compatibility; ignored on Linux.
    public struct GroupContainer: Sendable, Hashable {
        let value: String
        public static var automatic: GroupContainer { GroupContainer(value: "automatic") }
        public static var none: GroupContainer { GroupContainer(value: "none") }
        public static func identifier(_ groupName: String) -> GroupContainer { GroupContainer(value: groupName) }
    }

    public init(isStoredInMemoryOnly: Bool = false) {
        self.init(nil, schema: nil, isStoredInMemoryOnly: isStoredInMemoryOnly)
    }

    public init(for forTypes: any PersistentModel.Type..., isStoredInMemoryOnly: Bool = false) {
        self.init(nil, schema: Schema(forTypes), isStoredInMemoryOnly: isStoredInMemoryOnly)
    }

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

    public var id: URL { url }

    public static func == (lhs: ModelConfiguration, rhs: ModelConfiguration) -> Bool {
        lhs.url == rhs.url && lhs.name == rhs.name && lhs.isStoredInMemoryOnly == rhs.isStoredInMemoryOnly
            && lhs.allowsSave == rhs.allowsSave
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(url)
        hasher.combine(name)
    }
}
