// Extra models for the relationship, uniqueness, context, actor and error suites,
// written exactly as SwiftData code on Apple platforms.
import SwiftData

// MARK: Inferred inverses (one relationship each way, no `inverse:`)

@Model
final class GPerson {
    var name: String
    var passport: GPassport?

    init(name: String) {
        self.name = name
    }
}

@Model
final class GPassport {
    var number: String
    var holder: GPerson?

    init(number: String) {
        self.number = number
    }
}

@Model
final class GLibrary {
    var name: String
    var shelves: [GShelf] = []

    init(name: String) {
        self.name = name
    }
}

@Model
final class GShelf {
    var label: String
    var library: GLibrary?

    init(label: String) {
        self.label = label
    }
}

// MARK: Many-to-many

@Model
final class GStudent {
    var name: String
    @Relationship(inverse: \GCourse.students) var courses: [GCourse] = []

    init(name: String) {
        self.name = name
    }
}

@Model
final class GCourse {
    var title: String
    var students: [GStudent] = []

    init(title: String) {
        self.title = title
    }
}

// MARK: Delete rules

@Model
final class GTeam {
    var name: String
    // Default delete rule: nullify.
    @Relationship(inverse: \GPlayer.team) var players: [GPlayer] = []

    init(name: String) {
        self.name = name
    }
}

@Model
final class GPlayer {
    var name: String
    var team: GTeam?

    init(name: String) {
        self.name = name
    }
}

@Model
final class GDepartment {
    var name: String
    @Relationship(deleteRule: .deny, inverse: \GEmployee.department) var employees: [GEmployee] = []

    init(name: String) {
        self.name = name
    }
}

@Model
final class GEmployee {
    var name: String
    var department: GDepartment?

    init(name: String) {
        self.name = name
    }
}

@Model
final class GFolder {
    var name: String
    @Relationship(deleteRule: .noAction, inverse: \GFile.folder) var files: [GFile] = []

    init(name: String) {
        self.name = name
    }
}

@Model
final class GFile {
    var name: String
    var folder: GFolder?

    init(name: String) {
        self.name = name
    }
}

// MARK: Relationship counts

@Model
final class GPlaylist {
    var name: String
    @Relationship(minimumModelCount: 1, maximumModelCount: 3, inverse: \GSong.playlist) var songs: [GSong] = []

    init(name: String) {
        self.name = name
    }
}

@Model
final class GSong {
    var title: String
    var playlist: GPlaylist?

    init(title: String) {
        self.title = title
    }
}

// MARK: Uniqueness

@Model
final class GDevice {
    @Attribute(.unique) var serial: String?
    var label: String

    init(serial: String?, label: String) {
        self.serial = serial
        self.label = label
    }
}

@Model
final class GKeyed {
    @Attribute(.unique) var key: Int
    var payload: String

    init(key: Int, payload: String) {
        self.key = key
        self.payload = payload
    }
}

// MARK: Concurrency

@Model
final class GEvent {
    var batch: Int
    var index: Int

    init(batch: Int, index: Int) {
        self.batch = batch
        self.index = index
    }
}

// MARK: Inferred many-to-many

@Model
final class GTag {
    var label: String
    var notes: [GNote] = []

    init(label: String) {
        self.label = label
    }
}

@Model
final class GNote {
    var text: String
    var tags: [GTag] = []

    init(text: String) {
        self.text = text
    }
}

// MARK: A cascade that reaches models with other owners

@Model
final class GFaculty {
    var name: String
    @Relationship(deleteRule: .cascade, inverse: \GSeminar.faculty) var seminars: [GSeminar] = []

    init(name: String) {
        self.name = name
    }
}

@Model
final class GSeminar {
    var title: String
    var faculty: GFaculty?
    @Relationship(inverse: \GAttendee.seminars) var attendees: [GAttendee] = []

    init(title: String) {
        self.title = title
    }
}

@Model
final class GAttendee {
    var name: String
    var seminars: [GSeminar] = []

    init(name: String) {
        self.name = name
    }
}

// MARK: A cascade whose rows other models reach without an inverse

@Model
final class GOwner {
    var name: String
    @Relationship(deleteRule: .cascade, inverse: \GPet.owner) var pets: [GPet] = []

    init(name: String) {
        self.name = name
    }
}

@Model
final class GPet {
    var name: String
    var owner: GOwner?

    init(name: String) {
        self.name = name
    }
}

/// Sees pets without an inverse, under a count rule: validating a changed vet reads them.
@Model
final class GVet {
    var name: String
    @Relationship(maximumModelCount: 5) var patients: [GPet] = []

    init(name: String) {
        self.name = name
    }
}
