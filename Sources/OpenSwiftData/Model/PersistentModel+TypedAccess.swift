import OpenSwiftDataStore

// Typed property access, which `@Model`'s accessors call.
//
// `getValue(forKey:)` and `setValue(forKey:to:)` run unspecialized in this module:
// each access passes the value's type as metadata and converts through its
// `_StorableValue` conformance at run time. These overloads are inlined into the
// model's module, where the property's type is known, so a natively stored value is
// converted by specialized code (`.string(name)`) and only the engine's `Value`
// crosses into the backing data, through one non-generic call. Relationships typed
// `[Destination]` or `Destination?` are read the same way, their models cast one by
// one. Every other property (transformable and `Codable` values, other relationship
// shapes, relationship writes, which keep inverses) takes the generic path, which the
// unconstrained overloads name; so does a backing data we did not make.

extension PersistentModel {
    /// Reads a natively stored property.
    @inlinable
    public func _$getValue<V: _StorableValue>(forKey key: KeyPath<Self, V>) -> V {
        if let stored = _$storedValue(in: persistentBackingData, forKey: key) { return V(_storedValue: stored) }
        return getValue(forKey: key)
    }

    /// Reads a to-many relationship: its models are cast to `E` one by one, in code
    /// specialized for `E`, rather than as a whole array through the runtime.
    @inlinable
    public func _$getValue<E: PersistentModel>(forKey key: KeyPath<Self, [E]>) -> [E] {
        guard let models = _$relatedModels(in: persistentBackingData, forKey: key) else { return getValue(forKey: key) }
        return models.map { $0 as! E }
    }

    /// Reads an optional to-one relationship.
    @inlinable
    public func _$getValue<E: PersistentModel>(forKey key: KeyPath<Self, E?>) -> E? {
        guard let models = _$relatedModels(in: persistentBackingData, forKey: key) else { return getValue(forKey: key) }
        return models.first.map { $0 as! E }
    }

    /// Reads any other stored property.
    @inlinable
    public func _$getValue<V>(forKey key: KeyPath<Self, V>) -> V {
        getValue(forKey: key)
    }

    /// Writes a natively stored property.
    @inlinable
    public func _$setValue<V: _StorableValue>(forKey key: KeyPath<Self, V>, to newValue: V) {
        if !_$setStoredValue(newValue._storedValue, in: persistentBackingData, forKey: key) {
            setValue(forKey: key, to: newValue)
        }
    }

    /// Writes any other stored property.
    @inlinable
    public func _$setValue<V>(forKey key: KeyPath<Self, V>, to newValue: V) {
        setValue(forKey: key, to: newValue)
    }
}

extension BackingData {
    /// Writes a natively stored property's initial value (`@Model`'s `init` accessors).
    /// (Always inlined: called on an opened existential, it was left a generic call.)
    @inlinable @inline(__always)
    public func _$setValue<V: _StorableValue>(forKey key: KeyPath<Model, V>, to newValue: V) {
        if !_$setStoredValue(newValue._storedValue, in: self, forKey: key) {
            setValue(forKey: key, to: newValue)
        }
    }

    /// Writes any other property's initial value.
    @inlinable
    public func _$setValue<V>(forKey key: KeyPath<Model, V>, to newValue: V) {
        setValue(forKey: key, to: newValue)
    }
}

/// The stored value of attribute `key` when `backing` is ours and the attribute is
/// stored natively; nil sends the caller down the generic path.
@usableFromInline
func _$storedValue(in backing: AnyObject, forKey key: AnyKeyPath) -> Value? {
    guard backing is OurBackingData else { return nil }
    return unsafeDowncast(backing, to: OurBackingData.self).storedValue(forKey: key)
}

/// The related models of relationship `key` when `backing` is ours; nil sends the
/// caller down the generic path.
@usableFromInline
func _$relatedModels(in backing: AnyObject, forKey key: AnyKeyPath) -> [any PersistentModel]? {
    guard backing is OurBackingData else { return nil }
    return unsafeDowncast(backing, to: OurBackingData.self).relatedModels(forKey: key)
}

/// Writes `value` to attribute `key` when `backing` is ours and the attribute is
/// stored natively; false (nothing written) sends the caller down the generic path.
@usableFromInline
func _$setStoredValue(_ value: Value, in backing: AnyObject, forKey key: AnyKeyPath) -> Bool {
    guard backing is OurBackingData else { return false }
    return unsafeDowncast(backing, to: OurBackingData.self).setStoredValue(value, forKey: key)
}
