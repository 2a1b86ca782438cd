extension Schema {
    /// What `@Model` records about one stored property: its name, key path,
    /// default value and the `@Attribute`/`@Relationship` options written on it.
    public struct PropertyMetadata {
        public var name: String
        public var keypath: AnyKeyPath
        public var defaultValue: Any?
        public var metadata: (any SchemaProperty)?

        public init(name: String, keypath: AnyKeyPath, defaultValue: Any?, metadata: (any SchemaProperty)?) {
            self.name = name
            self.keypath = keypath
            self.defaultValue = defaultValue
            self.metadata = metadata
        }
    }
}
