import Foundation
import SwiftData

// The schema the model-based test drives: every relationship kind (to-one ↔ to-many,
// many-to-many, one-to-one), every delete rule it can check without a veto (cascade,
// nullify), and attributes of each storage kind (string, optional double, a Codable
// array, a Codable enum, an optional date, external storage). Each model carries a
// unique `uid`, which names it in the reference graph and makes inserts upserts.

enum MBKind: String, Codable, CaseIterable {
    case novel, essay, poem
}

@Model
final class MBAuthor {
    @Attribute(.unique) var uid: Int
    var name: String
    var score: Double?
    var tags: [String] = []
    @Relationship(deleteRule: .cascade, inverse: \MBProfile.owner) var profile: MBProfile?
    @Relationship(deleteRule: .cascade, inverse: \MBBook.author) var books: [MBBook] = []
    @Relationship(inverse: \MBClub.members) var clubs: [MBClub] = []

    init(uid: Int, name: String) {
        self.uid = uid
        self.name = name
    }
}

@Model
final class MBBook {
    @Attribute(.unique) var uid: Int
    var title: String
    var kind: MBKind = MBKind.novel
    var published: Date?
    var author: MBAuthor?

    init(uid: Int, title: String) {
        self.uid = uid
        self.title = title
    }
}

@Model
final class MBClub {
    @Attribute(.unique) var uid: Int
    var name: String
    var members: [MBAuthor] = []

    init(uid: Int, name: String) {
        self.uid = uid
        self.name = name
    }
}

@Model
final class MBProfile {
    @Attribute(.unique) var uid: Int
    var bio: String
    @Attribute(.externalStorage) var photo: Data
    var owner: MBAuthor?

    init(uid: Int, bio: String, photo: Data) {
        self.uid = uid
        self.bio = bio
        self.photo = photo
    }
}

/// A model with no relationship: the store variant with two files keeps it in a
/// file of its own, and a reopen with a smaller schema leaves it out.
@Model
final class MBNote {
    @Attribute(.unique) var uid: Int
    var text: String

    init(uid: Int, text: String) {
        self.uid = uid
        self.text = text
    }
}

/// The related models: what a container of the smaller schema knows.
public let modelBasedGraphSchema = Schema([MBAuthor.self, MBBook.self, MBClub.self, MBProfile.self])
public let modelBasedSchema = Schema([MBAuthor.self, MBBook.self, MBClub.self, MBProfile.self, MBNote.self])

/// Edits from a model actor, as an app's background work saves them.
@ModelActor
actor MBWriter {
    func rename(author uid: Int, to name: String) throws -> Bool {
        guard let author = try modelContext.fetch(FetchDescriptor<MBAuthor>(predicate: #Predicate { $0.uid == uid })).first
        else { return false }
        author.name = name
        try modelContext.save()
        return true
    }

    func join(author authorID: Int, club clubID: Int) throws -> Bool {
        guard let author = try modelContext.fetch(FetchDescriptor<MBAuthor>(predicate: #Predicate { $0.uid == authorID })).first,
              let club = try modelContext.fetch(FetchDescriptor<MBClub>(predicate: #Predicate { $0.uid == clubID })).first
        else { return false }
        club.members.append(author)
        try modelContext.save()
        return true
    }
}
