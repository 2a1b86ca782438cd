#if !canImport(Darwin)
import Foundation

/// Foundation's `UndoManager`, which Linux Foundation lacks: the part SwiftData
/// uses (a context's `undoManager`) and apps call, under the same name, so code
/// written for Apple platforms compiles unchanged.
///
/// Actions are registered in groups; `undo()` runs the last group's actions in
/// reverse order, and whatever they register while undoing becomes the group
/// `redo()` runs. With `groupsByEvent` (the default) a registration outside any
/// group opens one, and it stays open until the end of the "event": there is
/// no run loop to end it here, so `ModelContext.processPendingChanges()` and
/// `save()` end it. `undo()` ends any open top-level group first, as Foundation's
/// does. Nested groups are merged into the group around them. Without
/// `groupsByEvent` a registration outside a group still opens one (Foundation
/// would raise), which stays open until `endUndoGrouping()` or `undo()`.
///
/// Not thread-safe, like Foundation's: use it where its context lives.
open class UndoManager {
    private struct Action {
        let run: () -> Void
        /// The registration's target, for `removeAllActions(withTarget:)`.
        weak var target: AnyObject?
    }

    private final class Group {
        var actions: [Action] = []
        var name = ""
    }

    private var undoStack: [Group] = []
    private var redoStack: [Group] = []
    /// Open groups, outermost first.
    private var open: [Group] = []
    /// Whether the outermost open group was opened by a registration (`groupsByEvent`).
    private var eventGroupOpen = false
    private var registrationDisabled = 0

    /// Whether a registration outside any group opens one (the "event" group).
    open var groupsByEvent = true
    /// The most groups `undo()` can go back; 0 means no limit.
    open var levelsOfUndo = 0 {
        didSet { trim() }
    }

    /// Whether `undo()` is running its actions; their registrations go to the redo stack.
    public private(set) var isUndoing = false
    /// Whether `redo()` is running its actions; their registrations go to the undo stack
    /// without clearing the redo stack.
    public private(set) var isRedoing = false

    /// Creates an undo manager with empty stacks that groups by event.
    public init() {}

    // MARK: Registering

    /// Records `handler` to run with `target` when the current group is undone
    /// (or, while undoing, redone). Registering outside an undo or redo clears
    /// the redo stack.
    /// - Complexity: O(1) amortized
    open func registerUndo<TargetType: AnyObject>(withTarget target: TargetType, handler: @escaping (TargetType) -> Void) {
        guard isUndoRegistrationEnabled else { return }
        if !isUndoing && !isRedoing { redoStack.removeAll() }
        if open.isEmpty {
            // Foundation requires an open group without `groupsByEvent`; here one is
            // opened either way, and only the event group ends with the event.
            beginUndoGrouping()
            eventGroupOpen = groupsByEvent
        }
        open[open.count - 1].actions.append(Action(run: { [weak target] in
            if let target { handler(target) }
        }, target: target))
    }

    /// Whether registrations are recorded (`disableUndoRegistration()` nests).
    open var isUndoRegistrationEnabled: Bool { registrationDisabled == 0 }

    /// Stops recording registrations until a matching `enableUndoRegistration()`; calls
    /// nest.
    open func disableUndoRegistration() { registrationDisabled += 1 }

    /// Balances one `disableUndoRegistration()`; calling it without one is a programming
    /// error and traps.
    open func enableUndoRegistration() {
        precondition(registrationDisabled > 0, "enableUndoRegistration() without disableUndoRegistration()")
        registrationDisabled -= 1
    }

    // MARK: Grouping

    /// The number of groups open, nested.
    open var groupingLevel: Int { open.count }

    /// Opens a group; registrations until the matching `endUndoGrouping()` undo together.
    open func beginUndoGrouping() {
        open.append(Group())
    }

    /// Closes the innermost group; a top-level group with actions goes on the undo
    /// stack (on the redo stack while undoing).
    open func endUndoGrouping() {
        precondition(!open.isEmpty, "endUndoGrouping() without beginUndoGrouping()")
        let group = open.removeLast()
        if open.isEmpty { eventGroupOpen = false }
        if let parent = open.last {
            parent.actions += group.actions
            if parent.name.isEmpty { parent.name = group.name }
            return
        }
        guard !group.actions.isEmpty else { return }
        if isUndoing {
            redoStack.append(group)
        } else {
            undoStack.append(group)
            trim()
        }
    }

    /// Ends the group a registration opened, if it is still the only one open: the
    /// end of the event that `groupsByEvent` waits for.
    func endEventGroup() {
        if eventGroupOpen, open.count == 1 { endUndoGrouping() }
    }

    // MARK: Undoing and redoing

    /// Whether there is a group to undo: one on the undo stack, or the open top-level
    /// group if it has actions.
    open var canUndo: Bool { !undoStack.isEmpty || (open.count == 1 && !open[0].actions.isEmpty) }
    /// Whether there is an undone group to redo.
    open var canRedo: Bool { !redoStack.isEmpty }

    /// Undoes the last group, ending an open top-level group first (as Foundation's
    /// does); inside a nested group it does nothing.
    open func undo() {
        if open.count == 1 { endUndoGrouping() }
        guard open.isEmpty else { return }
        guard let group = undoStack.popLast() else { return }
        isUndoing = true
        defer { isUndoing = false }
        beginUndoGrouping()
        open[0].name = group.name
        for action in group.actions.reversed() { action.run() }
        endUndoGrouping()
    }

    /// Redoes the last undone group; inside an open group it does nothing.
    open func redo() {
        guard open.isEmpty, let group = redoStack.popLast() else { return }
        isRedoing = true
        defer { isRedoing = false }
        beginUndoGrouping()
        open[0].name = group.name
        for action in group.actions.reversed() { action.run() }
        isRedoing = false
        endUndoGrouping()
    }

    /// Empties both stacks (and drops the open groups' actions).
    open func removeAllActions() {
        undoStack.removeAll()
        redoStack.removeAll()
        for group in open { group.actions.removeAll() }
    }

    /// Drops every action registered with `target`, and those whose target no
    /// longer exists; groups left empty are dropped too.
    open func removeAllActions(withTarget target: AnyObject) {
        func keep(_ group: Group) { group.actions.removeAll { $0.target === target || $0.target == nil } }
        (undoStack + redoStack + open).forEach(keep)
        undoStack.removeAll { $0.actions.isEmpty }
        redoStack.removeAll { $0.actions.isEmpty }
    }

    // MARK: Action names

    /// Names the group being built (or the last one registered).
    open func setActionName(_ actionName: String) {
        (open.last ?? undoStack.last)?.name = actionName
    }

    /// The name of the group `undo()` would undo, or an empty string.
    open var undoActionName: String { (open.count == 1 && !open[0].actions.isEmpty ? open[0] : undoStack.last)?.name ?? "" }
    /// The name of the group `redo()` would redo, or an empty string.
    open var redoActionName: String { redoStack.last?.name ?? "" }

    private func trim() {
        if levelsOfUndo > 0, undoStack.count > levelsOfUndo { undoStack.removeFirst(undoStack.count - levelsOfUndo) }
    }
}
#endif
