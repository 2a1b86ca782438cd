extension ModelContext {
    /// Arranges a save after the current main-actor turn, coalescing changes.
    ///
    /// The main context autosaves on the main actor shortly after a change. Other
    /// contexts with `autosaveEnabled` save when `processPendingChanges()` runs:
    /// a context is not `Sendable`, so nothing may save it from another task.
    func scheduleAutosave() {
        guard autosaveEnabled, isMainContext, !autosaveScheduled, hasChanges else { return }
        autosaveScheduled = true
        let box = MainContextBox(context: self)
        Task { @MainActor in box.context.performAutosave() }
    }

    func performAutosave() {
        guard autosaveScheduled else { return }
        autosaveScheduled = false
        if hasChanges { try? save() }
    }
}

/// Carries the main context into a main-actor task; only the main actor uses it.
private struct MainContextBox: @unchecked Sendable {
    let context: ModelContext
}
