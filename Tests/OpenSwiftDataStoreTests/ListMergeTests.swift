import OpenSwiftDataStore
import Testing

/// `mergedList(read:mine:stored:)`, the one to-many merge every store uses.
@Suite struct ListMergeTests {
    @Test func aListStoredAsReadTakesTheSaversListReorderIncluded() {
        #expect(mergedList(read: [1, 2, 3], mine: [3, 1, 4], stored: [1, 2, 3]) == [3, 1, 4])
    }

    @Test func anotherWritersChangesStayBesideTheSaversOwn() {
        // Another writer added 5 and removed 1; the saver added 4 and removed 2.
        #expect(mergedList(read: [1, 2, 3], mine: [1, 3, 4], stored: [2, 3, 5]) == [3, 5, 4])
        // Both added the same row: listed once.
        #expect(mergedList(read: [1], mine: [1, 2], stored: [1, 2]) == [1, 2])
        // The saver removed a row the other writer had removed too.
        #expect(mergedList(read: [1, 2], mine: [1], stored: [1, 3]) == [1, 3])
    }

    @Test func theEngineAppliesAListChangeTheSameWay() {
        let change = ChangeSet.ListChange(from: .references([RowID(1), RowID(2)]), to: .references([RowID(2), RowID(4)]))
        #expect(change.applied(to: .references([RowID(1), RowID(2), RowID(3)])) == .references([RowID(2), RowID(3), RowID(4)]))
        #expect(change.applied(to: .references([RowID(1), RowID(2)])) == .references([RowID(2), RowID(4)]))
    }
}
