import Foundation
import SwiftData
import Testing

/// The `UndoManager` our module provides where Linux Foundation has none.
@Suite struct UndoManagerTests {
    /// A value whose changes register their own undo, as a document's model would.
    private final class Counter {
        let undoManager: UndoManager
        private(set) var value = 0

        init(_ undoManager: UndoManager) { self.undoManager = undoManager }

        func set(_ newValue: Int) {
            let old = value
            undoManager.registerUndo(withTarget: self) { $0.set(old) }
            value = newValue
        }
    }

    @Test func undoAndRedoRunTheLastGroupEachWay() {
        let manager = UndoManager()
        let counter = Counter(manager)
        #expect(!manager.canUndo && !manager.canRedo)
        counter.set(1)
        counter.set(2)
        manager.endUndoGrouping()
        counter.set(3)
        #expect(manager.canUndo)
        manager.undo()
        #expect(counter.value == 2)
        #expect(manager.canRedo)
        manager.undo()
        #expect(counter.value == 0, "the first group held both changes")
        #expect(!manager.canUndo)
        manager.redo()
        #expect(counter.value == 2)
        manager.redo()
        #expect(counter.value == 3)
        #expect(!manager.canRedo)
    }

    @Test func aNewChangeClearsRedoAndNestedGroupsMerge() {
        let manager = UndoManager()
        manager.groupsByEvent = false
        let counter = Counter(manager)
        manager.beginUndoGrouping()
        counter.set(1)
        manager.beginUndoGrouping()
        counter.set(2)
        manager.endUndoGrouping()
        #expect(manager.groupingLevel == 1)
        manager.setActionName("Count")
        manager.endUndoGrouping()
        #expect(manager.undoActionName == "Count")
        manager.undo()
        #expect(counter.value == 0)
        #expect(manager.redoActionName == "Count")
        manager.beginUndoGrouping()
        counter.set(5)
        manager.endUndoGrouping()
        #expect(!manager.canRedo)
    }

    @Test func levelsRegistrationSwitchAndRemoval() {
        let manager = UndoManager()
        manager.levelsOfUndo = 2
        let counter = Counter(manager)
        for n in 1...4 {
            counter.set(n)
            manager.endUndoGrouping()
        }
        manager.undo()
        manager.undo()
        #expect(!manager.canUndo)
        #expect(counter.value == 2)

        manager.disableUndoRegistration()
        #expect(!manager.isUndoRegistrationEnabled)
        counter.set(9)
        manager.enableUndoRegistration()
        #expect(!manager.canUndo)

        counter.set(10)
        manager.endUndoGrouping()
        manager.removeAllActions(withTarget: counter)
        #expect(!manager.canUndo)
        counter.set(11)
        manager.removeAllActions()
        #expect(!manager.canUndo && !manager.canRedo)
    }

    @Test func undoAndRedoSayWhatTheyAreDoing() {
        let manager = UndoManager()
        final class Probe {
            var seen: [(Bool, Bool)] = []
        }
        let probe = Probe()
        manager.registerUndo(withTarget: probe) { probe in
            probe.seen.append((manager.isUndoing, manager.isRedoing))
            manager.registerUndo(withTarget: probe) { probe in probe.seen.append((manager.isUndoing, manager.isRedoing)) }
        }
        manager.undo()
        manager.redo()
        #expect(probe.seen.map(\.0) == [true, false])
        #expect(probe.seen.map(\.1) == [false, true])
        #expect(!manager.isUndoing && !manager.isRedoing)
    }

    @Test func withoutGroupsByEventARegistrationsGroupStaysOpen() {
        let manager = UndoManager()
        manager.groupsByEvent = false
        let counter = Counter(manager)
        counter.set(1)
        counter.set(2)
        #expect(manager.groupingLevel == 1)
        manager.undo()
        #expect(counter.value == 0, "undo() ended the open group and undid both")
        #expect(manager.groupingLevel == 0)
    }

    @Test func undoInsideANestedGroupDoesNothing() {
        let manager = UndoManager()
        let counter = Counter(manager)
        counter.set(1)
        manager.endUndoGrouping()
        manager.beginUndoGrouping()
        manager.beginUndoGrouping()
        manager.undo()
        manager.redo()
        #expect(counter.value == 1)
        manager.endUndoGrouping()
        manager.endUndoGrouping()
        manager.undo()
        #expect(counter.value == 0)
    }
}
