// Apple's seed samples, written exactly as SwiftData code on Apple platforms.
import SwiftData

@Model
final class Trip {
    @Attribute(.unique) var name: String
    var destination: String
    var startDate: Date
    var endDate: Date
    var isFavorite: Bool = false
    var price: Double = 0
    var notes: String?
    @Relationship(deleteRule: .cascade, inverse: \BucketListItem.trip)
    var bucketList: [BucketListItem] = []
    @Relationship(deleteRule: .cascade)
    var livingAccommodation: LivingAccommodation?
    @Transient var isSelected: Bool = false

    init(name: String, destination: String, startDate: Date = .now, endDate: Date = .now) {
        self.name = name
        self.destination = destination
        self.startDate = startDate
        self.endDate = endDate
    }
}

@Model
final class BucketListItem {
    var title: String
    var details: String
    var isInPlan: Bool
    var trip: Trip?

    init(title: String, details: String = "", isInPlan: Bool = false) {
        self.title = title
        self.details = details
        self.isInPlan = isInPlan
    }
}

@Model
final class LivingAccommodation {
    var address: String
    var placeName: String
    var trip: Trip?

    init(address: String, placeName: String) {
        self.address = address
        self.placeName = placeName
    }
}

extension Animal {
    enum Diet: String, CaseIterable, Codable {
        case herbivorous = "Herbivore"
        case carnivorous = "Carnivore"
        case omnivorous = "Omnivore"
    }
}

@Model
final class Animal {
    var name: String
    var diet: Diet
    var category: AnimalCategory?

    init(name: String, diet: Diet) {
        self.name = name
        self.diet = diet
    }
}

@Model
final class AnimalCategory {
    @Attribute(.unique) var name: String
    // `.cascade` tells SwiftData to delete all animals contained in the
    // category when deleting it.
    @Relationship(deleteRule: .cascade, inverse: \Animal.category)
    var animals = [Animal]()

    init(name: String) {
        self.name = name
    }
}

@Model
class RemoteImage {
    @Attribute(.unique) var sourceURL: URL
    @Relationship(inverse: \Category.images) var category: Category?
    var data: Data

    init(sourceURL: URL, data: Data = Data()) {
        self.sourceURL = sourceURL
        self.data = data
    }
}

@Model
class Category {
    @Attribute(.unique) var name: String
    @Relationship var images = [RemoteImage]()

    init(name: String) {
        self.name = name
    }
}

enum Genre: Codable, Equatable {
    case fiction
    case nonFiction
    case technical(field: String)
}

@Model
class Book {
    #Unique<Book>([\.isbn], [\.title, \.author])
    var isbn: String
    var title: String
    var author: String
    var pageCount: Int
    var genre: Genre
    var dateAdded: Date
    var writer: Author?

    init(isbn: String, title: String, author: String, pageCount: Int, genre: Genre = .fiction, dateAdded: Date = .now) {
        self.isbn = isbn
        self.title = title
        self.author = author
        self.pageCount = pageCount
        self.genre = genre
        self.dateAdded = dateAdded
    }
}

@Model
class Author {
    var name: String
    @Relationship(inverse: \Book.writer) var books: [Book] = []

    init(name: String) {
        self.name = name
    }
}
