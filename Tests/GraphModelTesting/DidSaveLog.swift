import Foundation
import SwiftData

/// The identifiers of the `didSave` notifications a context posts, for tests of
/// what a save reports. (Here because both API test targets link this module.) The
/// notification is posted on the saving thread, inside `save()`, so nothing reads
/// these while they are written.
public final class DidSaveLog: @unchecked Sendable {
    public private(set) var inserted: [PersistentIdentifier] = []
    public private(set) var updated: [PersistentIdentifier] = []
    private var observer: (any NSObjectProtocol)?

    public init(_ context: ModelContext) {
        observer = NotificationCenter.default.addObserver(forName: ModelContext.didSave, object: context, queue: nil) { [self] note in
            inserted += note.userInfo?[ModelContext.NotificationKey.insertedIdentifiers.rawValue] as? [PersistentIdentifier] ?? []
            updated += note.userInfo?[ModelContext.NotificationKey.updatedIdentifiers.rawValue] as? [PersistentIdentifier] ?? []
        }
    }

    deinit {
        if let observer { NotificationCenter.default.removeObserver(observer) }
    }
}
