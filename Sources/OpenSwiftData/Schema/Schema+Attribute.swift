extension Schema {
    /// A stored value property of an entity.
    public class Attribute: SchemaProperty, @unchecked Sendable {
        /// The property's name.
        public var name: String
        /// The property's name in the previous schema version, so migration carries its
        /// values over; equal to `name` when not renamed.
        public var originalName: String
        /// The `@Attribute` options written on the property.
        public var options: [Schema.Attribute.Option]
        /// Whether the property's type is optional.
        public var isOptional: Bool
        /// The property's Swift type (without `Optional`).
        public var valueType: Any.Type
        /// A default value given to `init`. Attributes of a built schema leave it `nil`:
        /// the model's declared initial values are not copied here.
        public var defaultValue: Any?
        /// A string that distinguishes schema versions whose stored shape is otherwise
        /// the same.
        public var hashModifier: String?

        /// Options that change how SwiftData stores an attribute.
        public struct Option: Hashable, Sendable {
            enum Kind: Hashable, Sendable {
                case unique, externalStorage, allowsCloudEncryption, preserveValueOnDeletion, ephemeral, spotlight
                case transformable(String)
            }

            let kind: Kind

            /// The value is unique across all models of the entity; inserting a
            /// duplicate updates the existing model (upsert).
            public static var unique: Option { Option(kind: .unique) }
            /// Store the value beside the document rather than inside it.
            public static var externalStorage: Option { Option(kind: .externalStorage) }
            /// Accepted for source compatibility; CloudKit is not available on Linux, so it does nothing.
            public static var allowsCloudEncryption: Option { Option(kind: .allowsCloudEncryption) }
            /// Keep the value in history tombstones after the model is deleted.
            public static var preserveValueOnDeletion: Option { Option(kind: .preserveValueOnDeletion) }
            /// Track changes to the value (observers run, the context has changes) but
            /// never write it to the store: it lives only in the model object.
            public static var ephemeral: Option { Option(kind: .ephemeral) }
            /// Accepted for source compatibility; Spotlight is not available on Linux, so it does nothing.
            public static var spotlight: Option { Option(kind: .spotlight) }
            /// Store the value through the named value transformer.
            public static func transformable(by transformerName: String) -> Option {
                Option(kind: .transformable(transformerName))
            }
        }

        /// Creates an attribute named `name` holding `valueType`; `originalName` defaults
        /// to `name`.
        public init(
            name: String, originalName: String? = nil, options: [Option] = [],
            valueType: Any.Type, defaultValue: Any? = nil, hashModifier: String? = nil
        ) {
            self.name = name
            self.originalName = originalName ?? name
            self.options = options
            self.valueType = valueType
            self.defaultValue = defaultValue
            self.hashModifier = hashModifier
            self.isOptional = false
        }

        /// The form `@Attribute(...)` expands to; the name and type are filled in
        /// when the schema is built.
        public convenience init(_ options: Option..., originalName: String? = nil, hashModifier: String? = nil) {
            self.init(name: "", options: options, valueType: Any.self, hashModifier: hashModifier)
            self.originalName = originalName ?? ""
        }

        /// Whether the options include `.unique`.
        public var isUnique: Bool { options.contains(.unique) }
        /// Always false: `@Transient` properties are not in a schema.
        public var isTransient: Bool { false }

        /// Attributes are equal when their name, original name, options, optionality and
        /// value type are.
        public static func == (lhs: Attribute, rhs: Attribute) -> Bool {
            lhs.name == rhs.name && lhs.originalName == rhs.originalName && lhs.options == rhs.options
                && lhs.isOptional == rhs.isOptional && lhs.valueType == rhs.valueType
        }

        /// Hashes the name and options.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(name)
            hasher.combine(options)
        }
    }
}
