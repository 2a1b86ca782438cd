extension Schema {
    /// What `@Model` records about one stored property: its name, key path,
    /// default value and the `@Attribute`/`@Relationship` options written on it.
    public struct PropertyMetadata {
        /// The property's name.
        public var name: String
        /// The key path from the model type to the property.
        public var keypath: AnyKeyPath
        /// The property's initial value as declared, or `nil` when it has none.
        public var defaultValue: Any?
        /// The `Schema.Attribute` or `Schema.Relationship` its macro wrote, or `nil` for
        /// a plain property.
        public var metadata: (any SchemaProperty)?

        /// Creates the metadata of one property, as the `@Model` expansion does.
        public init(name: String, keypath: AnyKeyPath, defaultValue: Any?, metadata: (any SchemaProperty)?) {
            self.name = name
            self.keypath = keypath
            self.defaultValue = defaultValue
            self.metadata = metadata
        }
    }
}
