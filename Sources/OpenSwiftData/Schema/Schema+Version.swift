extension Schema {
    /// A semantic version of a schema, as `VersionedSchema.versionIdentifier` gives it.
    public struct Version: Codable, Comparable, CustomStringConvertible, Hashable, Sendable {
        public let major: Int
        public let minor: Int
        public let patch: Int

        public init(_ major: Int, _ minor: Int, _ patch: Int) {
            self.major = major
            self.minor = minor
            self.patch = patch
        }

        public static func < (lhs: Version, rhs: Version) -> Bool {
            (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
        }

        public var description: String { "\(major).\(minor).\(patch)" }
    }
}
