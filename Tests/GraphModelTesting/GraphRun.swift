import Foundation
@testable import OpenSwiftData
import OpenSwiftDataStore
import SwiftData

/// Runs operations against a real container and the reference graph side by side,
/// and compares the two whole graphs after every save, reopen and compaction.
final class GraphRun {
    struct Failure: Error, CustomStringConvertible {
        /// The index of the operation after which the graphs differed.
        let step: Int
        let message: String
        var description: String { "after step \(step): \(message)" }
    }

    private let store: GraphStore
    private let place: GraphStore.Place
    private var container: ModelContainer
    private var context: ModelContext
    /// What the store holds (as of the last save).
    private var committed = ReferenceGraph()
    /// What the working context holds, saved or not.
    private var pending = ReferenceGraph()
    /// `pending` before the previous operation, when that operation changed it (what
    /// an undo returns to); nil when an undo could reach further back.
    private var beforeLast: ReferenceGraph?
    /// `pending` before the last operation when that was an undo that changed it
    /// (what a redo returns to).
    private var redoTarget: ReferenceGraph?
    private(set) var operationsRun = 0

    private let holdsModels: Bool

    init(store: GraphStore, folder: URL, holdsModels: Bool) throws {
        self.store = store
        self.holdsModels = holdsModels
        place = try store.makePlace(folder)
        container = try place.open()
        context = ModelContext(container)
        context.undoManager = UndoManager()
    }

    /// Runs `operations`, throwing the first difference (or error) as a `Failure`.
    func run(_ operations: [GraphOperation]) async throws {
        for (step, operation) in operations.enumerated() {
            do {
                try await apply(operation)
                operationsRun += 1
                // The working context's state agrees with itself after every operation.
                context._checkInvariants()
                if let difference = try check(after: operation) {
                    throw Failure(step: step, message: difference)
                }
            } catch let failure as Failure {
                throw failure
            } catch {
                throw Failure(step: step, message: "\(operation) threw \(error)")
            }
        }
        do {
            try save()
        } catch {
            throw Failure(step: operations.count, message: "final save threw \(error)")
        }
        if let difference = try compareStored() { throw Failure(step: operations.count, message: "final save: \(difference)") }
        if let problem = try documentGraphProblem() { throw Failure(step: operations.count, message: "document: \(problem)") }
    }

    /// What `osd verify` would find wrong with the saved relationship graph (both
    /// sides agree, no to-many lists a row twice), for the document store.
    private func documentGraphProblem() throws -> String? {
        guard let path = place.documentPath else { return nil }
        return try DocumentReader.read(path: path, blobs: .skip).version.relationshipProblems(limit: 1).first
    }

    // MARK: Checking

    private func check(after operation: GraphOperation) throws -> String? {
        switch operation {
        case .save, .upsertAuthor, .upsertBook, .otherContextRename, .staleRename, .actorJoin, .reopen, .compact, .reopenSmaller:
            if let difference = try compareStored() { return "stored graph: \(difference)" }
            if case .compact = operation, let problem = try documentGraphProblem() { return "document: \(problem)" }
            // Right after a save the working context shows what is stored.
            guard !context.hasChanges else { return nil }
            if let difference = pending.difference(from: try snapshot(of: context)) { return "working context: \(difference)" }
            return nil
        default:
            return nil
        }
    }

    /// The stored graph, read by a fresh context, against `committed`.
    private func compareStored() throws -> String? {
        committed.difference(from: try snapshot(of: ModelContext(container)))
    }

    /// The whole graph as `context` shows it, each side read on its own.
    private func snapshot(of context: ModelContext) throws -> ReferenceGraph {
        var graph = ReferenceGraph()
        for author in try context.fetch(FetchDescriptor<MBAuthor>()) {
            graph.authors[author.uid] = .init(
                name: author.name, score: author.score, tags: author.tags, profile: author.profile?.uid,
                books: author.books.map(\.uid).sorted(), clubs: author.clubs.map(\.uid).sorted())
        }
        for book in try context.fetch(FetchDescriptor<MBBook>()) {
            graph.books[book.uid] = .init(title: book.title, kind: book.kind.rawValue, published: book.published, author: book.author?.uid)
        }
        for club in try context.fetch(FetchDescriptor<MBClub>()) {
            graph.clubs[club.uid] = .init(name: club.name, members: club.members.map(\.uid).sorted())
        }
        for profile in try context.fetch(FetchDescriptor<MBProfile>()) {
            graph.profiles[profile.uid] = .init(bio: profile.bio, photo: profile.photo, owner: profile.owner?.uid)
        }
        for note in try context.fetch(FetchDescriptor<MBNote>()) { graph.notes[note.uid] = note.text }
        return graph
    }

    // MARK: Finding models

    // With `holdsModels`, the models found are kept across operations (saves,
    // rollbacks, other contexts' saves), as an app holds the models it shows; else
    // each operation fetches them anew. Only models the reference still has are asked
    // for, so a held model is never a deleted one.
    private var held: [Int: any PersistentModel] = [:]

    private func find<T: PersistentModel>(_ uid: Int, _ fetch: () throws -> T?) rethrows -> T? {
        if holdsModels, let model = held[uid] as? T { return model }
        let model = try fetch()
        if holdsModels { held[uid] = model }
        return model
    }

    private func author(_ uid: Int, in context: ModelContext? = nil) throws -> MBAuthor? {
        if let context { return try context.fetch(FetchDescriptor<MBAuthor>(predicate: #Predicate { $0.uid == uid })).first }
        return try find(uid) { try self.context.fetch(FetchDescriptor<MBAuthor>(predicate: #Predicate { $0.uid == uid })).first }
    }

    private func book(_ uid: Int) throws -> MBBook? {
        try find(uid) { try context.fetch(FetchDescriptor<MBBook>(predicate: #Predicate { $0.uid == uid })).first }
    }

    private func club(_ uid: Int) throws -> MBClub? {
        try find(uid) { try context.fetch(FetchDescriptor<MBClub>(predicate: #Predicate { $0.uid == uid })).first }
    }

    private func profile(_ uid: Int) throws -> MBProfile? {
        try find(uid) { try context.fetch(FetchDescriptor<MBProfile>(predicate: #Predicate { $0.uid == uid })).first }
    }

    private func note(_ uid: Int) throws -> MBNote? {
        try find(uid) { try context.fetch(FetchDescriptor<MBNote>(predicate: #Predicate { $0.uid == uid })).first }
    }

    // MARK: Applying

    private func save() throws {
        try context.save()
        committed = pending
        beforeLast = nil
    }

    private func apply(_ operation: GraphOperation) async throws {
        let before = pending
        // A redo is run only right after the undo it redoes.
        if case .redo = operation {} else if case .undo = operation {} else { redoTarget = nil }
        try await perform(operation)
        // The context's undo groups end with each event; the test's events are its
        // operations.
        context.processPendingChanges()
        switch operation {
        case .undo, .redo, .save, .rollback, .failedTransaction, .upsertAuthor, .upsertBook, .otherContextRename, .staleRename, .actorJoin, .reopen, .compact,
             .reopenSmaller:
            break
        default:
            beforeLast = pending == before ? nil : before
        }
    }

    private func perform(_ operation: GraphOperation) async throws {
        switch operation {
        case let .insertAuthor(uid):
            context.insert(MBAuthor(uid: uid, name: "a\(uid)"))
            pending.authors[uid] = .init(name: "a\(uid)", score: nil, tags: [])
        case let .insertBook(uid, authorID):
            let book = MBBook(uid: uid, title: "b\(uid)")
            context.insert(book)
            pending.books[uid] = .init(title: "b\(uid)", kind: MBKind.novel.rawValue, published: nil)
            if let authorID, pending.authors[authorID] != nil, let author = try author(authorID) {
                book.author = author
                pending.setAuthor(ofBook: uid, to: authorID)
            }
        case let .insertClub(uid):
            context.insert(MBClub(uid: uid, name: "c\(uid)"))
            pending.clubs[uid] = .init(name: "c\(uid)")
        case let .insertProfile(uid, ownerID):
            let profile = MBProfile(uid: uid, bio: "p\(uid)", photo: Data())
            context.insert(profile)
            pending.profiles[uid] = .init(bio: "p\(uid)", photo: Data())
            if let ownerID, pending.authors[ownerID] != nil, let owner = try author(ownerID) {
                profile.owner = owner
                pending.setProfile(ofAuthor: ownerID, to: uid)
            }
        case let .insertNote(uid):
            context.insert(MBNote(uid: uid, text: "t\(uid)"))
            pending.notes[uid] = "t\(uid)"
        case let .rename(entity, uid, name):
            switch entity {
            case .author:
                guard pending.authors[uid] != nil, let model = try author(uid) else { return }
                model.name = name
                pending.authors[uid]?.name = name
            case .book:
                guard pending.books[uid] != nil, let model = try book(uid) else { return }
                model.title = name
                pending.books[uid]?.title = name
            case .club:
                guard pending.clubs[uid] != nil, let model = try club(uid) else { return }
                model.name = name
                pending.clubs[uid]?.name = name
            case .profile:
                guard pending.profiles[uid] != nil, let model = try profile(uid) else { return }
                model.bio = name
                pending.profiles[uid]?.bio = name
            case .note:
                guard pending.notes[uid] != nil, let model = try note(uid) else { return }
                model.text = name
                pending.notes[uid] = name
            }
        case let .setScore(uid, score):
            guard pending.authors[uid] != nil, let model = try author(uid) else { return }
            model.score = score
            pending.authors[uid]?.score = score
        case let .setTags(uid, tags):
            guard pending.authors[uid] != nil, let model = try author(uid) else { return }
            model.tags = tags
            pending.authors[uid]?.tags = tags
        case let .setBookDetails(uid, kind, published):
            guard pending.books[uid] != nil, let model = try book(uid) else { return }
            model.kind = kind
            model.published = published
            pending.books[uid]?.kind = kind.rawValue
            pending.books[uid]?.published = published
        case let .setPhoto(uid, data):
            guard pending.profiles[uid] != nil, let model = try profile(uid) else { return }
            model.photo = data
            pending.profiles[uid]?.photo = data
        case let .setBookAuthor(bookID, authorID):
            guard pending.books[bookID] != nil, let book = try book(bookID) else { return }
            if let authorID {
                guard pending.authors[authorID] != nil, let author = try author(authorID) else { return }
                book.author = author
            } else {
                book.author = nil
            }
            pending.setAuthor(ofBook: bookID, to: authorID)
        case let .appendBook(authorID, bookID):
            guard pending.authors[authorID] != nil, pending.books[bookID] != nil,
                  let author = try author(authorID), let book = try book(bookID) else { return }
            author.books.append(book)
            pending.setAuthor(ofBook: bookID, to: authorID)
        case let .removeBook(authorID, bookID):
            guard pending.authors[authorID]?.books.contains(bookID) == true, let author = try author(authorID),
                  let index = author.books.firstIndex(where: { $0.uid == bookID }) else { return }
            author.books.remove(at: index)
            pending.setAuthor(ofBook: bookID, to: nil)
        case let .join(authorID, clubID, fromAuthor):
            guard pending.authors[authorID] != nil, pending.clubs[clubID] != nil,
                  let author = try author(authorID), let club = try club(clubID) else { return }
            if fromAuthor { author.clubs.append(club) } else { club.members.append(author) }
            pending.link(author: authorID, club: clubID)
        case let .leave(authorID, clubID, fromAuthor):
            guard pending.authors[authorID]?.clubs.contains(clubID) == true,
                  let author = try author(authorID), let club = try club(clubID) else { return }
            if fromAuthor {
                guard let index = author.clubs.firstIndex(where: { $0 === club }) else { return }
                author.clubs.remove(at: index)
            } else {
                club.members.removeAll { $0 === author }
            }
            pending.unlink(author: authorID, club: clubID)
        case let .replaceMembers(clubID, memberIDs):
            guard pending.clubs[clubID] != nil, let club = try club(clubID) else { return }
            let ids = memberIDs.filter { pending.authors[$0] != nil }.sortedUnique
            club.members = try ids.compactMap { try author($0) }
            for old in pending.clubs[clubID]!.members where !ids.contains(old) { pending.unlink(author: old, club: clubID) }
            for new in ids { pending.link(author: new, club: clubID) }
        case let .replaceClubs(authorID, clubIDs):
            guard pending.authors[authorID] != nil, let author = try author(authorID) else { return }
            let ids = clubIDs.filter { pending.clubs[$0] != nil }.sortedUnique
            author.clubs = try ids.compactMap { try club($0) }
            for old in pending.authors[authorID]!.clubs where !ids.contains(old) { pending.unlink(author: authorID, club: old) }
            for new in ids { pending.link(author: authorID, club: new) }
        case let .setProfile(authorID, profileID):
            guard pending.authors[authorID] != nil, let author = try author(authorID) else { return }
            if let profileID {
                guard pending.profiles[profileID] != nil, let profile = try profile(profileID) else { return }
                author.profile = profile
            } else {
                author.profile = nil
            }
            pending.setProfile(ofAuthor: authorID, to: profileID)
        case let .setOwner(profileID, authorID):
            guard pending.profiles[profileID] != nil, let profile = try profile(profileID) else { return }
            if let authorID {
                guard pending.authors[authorID] != nil, let author = try author(authorID) else { return }
                profile.owner = author
                pending.setProfile(ofAuthor: authorID, to: profileID)
            } else {
                profile.owner = nil
                if let owner = pending.profiles[profileID]?.owner { pending.setProfile(ofAuthor: owner, to: nil) }
            }
        case let .delete(entity, uid):
            switch entity {
            case .author:
                guard pending.authors[uid] != nil, let model = try author(uid) else { return }
                context.delete(model)
                pending.deleteAuthor(uid)
            case .book:
                guard pending.books[uid] != nil, let model = try book(uid) else { return }
                context.delete(model)
                pending.deleteBook(uid)
            case .club:
                guard pending.clubs[uid] != nil, let model = try club(uid) else { return }
                context.delete(model)
                pending.deleteClub(uid)
            case .profile:
                guard pending.profiles[uid] != nil, let model = try profile(uid) else { return }
                context.delete(model)
                pending.deleteProfile(uid)
            case .note:
                guard pending.notes[uid] != nil, let model = try note(uid) else { return }
                context.delete(model)
                pending.notes[uid] = nil
            }
        case let .upsertAuthor(uid, name):
            try save()
            // (Unique constraints are a store's to keep: the JSON store keeps none.)
            guard store.keepsUniqueConstraints, committed.authors[uid] != nil else { return }
            // A feed reloaded: the same key again. The inserted values replace the
            // stored ones; relationships it leaves empty keep the stored links.
            let replacement = MBAuthor(uid: uid, name: name)
            context.insert(replacement)
            // The inserted instance takes the stored model's place.
            if holdsModels { held[uid] = replacement }
            pending.authors[uid]?.name = name
            pending.authors[uid]?.score = nil
            pending.authors[uid]?.tags = []
            try save()
        case let .upsertBook(uid, authorID, title):
            try save()
            guard store.keepsUniqueConstraints, committed.books[uid] != nil else { return }
            let replacement = MBBook(uid: uid, title: title)
            context.insert(replacement)
            if holdsModels { held[uid] = replacement }
            pending.books[uid]?.title = title
            pending.books[uid]?.kind = MBKind.novel.rawValue
            pending.books[uid]?.published = nil
            // An author it names replaces the stored one; none keeps it.
            if let authorID, pending.authors[authorID] != nil, let author = try author(authorID) {
                replacement.author = author
                pending.setAuthor(ofBook: uid, to: authorID)
            }
            try save()
        case let .partialEdit(uid, name):
            guard pending.authors[uid] != nil else { return }
            var descriptor = FetchDescriptor<MBAuthor>(predicate: #Predicate { $0.uid == uid })
            descriptor.propertiesToFetch = [\.name]
            descriptor.relationshipKeyPathsForPrefetching = [\.books]
            guard let model = try context.fetch(descriptor).first else { return }
            model.name = name
            pending.authors[uid]?.name = name
        case .save:
            try save()
        case .rollback:
            context.rollback()
            pending = committed
            beforeLast = nil
        case .undo:
            guard let beforeLast else { return }
            context.undoManager?.undo()
            redoTarget = pending
            pending = beforeLast
            self.beforeLast = nil
        case .redo:
            guard let redoTarget else { return }
            context.undoManager?.redo()
            // An undo now would take the redone change back again.
            beforeLast = pending
            pending = redoTarget
            self.redoTarget = nil
        case let .failedTransaction(inner):
            struct Abandoned: Error {}
            do {
                try context.transaction {
                    // (Synchronous inside: the operations a transaction takes are.)
                    switch inner {
                    case let .rename(.author, uid, name):
                        if pending.authors[uid] != nil, let model = try author(uid) { model.name = name }
                    case let .join(authorID, clubID, _):
                        if pending.authors[authorID] != nil, pending.clubs[clubID] != nil,
                           let author = try author(authorID), let club = try club(clubID) {
                            author.clubs.append(club)
                        }
                    default:
                        break
                    }
                    throw Abandoned()
                }
            } catch is Abandoned {}
            // A transaction that throws rolls back every unsaved change.
            pending = committed
            beforeLast = nil
        case let .otherContextRename(uid, name):
            try save()
            let other = ModelContext(container)
            guard committed.authors[uid] != nil, let model = try author(uid, in: other) else { return }
            model.name = name
            try other.save()
            pending.authors[uid]?.name = name
            committed = pending
        case let .staleRename(uid, mine, theirs):
            try save()
            let other = ModelContext(container)
            guard let old = committed.authors[uid]?.name, mine != old, theirs != old, mine != theirs,
                  let model = try author(uid), let rival = try author(uid, in: other) else { return }
            context.conflictPolicy = .failOnConflict
            defer { context.conflictPolicy = .mergeByProperty }
            rival.name = theirs
            try other.save()
            pending.authors[uid]?.name = theirs
            committed = pending
            model.name = mine
            do {
                try context.save()
                throw Failure(step: 0, message: "a save of a model another context saved since went through under failOnConflict")
            } catch is SaveConflictError {}
            // The refused save wrote nothing.
            if let difference = try compareStored() { throw Failure(step: 0, message: "after a refused save: \(difference)") }
            context.rollback()
            beforeLast = nil
            // Read again (a fetch, even where the harness holds the model): the retry starts from what is stored.
            guard let again = try author(uid, in: context) else { throw Failure(step: 0, message: "the author went missing after a conflict") }
            again.name = mine
            try context.save()
            pending.authors[uid]?.name = mine
            committed = pending
        case let .actorJoin(authorID, clubID):
            try save()
            guard committed.authors[authorID] != nil, committed.clubs[clubID] != nil else { return }
            let writer = MBWriter(modelContainer: container)
            guard try await writer.join(author: authorID, club: clubID) else { return }
            pending.link(author: authorID, club: clubID)
            committed = pending
        case .reopen:
            guard store.persists else { return }
            try save()
            // The document's container goes first (it holds the document's lock).
            try close()
            container = try place.open()
            context = ModelContext(container)
            context.undoManager = UndoManager()
        case .compact:
            guard store.compacts else { return }
            try container.compactDocument()
        case let .reopenSmaller(uid, name):
            guard let openSmaller = place.openSmaller else { return }
            try save()
            try close()
            do {
                // The graph's document alone, by a container that knows no notes.
                let smaller = try openSmaller()
                let other = ModelContext(smaller)
                if committed.authors[uid] != nil, let model = try author(uid, in: other) {
                    model.name = name
                    try other.save()
                    pending.authors[uid]?.name = name
                    committed = pending
                }
                try smaller.compactDocument()
            }
            container = try place.open()
            context = ModelContext(container)
            context.undoManager = UndoManager()
        }
    }

    /// Releases the container (and its documents' locks), leaving a placeholder in memory.
    private func close() throws {
        let placeholder = try ModelContainer(for: modelBasedSchema, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        context = ModelContext(placeholder)
        container = placeholder
        held = [:]
    }
}
