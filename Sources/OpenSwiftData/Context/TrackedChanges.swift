import Foundation

/// A context's saved models with unsaved changes, and the saved models it deleted and
/// inserted again (reinsertions), which the next save points stored references at.
///
/// A pending insert is never a tracked change (its changes are part of the insert),
/// nor is a pending delete (a delete takes a model off this list; taking the delete
/// back puts it on again when it has changes). The context keeps that across the two
/// types; this one keeps its own invariants (`_checkInvariants()`).
struct TrackedChanges: Sequence {
    /// The changed models' identifiers.
    private(set) var identifiers: Set<PersistentIdentifier> = []
    /// Saved models deleted and inserted again, with the identifiers they had
    /// (`ModelContext.relinkReinsertions()`).
    private(set) var reinsertions: [(old: PersistentIdentifier, model: any PersistentModel)] = []

    /// Whether no saved model has unsaved changes.
    /// - Complexity: O(1)
    @inline(__always)
    var isEmpty: Bool { identifiers.isEmpty }

    /// How many saved models have unsaved changes.
    /// - Complexity: O(1)
    @inline(__always)
    var count: Int { identifiers.count }

    /// Whether `id` has unsaved changes.
    /// - Complexity: O(1) expected
    @inline(__always)
    func contains(_ id: PersistentIdentifier) -> Bool { !identifiers.isEmpty && identifiers.contains(id) }

    /// The changed models' identifiers, in no order.
    func makeIterator() -> Set<PersistentIdentifier>.Iterator { identifiers.makeIterator() }

    /// The changed models' identifiers in identifier order: the order saves and
    /// `changedModelsArray` give them in.
    /// - Complexity: O(n log n)
    func sorted() -> [PersistentIdentifier] { identifiers.sorted() }

    /// Tracks `id` as changed; false when it was already.
    /// - Complexity: O(1) expected
    @discardableResult
    mutating func insert(_ id: PersistentIdentifier) -> Bool { identifiers.insert(id).inserted }

    /// Stops tracking `id` (deleted, or its changes undone).
    /// - Complexity: O(1) expected
    mutating func remove(_ id: PersistentIdentifier) { identifiers.remove(id) }

    /// Records that `model`, saved as `old`, was deleted and inserted again.
    /// - Complexity: O(1) amortized
    mutating func noteReinsertion(of model: any PersistentModel, savedAs old: PersistentIdentifier) {
        reinsertions.append((old: old, model: model))
    }

    /// Whether a saved model was inserted again since the last save.
    /// - Complexity: O(1)
    @inline(__always)
    var hasReinsertions: Bool { !reinsertions.isEmpty }

    /// Forgets every change and reinsertion: a save wrote them, or a rollback dropped them.
    mutating func removeAll() { self = TrackedChanges() }

    /// Traps unless every tracked and reinserted identifier is a saved one
    /// (permanent): unsaved models are pending inserts, not changes.
    /// - Complexity: O(changes + reinsertions)
    func _checkInvariants() {
        precondition(identifiers.allSatisfy { !$0.isTemporary }, "an unsaved model is tracked as changed")
        precondition(reinsertions.allSatisfy { !$0.old.isTemporary }, "a reinsertion names an unsaved identifier")
    }
}
