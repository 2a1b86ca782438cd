extension Schema {
    /// A property that refers to other models.
    public final class Relationship: SchemaProperty, @unchecked Sendable {
        public var name: String
        public var originalName: String
        public var keypath: AnyKeyPath?
        /// The destination entity's name.
        public var destination: String
        public var deleteRule: DeleteRule
        public var inverseName: String?
        public var inverseKeyPath: AnyKeyPath?
        public var minimumModelCount: Int?
        public var maximumModelCount: Int?
        public var isToOneRelationship: Bool
        public var isOptional: Bool
        public var options: [Option]
        public var hashModifier: String?

        /// What happens to related models when the owner is deleted.
        public enum DeleteRule: String, Codable, Sendable {
            /// Do nothing to related models; references to the deleted model read as nil.
            case noAction
            /// Remove the deleted model from the related models' inverse (the default).
            case nullify
            /// Delete the related models too.
            case cascade
            /// Refuse the delete while related models exist: `save()` throws.
            case deny
        }

        public struct Option: Codable, Hashable, Sendable {
            let raw: String
            /// The relationship's destination is unique per owner.
            public static var unique: Option { Option(raw: "unique") }
        }

        /// The form `@Relationship(...)` expands to; the name and destination are
        /// filled in when the schema is built.
        public convenience init(
            _ options: Option..., deleteRule: DeleteRule = .nullify,
            minimumModelCount: Int? = 0, maximumModelCount: Int? = 0,
            originalName: String? = nil, inverse: AnyKeyPath? = nil, hashModifier: String? = nil
        ) {
            self.init(name: "", destination: "", deleteRule: deleteRule)
            self.options = options
            self.minimumModelCount = minimumModelCount
            self.maximumModelCount = maximumModelCount
            self.originalName = originalName ?? ""
            self.inverseKeyPath = inverse
            self.hashModifier = hashModifier
        }

        init(name: String, destination: String, deleteRule: DeleteRule) {
            self.name = name
            self.originalName = name
            self.destination = destination
            self.deleteRule = deleteRule
            self.isToOneRelationship = true
            self.isOptional = true
            self.options = []
            self.minimumModelCount = 0
            self.maximumModelCount = 0
        }

        public var isUnique: Bool { options.contains(.unique) }

        public static func == (lhs: Relationship, rhs: Relationship) -> Bool {
            lhs.name == rhs.name && lhs.destination == rhs.destination && lhs.deleteRule == rhs.deleteRule
                && lhs.inverseName == rhs.inverseName && lhs.isToOneRelationship == rhs.isToOneRelationship
                && lhs.minimumModelCount == rhs.minimumModelCount && lhs.maximumModelCount == rhs.maximumModelCount
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(name)
            hasher.combine(destination)
        }
    }
}
