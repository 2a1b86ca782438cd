extension Schema {
    /// A property that refers to other models.
    public final class Relationship: SchemaProperty, @unchecked Sendable {
        /// The property's name.
        public var name: String
        /// The property's name in the previous schema version, for migration; equal to
        /// `name` when not renamed.
        public var originalName: String
        /// The key path from the owning model type to the property.
        public var keypath: AnyKeyPath?
        /// The destination entity's name.
        public var destination: String
        /// What deleting the owner does to the related models; `.nullify` unless
        /// declared.
        public var deleteRule: DeleteRule
        /// The name of the destination's relationship that mirrors this one, or `nil`
        /// when there is none.
        public var inverseName: String?
        /// The key path of the inverse relationship: the one given as `inverse:`, else
        /// the one named by `inverseName`.
        public var inverseKeyPath: AnyKeyPath?
        /// The fewest models a to-many relationship may hold when saved; 0 means no
        /// minimum.
        public var minimumModelCount: Int?
        /// The most models a to-many relationship may hold when saved; 0 means no
        /// maximum.
        public var maximumModelCount: Int?
        /// Whether the property holds one model (or `nil`) rather than an array.
        public var isToOneRelationship: Bool
        /// Whether the property's type is optional; `save()` rejects a nil non-optional
        /// to-one relationship.
        public var isOptional: Bool
        /// The `@Relationship` options written on the property.
        public var options: [Option]
        /// The `hashModifier:` given to `@Relationship`; relationships of a built schema
        /// leave it `nil`.
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

        /// Options that change how SwiftData treats a relationship.
        public struct Option: Codable, Hashable, Sendable {
            let raw: String
            /// The relationship's destination is unique per owner. Recorded in the
            /// schema only: OpenSwiftData does not enforce it.
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

        /// Whether the options include `.unique`.
        public var isUnique: Bool { options.contains(.unique) }

        /// Relationships are equal when their name, destination, delete rule, inverse
        /// name, cardinality and model counts are.
        public static func == (lhs: Relationship, rhs: Relationship) -> Bool {
            lhs.name == rhs.name && lhs.destination == rhs.destination && lhs.deleteRule == rhs.deleteRule
                && lhs.inverseName == rhs.inverseName && lhs.isToOneRelationship == rhs.isToOneRelationship
                && lhs.minimumModelCount == rhs.minimumModelCount && lhs.maximumModelCount == rhs.maximumModelCount
        }

        /// Hashes the name and destination.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(name)
            hasher.combine(destination)
        }
    }
}
