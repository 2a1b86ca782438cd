import Foundation

/// The object graph as the model-based test expects it: plain dictionaries of values
/// and sorted lists of related ids, keyed by each model's `uid`. Written only for the
/// test, from SwiftData's documented rules (delete rules, inverses, upsert), with no
/// engine code: the real container must end in exactly this state.
///
/// Lists are sorted arrays, not sets, so that a to-many holding one model twice shows
/// as a difference.
struct ReferenceGraph: Equatable, CustomStringConvertible {
    struct Author: Equatable {
        var name: String
        var score: Double?
        var tags: [String]
        var profile: Int?
        var books: [Int] = []
        var clubs: [Int] = []
    }

    struct Book: Equatable {
        var title: String
        var kind: String
        var published: Date?
        var author: Int?
    }

    struct Club: Equatable {
        var name: String
        var members: [Int] = []
    }

    struct Profile: Equatable {
        var bio: String
        var photo: Data
        var owner: Int?
    }

    var authors: [Int: Author] = [:]
    var books: [Int: Book] = [:]
    var clubs: [Int: Club] = [:]
    var profiles: [Int: Profile] = [:]
    /// Notes by uid: their text (no relationships).
    var notes: [Int: String] = [:]

    // MARK: Links, both sides at once

    /// Sets book `book`'s author (nil unlinks), as either side's edit does.
    mutating func setAuthor(ofBook book: Int, to author: Int?) {
        if let old = books[book]?.author { authors[old]?.books.removeAll { $0 == book } }
        books[book]?.author = author
        if let author, let books = authors[author]?.books { authors[author]?.books = (books + [book]).sortedUnique }
    }

    mutating func link(author: Int, club: Int) {
        if let list = authors[author]?.clubs { authors[author]?.clubs = (list + [club]).sortedUnique }
        if let list = clubs[club]?.members { clubs[club]?.members = (list + [author]).sortedUnique }
    }

    mutating func unlink(author: Int, club: Int) {
        authors[author]?.clubs.removeAll { $0 == club }
        clubs[club]?.members.removeAll { $0 == author }
    }

    /// A one-to-one: the author's old profile and the profile's old owner lose their link.
    mutating func setProfile(ofAuthor author: Int, to profile: Int?) {
        if let old = authors[author]?.profile { profiles[old]?.owner = nil }
        if let profile, let previousOwner = profiles[profile]?.owner { authors[previousOwner]?.profile = nil }
        authors[author]?.profile = profile
        if let profile { profiles[profile]?.owner = author }
    }

    // MARK: Deletes, with the schema's rules

    /// Deletes author `uid`: its books and profile cascade, its clubs nullify.
    mutating func deleteAuthor(_ uid: Int) {
        guard let author = authors.removeValue(forKey: uid) else { return }
        for book in author.books { deleteBook(book) }
        if let profile = author.profile { deleteProfile(profile) }
        for club in author.clubs { clubs[club]?.members.removeAll { $0 == uid } }
    }

    mutating func deleteBook(_ uid: Int) {
        guard let book = books.removeValue(forKey: uid) else { return }
        if let author = book.author { authors[author]?.books.removeAll { $0 == uid } }
    }

    mutating func deleteClub(_ uid: Int) {
        guard let club = clubs.removeValue(forKey: uid) else { return }
        for author in club.members { authors[author]?.clubs.removeAll { $0 == uid } }
    }

    mutating func deleteProfile(_ uid: Int) {
        guard let profile = profiles.removeValue(forKey: uid) else { return }
        if let owner = profile.owner { authors[owner]?.profile = nil }
    }

    // MARK: Comparing

    /// The first difference from `other` (what the container holds), in words.
    func difference(from other: ReferenceGraph) -> String? {
        func diff<Value: Equatable>(_ name: String, _ expected: [Int: Value], _ actual: [Int: Value]) -> String? {
            for uid in Set(expected.keys).union(actual.keys).sorted() where expected[uid] != actual[uid] {
                return "\(name) \(uid): expected \(expected[uid].map { "\($0)" } ?? "none"), found \(actual[uid].map { "\($0)" } ?? "none")"
            }
            return nil
        }
        return diff("author", authors, other.authors) ?? diff("book", books, other.books)
            ?? diff("club", clubs, other.clubs) ?? diff("profile", profiles, other.profiles) ?? diff("note", notes, other.notes)
    }

    var description: String {
        "\(authors.count) authors, \(books.count) books, \(clubs.count) clubs, \(profiles.count) profiles, \(notes.count) notes"
    }
}

extension Array where Element == Int {
    var sortedUnique: [Int] { Array(Set(self)).sorted() }
}
