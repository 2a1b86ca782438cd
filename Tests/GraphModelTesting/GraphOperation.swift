import Foundation

/// One step of a model-based run. Each names its models by `uid` and is skipped
/// (by the real system and the reference alike) when one of them does not exist, so
/// any subsequence of a run is a run: what shrinking needs.
enum GraphOperation: CustomStringConvertible {
    enum Entity: CaseIterable { case author, book, club, profile, note }

    case insertAuthor(Int)
    case insertBook(Int, author: Int?)
    case insertClub(Int)
    case insertProfile(Int, owner: Int?)
    case insertNote(Int)
    /// A new value for the name-like attribute of `uid` (name, title, bio, text).
    case rename(Entity, Int, String)
    case setScore(author: Int, Double?)
    case setTags(author: Int, [String])
    case setBookDetails(book: Int, kind: MBKind, published: Date?)
    case setPhoto(profile: Int, Data)
    /// From the to-one side: `book.author = author`.
    case setBookAuthor(book: Int, author: Int?)
    /// From the to-many side: `author.books.append(book)`.
    case appendBook(author: Int, book: Int)
    /// From the to-many side: `author.books.remove(at:)`.
    case removeBook(author: Int, book: Int)
    /// Many-to-many, from the author's side or the club's.
    case join(author: Int, club: Int, fromAuthor: Bool)
    case leave(author: Int, club: Int, fromAuthor: Bool)
    /// A whole new array on either side.
    case replaceMembers(club: Int, [Int])
    case replaceClubs(author: Int, [Int])
    /// One-to-one, from either side.
    case setProfile(author: Int, profile: Int?)
    case setOwner(profile: Int, author: Int?)
    case delete(Entity, Int)
    /// Saves, inserts a new author with an existing key (an upsert), saves.
    case upsertAuthor(Int, name: String)
    /// Saves, inserts a new book with an existing key under an author (a feed
    /// reloaded under a stored owner), saves: the author lists the book once.
    case upsertBook(Int, author: Int?, title: String)
    /// A fetch with `propertiesToFetch` (and prefetching), an edit of one property.
    case partialEdit(author: Int, name: String)
    case save
    case rollback
    /// Undoes the previous operation (run only right after one that changed the graph).
    case undo
    /// Redoes what the undo right before it undid (run only then).
    case redo
    /// Runs the operation in `transaction {}` and throws: all unsaved changes roll back.
    indirect case failedTransaction(GraphOperation)
    /// Saves, then renames in another context, which saves.
    case otherContextRename(author: Int, String)
    /// Saves; under `failOnConflict` the working context renames while another context
    /// renames and saves first: the save is refused and changes nothing, and after a
    /// rollback and a fresh read the rename goes through.
    case staleRename(author: Int, mine: String, theirs: String)
    /// Saves, then links through a `@ModelActor`, which saves.
    case actorJoin(author: Int, club: Int)
    /// Saves, then closes the container and opens the document again (document store).
    case reopen
    /// Compacts the document (unsaved changes stay unsaved).
    case compact
    /// Saves, closes the container, opens the graph's document with a container of
    /// the smaller schema (no notes), renames the author there, saves and compacts,
    /// then opens the whole container again: notes are kept, untouched (#39, point 3).
    case reopenSmaller(author: Int, String)

    var description: String {
        switch self {
        case let .insertAuthor(uid): "insertAuthor(\(uid))"
        case let .insertBook(uid, author): "insertBook(\(uid), author: \(author.map(String.init) ?? "nil"))"
        case let .insertClub(uid): "insertClub(\(uid))"
        case let .insertProfile(uid, owner): "insertProfile(\(uid), owner: \(owner.map(String.init) ?? "nil"))"
        case let .insertNote(uid): "insertNote(\(uid))"
        case let .rename(entity, uid, name): "rename(.\(entity), \(uid), \"\(name)\")"
        case let .setScore(author, score): "setScore(author: \(author), \(score.map { "\($0)" } ?? "nil"))"
        case let .setTags(author, tags): "setTags(author: \(author), \(tags))"
        case let .setBookDetails(book, kind, published):
            "setBookDetails(book: \(book), kind: .\(kind), published: \(published.map { "\($0.timeIntervalSince1970)" } ?? "nil"))"
        case let .setPhoto(profile, data): "setPhoto(profile: \(profile), \(data.count) bytes)"
        case let .setBookAuthor(book, author): "setBookAuthor(book: \(book), author: \(author.map(String.init) ?? "nil"))"
        case let .appendBook(author, book): "appendBook(author: \(author), book: \(book))"
        case let .removeBook(author, book): "removeBook(author: \(author), book: \(book))"
        case let .join(author, club, fromAuthor): "join(author: \(author), club: \(club), fromAuthor: \(fromAuthor))"
        case let .leave(author, club, fromAuthor): "leave(author: \(author), club: \(club), fromAuthor: \(fromAuthor))"
        case let .replaceMembers(club, members): "replaceMembers(club: \(club), \(members))"
        case let .replaceClubs(author, clubs): "replaceClubs(author: \(author), \(clubs))"
        case let .setProfile(author, profile): "setProfile(author: \(author), profile: \(profile.map(String.init) ?? "nil"))"
        case let .setOwner(profile, author): "setOwner(profile: \(profile), author: \(author.map(String.init) ?? "nil"))"
        case let .delete(entity, uid): "delete(.\(entity), \(uid))"
        case let .upsertAuthor(uid, name): "upsertAuthor(\(uid), name: \"\(name)\")"
        case let .upsertBook(uid, author, title):
            "upsertBook(\(uid), author: \(author.map(String.init) ?? "nil"), title: \"\(title)\")"
        case let .partialEdit(author, name): "partialEdit(author: \(author), name: \"\(name)\")"
        case .save: "save"
        case .rollback: "rollback"
        case .undo: "undo"
        case .redo: "redo"
        case let .failedTransaction(operation): "failedTransaction(\(operation))"
        case let .otherContextRename(author, name): "otherContextRename(author: \(author), \"\(name)\")"
        case let .staleRename(author, mine, theirs): "staleRename(author: \(author), mine: \"\(mine)\", theirs: \"\(theirs)\")"
        case let .actorJoin(author, club): "actorJoin(author: \(author), club: \(club))"
        case .reopen: "reopen"
        case .compact: "compact"
        case let .reopenSmaller(author, name): "reopenSmaller(author: \(author), \"\(name)\")"
        }
    }
}

/// Makes random operation sequences over a small id space, so that operations
/// often meet the same models.
struct GraphOperationGenerator {
    /// (SplitMix64): a run is replayed from its seed.
    var random: QSplitMix64
    /// Whether the store survives a reopen and can compact (the document store).
    let persists: Bool
    private var nextUID = 1
    private var nextName = 1

    init(seed: UInt64, persists: Bool) {
        random = QSplitMix64(seed: seed)
        self.persists = persists
    }

    /// The ids made for each entity (some deleted since): most picks come from the
    /// right entity's, so most operations meet a model.
    private var made: [GraphOperation.Entity: [Int]] = [:]

    private mutating func uid(_ entity: GraphOperation.Entity) -> Int {
        if let list = made[entity], !list.isEmpty, Int.random(in: 0..<10, using: &random) < 9 {
            // Recent models more often: they are the likelier to be alive.
            let window = min(list.count, 12)
            return list[list.count - 1 - Int.random(in: 0..<window, using: &random)]
        }
        return Int.random(in: 1...max(1, nextUID - 1), using: &random)
    }
    private mutating func maybeUID(_ entity: GraphOperation.Entity) -> Int? {
        Bool.random(using: &random) ? uid(entity) : nil
    }
    private mutating func entity() -> GraphOperation.Entity { GraphOperation.Entity.allCases.randomElement(using: &random)! }
    private mutating func name() -> String {
        defer { nextName += 1 }
        return "n\(nextName)"
    }
    private mutating func fresh(_ entity: GraphOperation.Entity) -> Int {
        defer { nextUID += 1 }
        made[entity, default: []].append(nextUID)
        return nextUID
    }

    /// Whether the last operation made was an undo: half the time a redo follows.
    private var undid = false

    mutating func next() -> GraphOperation {
        let operation = make()
        if case .undo = operation { undid = true } else { undid = false }
        return operation
    }

    private mutating func make() -> GraphOperation {
        if undid, Bool.random(using: &random) { return .redo }
        let roll = Int.random(in: 0..<100, using: &random)
        switch roll {
        case 0..<6: return .insertAuthor(fresh(.author))
        case 6..<11: return .insertBook(fresh(.book), author: maybeUID(.author))
        case 11..<14: return .insertClub(fresh(.club))
        case 14..<17: return .insertProfile(fresh(.profile), owner: maybeUID(.author))
        case 17..<23:
            let entity = entity()
            return .rename(entity, uid(entity), name())
        case 23..<25: return .setScore(author: uid(.author), Bool.random(using: &random) ? Double(Int.random(in: 0...99, using: &random)) / 4 : nil)
        case 25..<27: return .setTags(author: uid(.author), (0..<Int.random(in: 0...3, using: &random)).map { _ in name() })
        case 27..<29:
            return .setBookDetails(
                book: uid(.book), kind: MBKind.allCases.randomElement(using: &random)!,
                published: Bool.random(using: &random) ? Date(timeIntervalSince1970: Double(Int.random(in: 0...1_000_000, using: &random))) : nil)
        case 29..<30: return .setPhoto(profile: uid(.profile), Data(repeating: UInt8.random(in: 0...255, using: &random), count: Int.random(in: 0...9000, using: &random)))
        case 30..<35: return .setBookAuthor(book: uid(.book), author: maybeUID(.author))
        case 35..<39: return .appendBook(author: uid(.author), book: uid(.book))
        case 39..<42: return .removeBook(author: uid(.author), book: uid(.book))
        case 42..<49: return .join(author: uid(.author), club: uid(.club), fromAuthor: Bool.random(using: &random))
        case 49..<54: return .leave(author: uid(.author), club: uid(.club), fromAuthor: Bool.random(using: &random))
        case 54..<56: return .replaceMembers(club: uid(.club), (0..<Int.random(in: 0...3, using: &random)).map { _ in uid(.author) })
        case 56..<58: return .replaceClubs(author: uid(.author), (0..<Int.random(in: 0...3, using: &random)).map { _ in uid(.club) })
        case 58..<61: return .setProfile(author: uid(.author), profile: maybeUID(.profile))
        case 61..<63: return .setOwner(profile: uid(.profile), author: maybeUID(.author))
        case 63..<68:
            let entity = entity()
            return .delete(entity, uid(entity))
        case 68..<69: return .upsertAuthor(uid(.author), name: name())
        case 69..<70: return .upsertBook(uid(.book), author: maybeUID(.author), title: name())
        case 70..<73: return .partialEdit(author: uid(.author), name: name())
        case 73..<81: return .save
        case 81..<83: return .insertNote(fresh(.note))
        case 83..<85: return .rollback
        case 85..<88: return .undo
        case 88..<90:
            let inner: GraphOperation = Bool.random(using: &random)
                ? .rename(.author, uid(.author), name()) : .join(author: uid(.author), club: uid(.club), fromAuthor: true)
            return .failedTransaction(inner)
        case 90..<92: return .otherContextRename(author: uid(.author), name())
        case 92..<93: return .staleRename(author: uid(.author), mine: name(), theirs: name())
        case 93..<95: return .actorJoin(author: uid(.author), club: uid(.club))
        case 95..<97: return persists ? .reopen : .save
        case 97..<98: return persists ? .reopenSmaller(author: uid(.author), name()) : .save
        default: return persists ? .compact : .save
        }
    }
}
