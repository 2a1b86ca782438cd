import Foundation

/// What to fetch: a predicate, an order, and a window of the results.
public struct FetchDescriptor<T: PersistentModel> {
    /// Which models to fetch; `nil` fetches every model of type `T`.
    public var predicate: Predicate<T>?
    /// The order of the results, by the first descriptor, then the next for ties; empty
    /// promises no order.
    public var sortBy: [SortDescriptor<T>]
    /// The most models to return, counted after `fetchOffset`; `nil`, 0 or a negative
    /// number means no limit.
    public var fetchLimit: Int?
    /// How many matching models to skip before the first one returned; `nil` or a
    /// negative number skips none.
    public var fetchOffset: Int?
    /// Whether unsaved inserts (and unsaved changes) take part; pending deletes never match.
    public var includePendingChanges = true
    /// A hint; results are the same with or without it.
    public var propertiesToFetch: [PartialKeyPath<T>] = []
    /// A hint; results are the same with or without it.
    public var relationshipKeyPathsForPrefetching: [PartialKeyPath<T>] = []

    /// Creates a descriptor for the models `predicate` matches (all when `nil`), in the
    /// order of `sortBy`.
    public init(predicate: Predicate<T>? = nil, sortBy: [SortDescriptor<T>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
    }
}

extension FetchDescriptor: @unchecked Sendable {}

/// The results of a batched fetch, materialized a batch at a time as they are read.
public struct FetchResultsCollection<Element>: RandomAccessCollection {
    final class Batches {
        let identifiers: [PersistentIdentifier]
        let batchSize: Int
        let load: ([PersistentIdentifier]) -> [Element]
        var loaded: [Int: [Element]] = [:]

        init(identifiers: [PersistentIdentifier], batchSize: Int, load: @escaping ([PersistentIdentifier]) -> [Element]) {
            self.identifiers = identifiers
            self.batchSize = Swift.max(1, batchSize)
            self.load = load
        }

        func element(at position: Int) -> Element {
            let batch = position / batchSize
            if loaded[batch] == nil {
                // Keep only the batch being read, so memory stays bounded by the batch size.
                loaded.removeAll()
                let start = batch * batchSize
                loaded[batch] = load(Array(identifiers[start..<Swift.min(start + batchSize, identifiers.count)]))
            }
            return loaded[batch]![position - batch * batchSize]
        }
    }

    let batches: Batches

    /// The position of the first result: always 0.
    public var startIndex: Int { 0 }
    /// The number of results, fixed when the fetch ran.
    public var endIndex: Int { batches.identifiers.count }

    /// - Complexity: O(1) within a loaded batch; O(batch size) to load the next one.
    public subscript(position: Int) -> Element { batches.element(at: position) }
}
