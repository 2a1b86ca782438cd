extension Schema {
    /// A semantic version of a schema, as `VersionedSchema.versionIdentifier` gives it.
    public struct Version: Codable, Comparable, CustomStringConvertible, Hashable, Sendable {
        /// The first component, compared first.
        public let major: Int
        /// The second component, compared when the major components are equal.
        public let minor: Int
        /// The third component, compared last.
        public let patch: Int

        /// Creates the version `major.minor.patch`.
        public init(_ major: Int, _ minor: Int, _ patch: Int) {
            self.major = major
            self.minor = minor
            self.patch = patch
        }

        /// Orders versions by major, then minor, then patch component.
        public static func < (lhs: Version, rhs: Version) -> Bool {
            (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
        }

        /// The version as `major.minor.patch`, such as `1.2.0`.
        public var description: String { "\(major).\(minor).\(patch)" }
    }
}
