import Foundation
import OpenSwiftDataStore

// Aggregates over the models a descriptor selects, computed on stored values
// without making model objects. *Additive* (not in SwiftData). Each respects the
// descriptor's predicate, pending changes, sort, offset and limit.

extension ModelContext {
    /// The values of `keyPath` for the models `descriptor` selects, in order.
    private func values<T: PersistentModel, V>(of keyPath: KeyPath<T, V>, in descriptor: FetchDescriptor<T>) throws -> [V] {
        let query = try FetchQuery(descriptor, context: self)
        guard case let .attribute(slot)? = query.layout.slots[keyPath] else {
            throw SwiftDataError(.unsupportedKeyPath, "\(keyPath) is not a stored attribute of \(query.layout.name)")
        }
        let attribute = query.layout.attributes[slot]
        return query.window(try query.candidates()).map { attribute.decode(query.value(of: $0, slot: slot), as: V.self) }
    }

    /// The sum of `keyPath` over the selected models (zero when none).
    /// - Complexity: O(n) in the rows the plan examines; no models are made.
    public func sum<T: PersistentModel, V: AdditiveArithmetic>(
        of keyPath: KeyPath<T, V>, in descriptor: FetchDescriptor<T> = FetchDescriptor<T>()
    ) throws -> V {
        try values(of: keyPath, in: descriptor).reduce(.zero, +)
    }

    /// The smallest value of `keyPath` over the selected models, or nil when none.
    public func min<T: PersistentModel, V: Comparable>(
        of keyPath: KeyPath<T, V>, in descriptor: FetchDescriptor<T> = FetchDescriptor<T>()
    ) throws -> V? {
        try values(of: keyPath, in: descriptor).min()
    }

    /// The largest value of `keyPath` over the selected models, or nil when none.
    public func max<T: PersistentModel, V: Comparable>(
        of keyPath: KeyPath<T, V>, in descriptor: FetchDescriptor<T> = FetchDescriptor<T>()
    ) throws -> V? {
        try values(of: keyPath, in: descriptor).max()
    }

    /// The mean of a floating-point `keyPath`, or nil when no model is selected.
    public func average<T: PersistentModel, V: BinaryFloatingPoint>(
        of keyPath: KeyPath<T, V>, in descriptor: FetchDescriptor<T> = FetchDescriptor<T>()
    ) throws -> Double? {
        let all = try values(of: keyPath, in: descriptor)
        return all.isEmpty ? nil : all.reduce(0.0) { $0 + Double($1) } / Double(all.count)
    }

    /// The mean of an integer `keyPath`, or nil when no model is selected.
    public func average<T: PersistentModel, V: BinaryInteger>(
        of keyPath: KeyPath<T, V>, in descriptor: FetchDescriptor<T> = FetchDescriptor<T>()
    ) throws -> Double? {
        let all = try values(of: keyPath, in: descriptor)
        return all.isEmpty ? nil : all.reduce(0.0) { $0 + Double($1) } / Double(all.count)
    }

    /// How many selected models have each value of `keyPath`.
    public func countsGrouped<T: PersistentModel, K: Hashable>(
        by keyPath: KeyPath<T, K>, in descriptor: FetchDescriptor<T> = FetchDescriptor<T>()
    ) throws -> [K: Int] {
        var counts: [K: Int] = [:]
        for value in try values(of: keyPath, in: descriptor) { counts[value, default: 0] += 1 }
        return counts
    }
}
