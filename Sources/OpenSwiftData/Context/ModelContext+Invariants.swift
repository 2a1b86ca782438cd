import Foundation

extension ModelContext {
    /// Traps unless the context's state agrees with itself: each part keeps its own
    /// invariants (the registry with its pending inserts, the tracked changes, the
    /// pending deletes), and across them a changed model is registered, retained and
    /// not deleted, and a deleted model the registry has is marked deleted and retained.
    ///
    /// For tests, which call it after every operation of a random run
    /// (swift-collections' `_checkInvariants()` convention); never called by the
    /// library itself.
    /// - Complexity: O(registered models + changes + deletes)
    func _checkInvariants() {
        registry._checkInvariants()
        changed._checkInvariants()
        deletes._checkInvariants()
        for id in changed {
            precondition(!deletes.contains(id), "\(id) is both changed and deleted")
            precondition(registry[id] != nil && registry.isRetained(id), "changed \(id) is not a retained, registered model")
        }
        for id in deletes.identifiers {
            guard let model = registry[id] else { continue }
            precondition(model.modelBacking.isDeleted, "deleted \(id) does not know it is deleted")
            precondition(registry.isRetained(id), "deleted \(id) is not retained until the save")
        }
    }
}
