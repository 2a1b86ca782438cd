import Foundation

/// What to fetch: a predicate, an order, and a window of the results.
public struct FetchDescriptor<T: PersistentModel> {
    public var predicate: Predicate<T>?
    public var sortBy: [SortDescriptor<T>]
    public var fetchLimit: Int?
    public var fetchOffset: Int?
    /// Whether unsaved inserts (and unsaved changes) take part; pending deletes never match.
    public var includePendingChanges = true
    /// A hint; results are the same with or without it.
    public var propertiesToFetch: [PartialKeyPath<T>] = []
    /// A hint; results are the same with or without it.
    public var relationshipKeyPathsForPrefetching: [PartialKeyPath<T>] = []

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

    public var startIndex: Int { 0 }
    public var endIndex: Int { batches.identifiers.count }

    /// - Complexity: O(1) within a loaded batch; O(batch size) to load the next one.
    public subscript(position: Int) -> Element { batches.element(at: position) }
}
