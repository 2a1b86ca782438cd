import Foundation
import SwiftData
import Testing

/// Fetches with `predicate` (sorted by `key`), checks whether it ran natively as
/// `native` says, and compares the result and `fetchCount` with `Predicate.evaluate`
/// over every model. With `splits`, the reference must keep some models and drop
/// others, so the predicate says something about the data.
func expectSameAsEvaluate<T: PersistentModel>(
    _ predicate: Predicate<T>, in context: ModelContext, sortedBy key: KeyPath<T, String> & Sendable,
    native: Bool, splits: Bool = false, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let descriptor = FetchDescriptor<T>(predicate: predicate, sortBy: [SortDescriptor(key)])
    let explanation = try context.explain(descriptor)
    // A predicate that is exactly a unique key is answered by the lookup (`.exactKey`).
    let ranNatively = explanation.filtering == .native || explanation.filtering == .exactKey
    #expect(ranNatively == native, "\(explanation)", sourceLocation: sourceLocation)
    let ours = try context.fetch(descriptor).map { $0[keyPath: key] }
    let all = try context.fetch(FetchDescriptor<T>())
    let reference = try all.filter { try predicate.evaluate($0) }.map { $0[keyPath: key] }.sorted()
    #expect(ours == reference, sourceLocation: sourceLocation)
    #expect(try context.fetchCount(descriptor) == reference.count, sourceLocation: sourceLocation)
    if splits {
        #expect(!reference.isEmpty && reference.count < all.count, "the predicate should split the models", sourceLocation: sourceLocation)
    }
}

/// What `descriptor` should fetch, worked out without the engine: every model,
/// `Predicate.evaluate`, Foundation's sort, then the offset and limit.
func referenceFetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, in context: ModelContext) throws -> [T] {
    var all = try context.fetch(FetchDescriptor<T>())
    if let predicate = descriptor.predicate { all = try all.filter { try predicate.evaluate($0) } }
    all = all.sorted(using: descriptor.sortBy)
    let offset = min(descriptor.fetchOffset ?? 0, all.count)
    let end = descriptor.fetchLimit.map { min(all.count, offset + $0) } ?? all.count
    return Array(all[offset..<end])
}
