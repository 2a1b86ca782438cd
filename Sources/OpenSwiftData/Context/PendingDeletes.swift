import Foundation

/// A context's deletes since its last save, and how far their delete rules ran.
///
/// Core Data's order, which SwiftData keeps: `delete(_:)` marks a model; its delete
/// rules (cascade, nullify) run at the end of the event (`processPendingChanges()`,
/// `save()`, an undone insert), and may delete more. So the deletes are kept in
/// deletion order with a mark of how many have had their rules run, beside the
/// models inserted since the last save and deleted (which leave the registry at
/// once, so only their objects name them), and a record of what each cascade
/// deleted, which inserting its model again brings back.
///
/// Changed only through its methods, which keep `_checkInvariants()` true; the
/// look-ups a save makes per model are `@inline(__always)`.
struct PendingDeletes {
    /// Saved models and stored rows deleted since the last save, in deletion order.
    private(set) var identifiers: [PersistentIdentifier] = []
    /// `identifiers` as a set, for membership.
    private(set) var members: Set<PersistentIdentifier> = []
    /// How many of `identifiers`, from the start, have had their delete rules run.
    private(set) var propagatedCount = 0
    /// Models inserted since the last save and deleted since, whose delete rules have
    /// not run yet.
    private var insertsToPropagate: [any PersistentModel] = []
    /// Deleted models whose `cascade` rules deleted others, with those.
    private var cascades: [ObjectIdentifier: (model: any PersistentModel, cascaded: [any PersistentModel])] = [:]

    /// Whether no saved model or row is deleted (deleted inserts do not count: they
    /// change nothing stored).
    /// - Complexity: O(1)
    @inline(__always)
    var isEmpty: Bool { identifiers.isEmpty }

    /// How many saved models and rows are deleted.
    /// - Complexity: O(1)
    @inline(__always)
    var count: Int { identifiers.count }

    /// Whether the save deletes `id`.
    /// - Complexity: O(1) expected
    @inline(__always)
    func contains(_ id: PersistentIdentifier) -> Bool { !members.isEmpty && members.contains(id) }

    /// Whether some delete's rules have not run yet.
    /// - Complexity: O(1)
    @inline(__always)
    var hasUnpropagated: Bool { propagatedCount < identifiers.count || !insertsToPropagate.isEmpty }

    /// Whether a model inserted since the last save was deleted and its rules wait.
    /// - Complexity: O(1)
    @inline(__always)
    var hasDeletedInserts: Bool { !insertsToPropagate.isEmpty }

    /// The deleted models: those of saved deletes `registry` has (a row deleted as a
    /// row has none), and the deleted inserts whose rules wait and that were not
    /// inserted again since.
    /// - Complexity: O(deletes)
    func models(in registry: ModelRegistry) -> [any PersistentModel] {
        identifiers.compactMap { registry[$0] } + insertsToPropagate.filter { $0.modelBacking.isDeleted }
    }

    /// Adds a saved model's or row's delete; false when it was deleted already.
    /// - Complexity: O(1) amortized
    mutating func add(_ id: PersistentIdentifier) -> Bool {
        guard members.insert(id).inserted else { return false }
        identifiers.append(id)
        return true
    }

    /// Adds the delete of `model`, inserted since the last save: its rules run with
    /// the others'.
    /// - Complexity: O(1) amortized
    mutating func addInsert(_ model: any PersistentModel) { insertsToPropagate.append(model) }

    /// Takes a delete back (its model is inserted again); false when `id` was not deleted.
    /// - Complexity: O(deletes)
    @discardableResult
    mutating func remove(_ id: PersistentIdentifier) -> Bool {
        guard members.remove(id) != nil, let i = identifiers.firstIndex(of: id) else { return false }
        identifiers.remove(at: i)
        if i < propagatedCount { propagatedCount -= 1 }
        return true
    }

    /// The next saved delete whose rules have not run, marked as run.
    /// - Complexity: O(1)
    mutating func nextToPropagate() -> PersistentIdentifier? {
        guard propagatedCount < identifiers.count else { return nil }
        propagatedCount += 1
        return identifiers[propagatedCount - 1]
    }

    /// The last deleted insert whose rules have not run, taken off the list.
    /// - Complexity: O(1)
    mutating func nextInsertToPropagate() -> (any PersistentModel)? { insertsToPropagate.popLast() }

    /// Marks every saved delete's rules as run (a save's deletion closure covered them).
    /// - Complexity: O(1)
    mutating func markAllPropagated() { propagatedCount = identifiers.count }

    /// Records that `model`'s cascade deleted `cascaded`.
    /// - Complexity: O(cascaded) amortized
    mutating func recordCascade(of model: any PersistentModel, deleted cascaded: [any PersistentModel]) {
        guard !cascaded.isEmpty else { return }
        cascades[ObjectIdentifier(model), default: (model, [])].cascaded += cascaded
    }

    /// What `model`'s cascades deleted, forgotten here: `model` is inserted again.
    /// - Complexity: O(1) expected
    mutating func takeCascade(of model: any PersistentModel) -> [any PersistentModel] {
        cascades.removeValue(forKey: ObjectIdentifier(model))?.cascaded ?? []
    }

    /// Makes room for `count` more deletes.
    mutating func reserveCapacity(more count: Int) {
        members.reserveCapacity(members.count + count)
        identifiers.reserveCapacity(identifiers.count + count)
    }

    /// Forgets every delete: a save wrote them, or a rollback dropped them.
    /// - Complexity: O(deletes)
    mutating func removeAll() { self = PendingDeletes() }

    /// Traps unless the list and the set name the same deletes, once each, the
    /// propagation mark is within the list, and each cascade record is its model's.
    /// - Complexity: O(deletes + cascade records)
    func _checkInvariants() {
        precondition(identifiers.count == members.count, "a delete is listed twice, or the set and the list differ")
        precondition(identifiers.allSatisfy(members.contains), "a listed delete is missing from the set")
        precondition((0...identifiers.count).contains(propagatedCount), "the propagation mark is outside the list")
        for (key, record) in cascades {
            precondition(key == ObjectIdentifier(record.model), "a cascade record is filed under another model")
        }
    }
}
