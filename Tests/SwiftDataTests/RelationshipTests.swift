import SwiftData
import Testing

@Suite struct RelationshipTests {
    private func makeContainer(_ types: any PersistentModel.Type...) throws -> ModelContainer {
        try ModelContainer(for: Schema(types), configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    }

    // MARK: To-one and to-many

    @Test func toOneRelationshipIsStoredAndRead() throws {
        let container = try makeContainer(Trip.self)
        let context = ModelContext(container)
        let trip = Trip(name: "Rome", destination: "Italy")
        let stay = LivingAccommodation(address: "Via Roma 1", placeName: "Hotel Roma")
        trip.livingAccommodation = stay
        context.insert(trip)
        try context.save()

        #expect(trip.livingAccommodation === stay)
        #expect(try context.fetchCount(FetchDescriptor<LivingAccommodation>()) == 1)

        let other = ModelContext(container)
        let fetched = try #require(try other.fetch(FetchDescriptor<Trip>()).first)
        #expect(fetched.livingAccommodation?.placeName == "Hotel Roma")
        #expect(fetched.livingAccommodation?.address == "Via Roma 1")
    }

    @Test func toManyRelationshipIsStoredAndRead() throws {
        let container = try makeContainer(Trip.self)
        let context = ModelContext(container)
        let trip = Trip(name: "Tokyo", destination: "Japan")
        trip.bucketList = [BucketListItem(title: "Shibuya"), BucketListItem(title: "Akihabara"), BucketListItem(title: "Fuji")]
        context.insert(trip)
        try context.save()

        #expect(try context.fetchCount(FetchDescriptor<BucketListItem>()) == 3)
        let other = ModelContext(container)
        let fetched = try #require(try other.fetch(FetchDescriptor<Trip>()).first)
        #expect(Set(fetched.bucketList.map(\.title)) == ["Shibuya", "Akihabara", "Fuji"])
        for item in fetched.bucketList {
            #expect(item.trip === fetched)
        }
    }

    // MARK: Inverses in memory

    @Test func explicitInverseSetFromToOneSide() throws {
        let container = try makeContainer(AnimalCategory.self, Animal.self)
        let context = ModelContext(container)
        let mammals = AnimalCategory(name: "Mammal")
        let cat = Animal(name: "Cat", diet: .carnivorous)
        context.insert(mammals)
        context.insert(cat)

        cat.category = mammals
        #expect(mammals.animals.count == 1)
        #expect(mammals.animals.first === cat)

        cat.category = nil
        #expect(mammals.animals.isEmpty)
    }

    @Test func explicitInverseSetFromToManySide() throws {
        let container = try makeContainer(AnimalCategory.self, Animal.self)
        let context = ModelContext(container)
        let birds = AnimalCategory(name: "Bird")
        let owl = Animal(name: "Owl", diet: .carnivorous)
        let parrot = Animal(name: "Parrot", diet: .herbivorous)
        context.insert(birds)
        context.insert(owl)
        context.insert(parrot)

        birds.animals.append(owl)
        birds.animals.append(parrot)
        #expect(owl.category === birds)
        #expect(parrot.category === birds)

        birds.animals.removeAll { $0 === owl }
        #expect(owl.category == nil)
        #expect(parrot.category === birds)
    }

    @Test func explicitInverseSetBeforeInsertIsLinkedOnInsert() throws {
        let container = try makeContainer(AnimalCategory.self, Animal.self)
        let context = ModelContext(container)
        let reptiles = AnimalCategory(name: "Reptile")
        let gecko = Animal(name: "Gecko", diet: .carnivorous)
        reptiles.animals = [gecko]
        context.insert(reptiles)
        #expect(gecko.category === reptiles)
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Animal>()) == 1)
        #expect(gecko.category === reptiles)
    }

    @Test func inferredToOneInverseIsKeptInStep() throws {
        let container = try makeContainer(GPerson.self, GPassport.self)
        let context = ModelContext(container)
        let ada = GPerson(name: "Ada")
        let passport = GPassport(number: "P-1")
        context.insert(ada)
        context.insert(passport)

        ada.passport = passport
        #expect(passport.holder === ada)

        let grace = GPerson(name: "Grace")
        context.insert(grace)
        passport.holder = grace
        #expect(grace.passport === passport)
        #expect(ada.passport == nil)
    }

    @Test func inferredToManyInverseIsKeptInStep() throws {
        let container = try makeContainer(GLibrary.self, GShelf.self)
        let context = ModelContext(container)
        let library = GLibrary(name: "Central")
        let a = GShelf(label: "A")
        let b = GShelf(label: "B")
        context.insert(library)
        context.insert(a)
        context.insert(b)

        library.shelves.append(a)
        #expect(a.library === library)
        b.library = library
        #expect(library.shelves.count == 2)
        #expect(library.shelves.contains { $0 === b })

        try context.save()
        let other = ModelContext(container)
        let fetched = try #require(try other.fetch(FetchDescriptor<GLibrary>()).first)
        #expect(Set(fetched.shelves.map(\.label)) == ["A", "B"])
        #expect(fetched.shelves.allSatisfy { $0.library === fetched })
    }

    @Test func reassigningToOneMovesModelBetweenOwners() throws {
        let container = try makeContainer(AnimalCategory.self, Animal.self)
        let context = ModelContext(container)
        let mammals = AnimalCategory(name: "Mammal")
        let fish = AnimalCategory(name: "Fish")
        let whale = Animal(name: "Whale", diet: .carnivorous)
        context.insert(mammals)
        context.insert(fish)
        context.insert(whale)

        whale.category = fish
        #expect(fish.animals.map(\.name) == ["Whale"])
        whale.category = mammals
        #expect(fish.animals.isEmpty)
        #expect(mammals.animals.map(\.name) == ["Whale"])

        try context.save()
        let other = ModelContext(container)
        let categories = try other.fetch(FetchDescriptor<AnimalCategory>(sortBy: [SortDescriptor(\.name)]))
        #expect(categories.map(\.name) == ["Fish", "Mammal"])
        #expect(categories[0].animals.isEmpty)
        #expect(categories[1].animals.map(\.name) == ["Whale"])
    }

    @Test func appendingToAnotherOwnersToManyMovesModel() throws {
        let container = try makeContainer(AnimalCategory.self, Animal.self)
        let context = ModelContext(container)
        let first = AnimalCategory(name: "First")
        let second = AnimalCategory(name: "Second")
        let frog = Animal(name: "Frog", diet: .carnivorous)
        first.animals = [frog]
        context.insert(first)
        context.insert(second)
        try context.save()

        second.animals.append(frog)
        #expect(frog.category === second)
        #expect(first.animals.isEmpty)
        try context.save()

        let other = ModelContext(container)
        let frogAgain = try #require(try other.fetch(FetchDescriptor<Animal>()).first)
        #expect(frogAgain.category?.name == "Second")
    }

    @Test func appendingNewModelToSavedModelInsertsItOnSave() throws {
        let container = try makeContainer(Trip.self)
        let context = ModelContext(container)
        let trip = Trip(name: "Oslo", destination: "Norway")
        context.insert(trip)
        try context.save()

        trip.bucketList.append(BucketListItem(title: "Fjords"))
        try context.save()

        #expect(try context.fetchCount(FetchDescriptor<BucketListItem>()) == 1)
        let other = ModelContext(container)
        let items = try other.fetch(FetchDescriptor<BucketListItem>())
        #expect(items.map(\.title) == ["Fjords"])
        #expect(items.first?.trip?.name == "Oslo")
    }

    @Test func relationshipChangesOnSavedModelsArePersisted() throws {
        let container = try makeContainer(Author.self, Book.self)
        let context = ModelContext(container)
        let author = Author(name: "Le Guin")
        let book = Book(isbn: "1", title: "Earthsea", author: "Le Guin", pageCount: 200)
        context.insert(author)
        context.insert(book)
        try context.save()

        book.writer = author
        #expect(author.books.map(\.title) == ["Earthsea"])
        try context.save()

        let other = ModelContext(container)
        let authorAgain = try #require(try other.fetch(FetchDescriptor<Author>()).first)
        #expect(authorAgain.books.map(\.title) == ["Earthsea"])
        #expect(authorAgain.books.first?.writer === authorAgain)
    }

    // MARK: Many-to-many

    @Test func manyToManyIsKeptInStepAndPersisted() throws {
        let container = try makeContainer(GStudent.self, GCourse.self)
        let context = ModelContext(container)
        let ann = GStudent(name: "Ann")
        let bob = GStudent(name: "Bob")
        let math = GCourse(title: "Math")
        let art = GCourse(title: "Art")
        for model in [ann, bob] { context.insert(model) }
        for model in [math, art] { context.insert(model) }

        ann.courses = [math, art]
        bob.courses.append(math)
        #expect(Set(math.students.map(\.name)) == ["Ann", "Bob"])
        #expect(art.students.map(\.name) == ["Ann"])

        art.students.append(bob)
        #expect(Set(bob.courses.map(\.title)) == ["Math", "Art"])

        ann.courses.removeAll { $0 === math }
        #expect(math.students.map(\.name) == ["Bob"])
        try context.save()

        let other = ModelContext(container)
        let students = try other.fetch(FetchDescriptor<GStudent>(sortBy: [SortDescriptor(\.name)]))
        #expect(students.map(\.name) == ["Ann", "Bob"])
        #expect(students[0].courses.map(\.title) == ["Art"])
        #expect(Set(students[1].courses.map(\.title)) == ["Math", "Art"])
        let courses = try other.fetch(FetchDescriptor<GCourse>(sortBy: [SortDescriptor(\.title)]))
        #expect(Set(courses[0].students.map(\.name)) == ["Ann", "Bob"])
        #expect(courses[1].students.map(\.name) == ["Bob"])
    }

    @Test func inferredManyToManyIsKeptInStep() throws {
        let container = try makeContainer(GTag.self, GNote.self)
        let context = ModelContext(container)
        let work = GTag(label: "work")
        let home = GTag(label: "home")
        let memo = GNote(text: "memo")
        let list = GNote(text: "list")
        for tag in [work, home] { context.insert(tag) }
        for note in [memo, list] { context.insert(note) }

        memo.tags = [work, home]
        work.notes.append(list)
        #expect(Set(work.notes.map(\.text)) == ["memo", "list"])
        #expect(home.notes.map(\.text) == ["memo"])
        #expect(list.tags.map(\.label) == ["work"])
        try context.save()

        let other = ModelContext(container)
        let notes = try other.fetch(FetchDescriptor<GNote>(sortBy: [SortDescriptor(\.text)]))
        #expect(notes.map(\.text) == ["list", "memo"])
        #expect(notes[0].tags.map(\.label) == ["work"])
        #expect(Set(notes[1].tags.map(\.label)) == ["work", "home"])
    }

    // MARK: Delete rules

    @Test func nullifyIsTheDefaultDeleteRule() throws {
        let container = try makeContainer(GTeam.self, GPlayer.self)
        let context = ModelContext(container)
        let team = GTeam(name: "Reds")
        let player = GPlayer(name: "Kim")
        team.players = [player]
        context.insert(team)
        try context.save()

        context.delete(team)
        try context.save()

        #expect(try context.fetchCount(FetchDescriptor<GTeam>()) == 0)
        #expect(try context.fetchCount(FetchDescriptor<GPlayer>()) == 1)
        #expect(player.team == nil)
        let other = ModelContext(container)
        let playerAgain = try #require(try other.fetch(FetchDescriptor<GPlayer>()).first)
        #expect(playerAgain.name == "Kim")
        #expect(playerAgain.team == nil)
    }

    @Test func nullifyRemovesDeletedModelFromInverseToMany() throws {
        let container = try makeContainer(GTeam.self, GPlayer.self)
        let context = ModelContext(container)
        let team = GTeam(name: "Blues")
        let kept = GPlayer(name: "Kept")
        let gone = GPlayer(name: "Gone")
        team.players = [kept, gone]
        context.insert(team)
        try context.save()

        context.delete(gone)
        try context.save()

        #expect(team.players.map(\.name) == ["Kept"])
        #expect(try context.fetchCount(FetchDescriptor<GTeam>()) == 1)
        let other = ModelContext(container)
        let teamAgain = try #require(try other.fetch(FetchDescriptor<GTeam>()).first)
        #expect(teamAgain.players.map(\.name) == ["Kept"])
    }

    @Test func nullifyOnToOneSideOfSeedModel() throws {
        // Animal.category has the default (nullify) rule: the category stays.
        let container = try makeContainer(AnimalCategory.self, Animal.self)
        let context = ModelContext(container)
        let category = AnimalCategory(name: "Amphibian")
        let newt = Animal(name: "Newt", diet: .carnivorous)
        category.animals = [newt]
        context.insert(category)
        try context.save()

        context.delete(newt)
        try context.save()

        #expect(try context.fetchCount(FetchDescriptor<AnimalCategory>()) == 1)
        #expect(category.animals.isEmpty)
        let other = ModelContext(container)
        let categoryAgain = try #require(try other.fetch(FetchDescriptor<AnimalCategory>()).first)
        #expect(categoryAgain.animals.isEmpty)
    }

    @Test func cascadeDeletesRelatedModels() throws {
        let container = try makeContainer(AnimalCategory.self, Animal.self)
        let context = ModelContext(container)
        let insects = AnimalCategory(name: "Insect")
        insects.animals = [Animal(name: "Ant", diet: .omnivorous), Animal(name: "Bee", diet: .herbivorous)]
        let fish = AnimalCategory(name: "Fish")
        fish.animals = [Animal(name: "Cod", diet: .carnivorous)]
        context.insert(insects)
        context.insert(fish)
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Animal>()) == 3)

        context.delete(insects)
        try context.save()

        #expect(try context.fetchCount(FetchDescriptor<AnimalCategory>()) == 1)
        #expect(try context.fetch(FetchDescriptor<Animal>()).map(\.name) == ["Cod"])
        let other = ModelContext(container)
        #expect(try other.fetch(FetchDescriptor<Animal>()).map(\.name) == ["Cod"])
    }

    @Test func cascadeFollowsToOneRelationships() throws {
        let container = try makeContainer(Trip.self)
        let context = ModelContext(container)
        let trip = Trip(name: "Lima", destination: "Peru")
        trip.livingAccommodation = LivingAccommodation(address: "Av. 1", placeName: "Casa")
        trip.bucketList = [BucketListItem(title: "Machu Picchu")]
        context.insert(trip)
        try context.save()

        context.delete(trip)
        try context.save()

        let other = ModelContext(container)
        #expect(try other.fetchCount(FetchDescriptor<Trip>()) == 0)
        #expect(try other.fetchCount(FetchDescriptor<LivingAccommodation>()) == 0)
        #expect(try other.fetchCount(FetchDescriptor<BucketListItem>()) == 0)
    }

    @Test func cascadeAppliesToDeleteModelWhere() throws {
        let container = try makeContainer(AnimalCategory.self, Animal.self)
        let context = ModelContext(container)
        for (name, animals) in [("Mammal", ["Dog", "Cat"]), ("Bird", ["Owl"]), ("Fish", ["Eel", "Cod"])] {
            let category = AnimalCategory(name: name)
            category.animals = animals.map { Animal(name: $0, diet: .omnivorous) }
            context.insert(category)
        }
        try context.save()

        try context.delete(model: AnimalCategory.self, where: #Predicate { $0.name == "Mammal" || $0.name == "Fish" })
        try context.save()

        let other = ModelContext(container)
        #expect(try other.fetch(FetchDescriptor<AnimalCategory>()).map(\.name) == ["Bird"])
        #expect(try other.fetch(FetchDescriptor<Animal>()).map(\.name) == ["Owl"])
    }

    @Test func cascadeFromAContextThatNeverReadTheRelatedModels() throws {
        let container = try makeContainer(AnimalCategory.self, Animal.self)
        let writer = ModelContext(container)
        let category = AnimalCategory(name: "Rodent")
        category.animals = [Animal(name: "Mouse", diet: .omnivorous), Animal(name: "Rat", diet: .omnivorous)]
        writer.insert(category)
        writer.insert(Animal(name: "Stray", diet: .carnivorous))
        try writer.save()

        // A fresh context deletes the category without touching its animals first.
        let deleter = ModelContext(container)
        try deleter.delete(model: AnimalCategory.self)
        try deleter.save()

        let reader = ModelContext(container)
        #expect(try reader.fetchCount(FetchDescriptor<AnimalCategory>()) == 0)
        #expect(try reader.fetch(FetchDescriptor<Animal>()).map(\.name) == ["Stray"])
    }

    @Test func cascadeOverFaultsStillLeavesTheSurvivingSides() throws {
        let container = try makeContainer(GFaculty.self, GSeminar.self, GAttendee.self)
        let writer = ModelContext(container)
        let physics = GFaculty(name: "Physics"), history = GFaculty(name: "History")
        let optics = GSeminar(title: "Optics"), waves = GSeminar(title: "Waves"), rome = GSeminar(title: "Rome")
        physics.seminars = [optics, waves]
        history.seminars = [rome]
        let ada = GAttendee(name: "Ada"), ben = GAttendee(name: "Ben")
        ada.seminars = [optics, waves, rome]
        ben.seminars = [waves]
        writer.insert(physics)
        writer.insert(history)
        try writer.save()

        // A fresh context: the seminars the delete cascades to are faults, whose way
        // back to their faculty is deleted too, while their attendees stay.
        let deleter = ModelContext(container)
        let attendees = try deleter.fetch(FetchDescriptor<GAttendee>(sortBy: [SortDescriptor(\.name)]))
        try deleter.delete(model: GFaculty.self, where: #Predicate { $0.name == "Physics" })
        try deleter.save()

        #expect(attendees.map { $0.seminars.map(\.title).sorted() } == [["Rome"], []])
        let reader = ModelContext(container)
        #expect(try reader.fetch(FetchDescriptor<GSeminar>()).map(\.title) == ["Rome"])
        let stored = try reader.fetch(FetchDescriptor<GAttendee>(sortBy: [SortDescriptor(\.name)]))
        #expect(stored.map { $0.seminars.map(\.title) } == [["Rome"], []])
        #expect(try reader.fetch(FetchDescriptor<GFaculty>()).map { $0.seminars.map(\.title) } == [["Rome"]])
        // The attendees' rows left the deleted seminars in the save itself.
        let last = try #require(try reader.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).last)
        var updated: [PersistentIdentifier] = []
        for case let .update(change) in last.changes { updated.append(change.changedPersistentIdentifier) }
        #expect(Set(updated) == Set(attendees.map(\.persistentModelID)))
    }

    @Test func cascadeToRowsNoModelStandsFor() throws {
        let container = try makeContainer(Holding.self, GDepartment.self, GEmployee.self)
        let writer = ModelContext(container)
        let acme = Holding(name: "Acme"), busy = Holding(name: "Busy")
        acme.departments = [GDepartment(name: "Legal"), GDepartment(name: "R&D")]
        let sales = GDepartment(name: "Sales")
        sales.employees = [GEmployee(name: "Pat")]
        busy.departments = [sales]
        writer.insert(acme)
        writer.insert(busy)
        try writer.save()
        let expected = Set([acme.persistentModelID] + acme.departments.map(\.persistentModelID))

        // A context that never read the departments: the cascade reaches them as rows,
        // and the save reports them as any deleted model.
        let deleter = ModelContext(container)
        nonisolated(unsafe) var deletedIDs: [PersistentIdentifier] = []
        let observer = NotificationCenter.default.addObserver(forName: ModelContext.didSave, object: deleter, queue: nil) {
            deletedIDs = $0.userInfo?[ModelContext.NotificationKey.deletedIdentifiers.rawValue] as? [PersistentIdentifier] ?? []
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try deleter.delete(model: Holding.self, where: #Predicate { $0.name == "Acme" })
        try deleter.save()
        #expect(Set(deletedIDs) == expected)
        #expect(!deleter.hasChanges)
        let reader = ModelContext(container)
        #expect(try reader.fetch(FetchDescriptor<GDepartment>()).map(\.name) == ["Sales"])
        #expect(try reader.fetch(FetchDescriptor<Holding>()).map(\.name) == ["Busy"])

        // A department with employees denies its deletion: the cascade that reaches it
        // as a row still throws, and deletes nothing.
        try deleter.delete(model: Holding.self)
        #expect(throws: SwiftDataError.modelValidationFailure) { try deleter.save() }
        let after = ModelContext(container)
        #expect(try after.fetch(FetchDescriptor<Holding>()).map(\.name) == ["Busy"])
        #expect(try after.fetch(FetchDescriptor<GDepartment>()).map(\.name) == ["Sales"])
    }

    @Test func rowsACascadeReachesAreDeletedModelsWhenTheSaveMakesThem() throws {
        let container = try makeContainer(GOwner.self, GPet.self, GVet.self)
        let writer = ModelContext(container)
        let owner = GOwner(name: "Sam"), vet = GVet(name: "Dr. Lee")
        let rex = GPet(name: "Rex"), tom = GPet(name: "Tom")
        owner.pets = [rex, tom]
        vet.patients = [rex]
        writer.insert(owner)
        writer.insert(vet)
        try writer.save()
        let rexID = rex.persistentModelID, tomID = tom.persistentModelID

        let context = ModelContext(container)
        let vetAgain = try #require(try context.fetch(FetchDescriptor<GVet>()).first)
        vetAgain.name = "Dr. Lee Jr."
        try context.delete(model: GOwner.self)
        // A `willSave` observer edits a pet the cascade deletes: it is deleted all the same.
        nonisolated(unsafe) var saved: [String: [PersistentIdentifier]] = [:]
        nonisolated(unsafe) let editing = context
        let edit = NotificationCenter.default.addObserver(forName: ModelContext.willSave, object: context, queue: nil) { _ in
            (editing.model(for: tomID) as? GPet)?.name = "Tommy"
        }
        let didSave = NotificationCenter.default.addObserver(forName: ModelContext.didSave, object: context, queue: nil) {
            for key in [ModelContext.NotificationKey.updatedIdentifiers, .deletedIdentifiers] {
                saved[key.rawValue] = $0.userInfo?[key.rawValue] as? [PersistentIdentifier] ?? []
            }
        }
        defer {
            NotificationCenter.default.removeObserver(edit)
            NotificationCenter.default.removeObserver(didSave)
        }
        try context.save()

        // Validating the changed vet read its patient: that model is deleted.
        let patient = try #require(vetAgain.patients.first)
        #expect(patient.persistentModelID == rexID && patient.isDeleted)
        #expect(saved[ModelContext.NotificationKey.updatedIdentifiers.rawValue] == [vetAgain.persistentModelID])
        #expect(Set(saved[ModelContext.NotificationKey.deletedIdentifiers.rawValue] ?? []).isSuperset(of: [rexID, tomID]))
        let reader = ModelContext(container)
        #expect(try reader.fetchCount(FetchDescriptor<GPet>()) == 0)
        #expect(try reader.fetch(FetchDescriptor<GVet>()).map(\.name) == ["Dr. Lee Jr."])
    }

    @Test func nullifyFromAContextThatNeverReadTheOwner() throws {
        let container = try makeContainer(GTeam.self, GPlayer.self)
        let writer = ModelContext(container)
        let team = GTeam(name: "Greens")
        team.players = [GPlayer(name: "Stays"), GPlayer(name: "Leaves")]
        writer.insert(team)
        try writer.save()

        let deleter = ModelContext(container)
        try deleter.delete(model: GPlayer.self, where: #Predicate { $0.name == "Leaves" })
        try deleter.save()

        let reader = ModelContext(container)
        let teamAgain = try #require(try reader.fetch(FetchDescriptor<GTeam>()).first)
        #expect(teamAgain.players.map(\.name) == ["Stays"])
        // The first context, refetching, sees the nullified relationship too.
        let refetched = try #require(try writer.fetch(FetchDescriptor<GTeam>()).first)
        #expect(refetched.players.map(\.name) == ["Stays"])
    }

    @Test func denyRuleAppliesToDeleteModelWhere() throws {
        let container = try makeContainer(GDepartment.self, GEmployee.self)
        let writer = ModelContext(container)
        let staffed = GDepartment(name: "Staffed")
        staffed.employees = [GEmployee(name: "Lee")]
        writer.insert(staffed)
        writer.insert(GDepartment(name: "Vacant"))
        try writer.save()

        let deleter = ModelContext(container)
        try deleter.delete(model: GDepartment.self)
        #expect(throws: SwiftDataError.modelValidationFailure) {
            try deleter.save()
        }

        let reader = ModelContext(container)
        let names = try reader.fetch(FetchDescriptor<GDepartment>(sortBy: [SortDescriptor(\.name)])).map(\.name)
        #expect(names == ["Staffed", "Vacant"])
        #expect(try reader.fetchCount(FetchDescriptor<GEmployee>()) == 1)
    }

    @Test func denyRuleThrowsAndDeletesNothing() throws {
        let container = try makeContainer(GDepartment.self, GEmployee.self)
        let context = ModelContext(container)
        let sales = GDepartment(name: "Sales")
        sales.employees = [GEmployee(name: "Pat")]
        context.insert(sales)
        try context.save()

        context.delete(sales)
        #expect(throws: SwiftDataError.modelValidationFailure) {
            try context.save()
        }

        let other = ModelContext(container)
        #expect(try other.fetch(FetchDescriptor<GDepartment>()).map(\.name) == ["Sales"])
        let employee = try #require(try other.fetch(FetchDescriptor<GEmployee>()).first)
        #expect(employee.name == "Pat")
        #expect(employee.department?.name == "Sales")
    }

    @Test func denyRuleAllowsDeletingEmptyOwner() throws {
        let container = try makeContainer(GDepartment.self, GEmployee.self)
        let context = ModelContext(container)
        let empty = GDepartment(name: "Empty")
        context.insert(empty)
        try context.save()

        context.delete(empty)
        try context.save()
        let other = ModelContext(container)
        #expect(try other.fetchCount(FetchDescriptor<GDepartment>()) == 0)
    }

    @Test func noActionLeavesRelatedModelsUntouched() throws {
        let container = try makeContainer(GFolder.self, GFile.self)
        let context = ModelContext(container)
        let folder = GFolder(name: "Docs")
        let file = GFile(name: "readme.txt")
        folder.files = [file]
        context.insert(folder)
        try context.save()

        context.delete(folder)
        try context.save()

        // The related model is neither deleted nor changed.
        #expect(try context.fetchCount(FetchDescriptor<GFolder>()) == 0)
        #expect(try context.fetch(FetchDescriptor<GFile>()).map(\.name) == ["readme.txt"])
        #expect(file.folder === folder)
        let other = ModelContext(container)
        #expect(try other.fetch(FetchDescriptor<GFile>()).map(\.name) == ["readme.txt"])
    }

    // MARK: Relationship counts

    @Test func relationshipCountWithinBoundsSaves() throws {
        let container = try makeContainer(GPlaylist.self, GSong.self)
        let context = ModelContext(container)
        let playlist = GPlaylist(name: "Mix")
        playlist.songs = [GSong(title: "One"), GSong(title: "Two")]
        context.insert(playlist)
        try context.save()

        let other = ModelContext(container)
        #expect(try other.fetchCount(FetchDescriptor<GPlaylist>()) == 1)
        #expect(try other.fetchCount(FetchDescriptor<GSong>()) == 2)
    }

    @Test func relationshipBelowMinimumCountFailsValidation() throws {
        let container = try makeContainer(GPlaylist.self, GSong.self)
        let context = ModelContext(container)
        context.insert(GPlaylist(name: "Empty"))
        #expect(throws: SwiftDataError.modelValidationFailure) {
            try context.save()
        }
        let other = ModelContext(container)
        #expect(try other.fetchCount(FetchDescriptor<GPlaylist>()) == 0)
    }

    @Test func relationshipAboveMaximumCountFailsValidation() throws {
        let container = try makeContainer(GPlaylist.self, GSong.self)
        let context = ModelContext(container)
        let playlist = GPlaylist(name: "Long")
        playlist.songs = (1...4).map { GSong(title: "Song \($0)") }
        context.insert(playlist)
        #expect(throws: SwiftDataError.modelValidationFailure) {
            try context.save()
        }
        let other = ModelContext(container)
        #expect(try other.fetchCount(FetchDescriptor<GPlaylist>()) == 0)
        #expect(try other.fetchCount(FetchDescriptor<GSong>()) == 0)
    }

    @Test func relationshipCountIsValidatedOnUpdate() throws {
        let container = try makeContainer(GPlaylist.self, GSong.self)
        let context = ModelContext(container)
        let playlist = GPlaylist(name: "Growing")
        playlist.songs = [GSong(title: "A"), GSong(title: "B"), GSong(title: "C")]
        context.insert(playlist)
        try context.save()

        playlist.songs.append(GSong(title: "D"))
        #expect(throws: SwiftDataError.modelValidationFailure) {
            try context.save()
        }
        let other = ModelContext(container)
        let stored = try #require(try other.fetch(FetchDescriptor<GPlaylist>()).first)
        #expect(stored.songs.count == 3)
    }
}
