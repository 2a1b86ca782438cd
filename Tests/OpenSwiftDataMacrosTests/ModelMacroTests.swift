import OpenSwiftDataMacros
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosTestSupport
import XCTest

/// `@Model`: all three roles, the macros it hands work to, and every diagnostic.
final class ModelMacroTests: XCTestCase {
    /// The Trip model of the specification, expanded with every SwiftData macro, verbatim.
    func testTripExpandsCompletely() {
        assertMacroExpansion(
            #"""
            @Model final class Trip {
                @Attribute(.unique) var name: String
                var destination: String
                var isFavorite: Bool = false
                var notes: String?
                @Relationship(deleteRule: .cascade, inverse: \BucketListItem.trip) var bucketList: [BucketListItem] = []
                var living: LivingAccommodation?
                @Transient var isSelected: Bool = false
                var nights: Int { 3 }
                static var shared = 0
                #Unique<Trip>([\.name], [\.destination, \.notes])
                #Index<Trip>([\.destination], [\.name, \.isFavorite])
                init(name: String, destination: String) { self.name = name; self.destination = destination }
            }
            """#,
            expandedSource: #"""
            final class Trip {
                var name: String {
                    @storageRestrictions(accesses: _$backingData_Trip, initializes: _name)
                    init(initialValue) {
                        if _$backingData_Trip == nil {
                            _$backingData_Trip = Trip.createBackingData()
                        }
                        _$backingData_Trip!._$setValue(forKey: Trip._$keyPath_name, to: initialValue)
                        _name = _SwiftDataNoType()
                    }
                    get {
                        access(keyPath: Trip._$keyPath_name)
                        return self._$getValue(forKey: Trip._$keyPath_name)
                    }
                    set {
                        withMutation(keyPath: Trip._$keyPath_name) {
                            self._$setValue(forKey: Trip._$keyPath_name, to: newValue)
                        }
                    }
                }

                private var _name: _SwiftDataNoType

                private static let _$keyPath_name = \Trip.name
                var destination: String {
                    @storageRestrictions(accesses: _$backingData_Trip, initializes: _destination)
                    init(initialValue) {
                        if _$backingData_Trip == nil {
                            _$backingData_Trip = Trip.createBackingData()
                        }
                        _$backingData_Trip!._$setValue(forKey: Trip._$keyPath_destination, to: initialValue)
                        _destination = _SwiftDataNoType()
                    }
                    get {
                        access(keyPath: Trip._$keyPath_destination)
                        return self._$getValue(forKey: Trip._$keyPath_destination)
                    }
                    set {
                        withMutation(keyPath: Trip._$keyPath_destination) {
                            self._$setValue(forKey: Trip._$keyPath_destination, to: newValue)
                        }
                    }
                }

                private var _destination: _SwiftDataNoType

                private static let _$keyPath_destination = \Trip.destination
                var isFavorite: Bool {
                    @storageRestrictions(accesses: _$backingData_Trip, initializes: _isFavorite)
                    init(initialValue) {
                        if initialValue != false {
                            if _$backingData_Trip == nil {
                                _$backingData_Trip = Trip.createBackingData()
                            }
                            _$backingData_Trip!._$setValue(forKey: Trip._$keyPath_isFavorite, to: initialValue)
                        }
                        _isFavorite = _SwiftDataNoType()
                    }
                    get {
                        access(keyPath: Trip._$keyPath_isFavorite)
                        return self._$getValue(forKey: Trip._$keyPath_isFavorite)
                    }
                    set {
                        withMutation(keyPath: Trip._$keyPath_isFavorite) {
                            self._$setValue(forKey: Trip._$keyPath_isFavorite, to: newValue)
                        }
                    }
                }

                private var _isFavorite: _SwiftDataNoType

                private static let _$keyPath_isFavorite = \Trip.isFavorite
                var notes: String? {
                    @storageRestrictions(accesses: _$backingData_Trip, initializes: _notes)
                    init(initialValue) {
                        if initialValue != nil {
                            if _$backingData_Trip == nil {
                                _$backingData_Trip = Trip.createBackingData()
                            }
                            _$backingData_Trip!._$setValue(forKey: Trip._$keyPath_notes, to: initialValue)
                        }
                        _notes = _SwiftDataNoType()
                    }
                    get {
                        access(keyPath: Trip._$keyPath_notes)
                        return self._$getValue(forKey: Trip._$keyPath_notes)
                    }
                    set {
                        withMutation(keyPath: Trip._$keyPath_notes) {
                            self._$setValue(forKey: Trip._$keyPath_notes, to: newValue)
                        }
                    }
                }

                private var _notes: _SwiftDataNoType

                private static let _$keyPath_notes = \Trip.notes
                var bucketList: [BucketListItem] {
                    @storageRestrictions(accesses: _$backingData_Trip, initializes: _bucketList)
                    init(initialValue) {
                        if !initialValue.isEmpty {
                            if _$backingData_Trip == nil {
                                _$backingData_Trip = Trip.createBackingData()
                            }
                            _$backingData_Trip!._$setValue(forKey: Trip._$keyPath_bucketList, to: initialValue)
                        }
                        _bucketList = _SwiftDataNoType()
                    }
                    get {
                        access(keyPath: Trip._$keyPath_bucketList)
                        return self._$getValue(forKey: Trip._$keyPath_bucketList)
                    }
                    set {
                        withMutation(keyPath: Trip._$keyPath_bucketList) {
                            self._$setValue(forKey: Trip._$keyPath_bucketList, to: newValue)
                        }
                    }
                }

                private var _bucketList: _SwiftDataNoType

                private static let _$keyPath_bucketList = \Trip.bucketList
                var living: LivingAccommodation? {
                    @storageRestrictions(accesses: _$backingData_Trip, initializes: _living)
                    init(initialValue) {
                        if initialValue != nil {
                            if _$backingData_Trip == nil {
                                _$backingData_Trip = Trip.createBackingData()
                            }
                            _$backingData_Trip!._$setValue(forKey: Trip._$keyPath_living, to: initialValue)
                        }
                        _living = _SwiftDataNoType()
                    }
                    get {
                        access(keyPath: Trip._$keyPath_living)
                        return self._$getValue(forKey: Trip._$keyPath_living)
                    }
                    set {
                        withMutation(keyPath: Trip._$keyPath_living) {
                            self._$setValue(forKey: Trip._$keyPath_living, to: newValue)
                        }
                    }
                }

                private var _living: _SwiftDataNoType

                private static let _$keyPath_living = \Trip.living
                var isSelected: Bool = false
                var nights: Int { 3 }
                static var shared = 0
                public static var _$uniquenessConstraints: [[AnyKeyPath]] {
                    let constraints: [[PartialKeyPath<Trip>]] = [[\.name], [\.destination, \.notes]]
                    return constraints
                }
                public static var _$indices: [Any] {
                    let indices: [OpenSwiftData.Schema.Index<Trip>.Types<Trip>] = [.binary([\.destination]), .binary([\.name, \.isFavorite])]
                    return indices
                }
                init(name: String, destination: String) { self.name = name; self.destination = destination }

                private var _$backingData_Trip: (any OpenSwiftData.BackingData<Trip>)? = nil

                public var persistentBackingData: any OpenSwiftData.BackingData<Trip> {
                    get {
                        if let backingData = _$backingData_Trip {
                            return backingData
                        }
                        let backingData = Trip.createBackingData()
                        _$backingData_Trip = backingData
                        return backingData
                    }
                    set {
                        _$backingData_Trip = newValue
                    }
                }

                public static var schemaMetadata: [OpenSwiftData.Schema.PropertyMetadata] {
                    [
                        OpenSwiftData.Schema.PropertyMetadata(name: "name", keypath: Trip._$keyPath_name, defaultValue: nil, metadata: OpenSwiftData.Schema.Attribute(.unique)),
                        OpenSwiftData.Schema.PropertyMetadata(name: "destination", keypath: Trip._$keyPath_destination, defaultValue: nil, metadata: nil),
                        OpenSwiftData.Schema.PropertyMetadata(name: "isFavorite", keypath: Trip._$keyPath_isFavorite, defaultValue: false as Bool, metadata: nil),
                        OpenSwiftData.Schema.PropertyMetadata(name: "notes", keypath: Trip._$keyPath_notes, defaultValue: nil, metadata: nil),
                        OpenSwiftData.Schema.PropertyMetadata(name: "bucketList", keypath: Trip._$keyPath_bucketList, defaultValue: [] as [BucketListItem], metadata: OpenSwiftData.Schema.Relationship(deleteRule: .cascade, inverse: \BucketListItem.trip)),
                        OpenSwiftData.Schema.PropertyMetadata(name: "living", keypath: Trip._$keyPath_living, defaultValue: nil, metadata: nil)
                    ]
                }

                public required init(backingData: any OpenSwiftData.BackingData<Trip>) {
                    _name = _SwiftDataNoType()
                    _destination = _SwiftDataNoType()
                    _isFavorite = _SwiftDataNoType()
                    _notes = _SwiftDataNoType()
                    _bucketList = _SwiftDataNoType()
                    _living = _SwiftDataNoType()
                    self.persistentBackingData = backingData
                }

                nonisolated(unsafe) private var _$observation: OpenSwiftData._ModelObservation? = nil

                internal nonisolated func access<_M>(keyPath: KeyPath<Trip, _M>) {
                    if _$observation == nil {
                        guard OpenSwiftData._ModelObservation.isTracking else {
                            return
                        }
                        _$observation = OpenSwiftData._ModelObservation()
                    }
                    _$observation!.registrar.access(self, keyPath: keyPath)
                }

                internal nonisolated func withMutation<_M, _MR>(keyPath: KeyPath<Trip, _M>, _ mutation: () throws -> _MR) rethrows -> _MR {
                    guard let observation = _$observation else {
                        return try mutation()
                    }
                    return try observation.registrar.withMutation(of: self, keyPath: keyPath, mutation)
                }

                internal struct _SwiftDataNoType {
                }
            }

            extension Trip: OpenSwiftData.PersistentModel, Observation.Observable {
            }
            """#,
            macroSpecs: allMacros
        )
    }

    /// Which members get `@_PersistedProperty`, and how each one's metadata is written: bare
    /// `@Attribute`/`@Relationship`, untyped initial values, `T!`, `nil`, backticked names.
    func testMemberAttributesAndSchemaMetadata() {
        assertMacroExpansion(
            #"""
            @Model class Category {
                @Attribute var plain: String
                @Relationship var images = [RemoteImage]()
                var checkIn: Date!
                var note: String? = nil
                var `default` = 0
                @Transient let constant = 1
                lazy var cache = 0
                var computed: Int { get { 1 } set { } }
                @_PersistedProperty var alreadyDone: Int
                static var count = 0
                init() { plain = ""; alreadyDone = 0 }
            }
            """#,
            expandedSource: #"""
            class Category {
                @Attribute
                @_PersistedProperty var plain: String
                @Relationship
                @_PersistedProperty var images = [RemoteImage]()
                @_PersistedProperty
                var checkIn: Date!
                @_PersistedProperty
                var note: String? = nil
                @_PersistedProperty
                var `default` = 0
                @Transient let constant = 1
                lazy var cache = 0
                var computed: Int { get { 1 } set { } }
                @_PersistedProperty var alreadyDone: Int
                static var count = 0
                init() { plain = ""; alreadyDone = 0 }

                @Transient private var _$backingData_Category: (any OpenSwiftData.BackingData<Category>)? = nil

                public var persistentBackingData: any OpenSwiftData.BackingData<Category> {
                    get {
                        if let backingData = _$backingData_Category {
                            return backingData
                        }
                        let backingData = Category.createBackingData()
                        _$backingData_Category = backingData
                        return backingData
                    }
                    set {
                        _$backingData_Category = newValue
                    }
                }

                public class var schemaMetadata: [OpenSwiftData.Schema.PropertyMetadata] {
                    [
                        OpenSwiftData.Schema.PropertyMetadata(name: "plain", keypath: Category._$keyPath_plain, defaultValue: nil, metadata: OpenSwiftData.Schema.Attribute()),
                        OpenSwiftData.Schema.PropertyMetadata(name: "images", keypath: Category._$keyPath_images, defaultValue: [RemoteImage](), metadata: OpenSwiftData.Schema.Relationship()),
                        OpenSwiftData.Schema.PropertyMetadata(name: "checkIn", keypath: Category._$keyPath_checkIn, defaultValue: nil, metadata: nil),
                        OpenSwiftData.Schema.PropertyMetadata(name: "note", keypath: Category._$keyPath_note, defaultValue: nil, metadata: nil),
                        OpenSwiftData.Schema.PropertyMetadata(name: "default", keypath: Category._$keyPath_default, defaultValue: 0, metadata: nil),
                        OpenSwiftData.Schema.PropertyMetadata(name: "alreadyDone", keypath: Category._$keyPath_alreadyDone, defaultValue: nil, metadata: nil)
                    ]
                }

                public required init(backingData: any OpenSwiftData.BackingData<Category>) {
                    _plain = _SwiftDataNoType()
                    _images = _SwiftDataNoType()
                    _checkIn = _SwiftDataNoType()
                    _note = _SwiftDataNoType()
                    _default = _SwiftDataNoType()
                    _alreadyDone = _SwiftDataNoType()
                    self.persistentBackingData = backingData
                }

                @Transient nonisolated(unsafe) var _$observation: OpenSwiftData._ModelObservation? = nil

                public typealias _$RootModel = Category

                public class func _$keyPaths_Category<_S: Category>(rootedAt _: _S.Type) -> [AnyKeyPath] {
                    [\_S.plain, \_S.images, \_S.checkIn, \_S.note, \_S.`default`, \_S.alreadyDone]
                }

                public class var _$keyPathsRootedHere: [AnyKeyPath] {
                    _$keyPaths_Category(rootedAt: Self.self)
                }

                internal nonisolated func access<_M>(keyPath: KeyPath<Category, _M>) {
                    if _$observation == nil {
                        guard OpenSwiftData._ModelObservation.isTracking else {
                            return
                        }
                        _$observation = OpenSwiftData._ModelObservation()
                    }
                    _$observation!.registrar.access(self, keyPath: keyPath)
                }

                internal nonisolated func withMutation<_M, _MR>(keyPath: KeyPath<Category, _M>, _ mutation: () throws -> _MR) rethrows -> _MR {
                    guard let observation = _$observation else {
                        return try mutation()
                    }
                    return try observation.registrar.withMutation(of: self, keyPath: keyPath, mutation)
                }

                internal struct _SwiftDataNoType {
                }
            }

            extension Category: OpenSwiftData.PersistentModel, Observation.Observable {
            }
            """#,
            macroSpecs: modelOnly
        )
    }

    /// The compiler passes only the protocols still missing; the extension adds exactly those.
    func testExtensionAddsOnlyMissingConformances() {
        let onlyPersistentModel = ["Model": MacroSpec(type: ModelMacro.self, conformances: ["PersistentModel"])]
        assertMacroExpansion(
            "@Model final class Empty: Observable {}",
            expandedSource: "final class Empty: Observable {\n" + modelMembers("Empty", metadata: [], storage: []) + """

            }

            extension Empty: OpenSwiftData.PersistentModel {
            }
            """,
            macroSpecs: onlyPersistentModel
        )
        let nothingMissing = ["Model": MacroSpec(type: ModelMacro.self, conformances: [])]
        assertMacroExpansion(
            "@Model final class Empty: PersistentModel {}",
            expandedSource: "final class Empty: PersistentModel {\n" + modelMembers("Empty", metadata: [], storage: []) + "\n}",
            macroSpecs: nothingMissing
        )
    }

    /// A class the compiler does not list `PersistentModel` for inherits it from a
    /// `@Model` superclass: its members override the superclass's.
    func testSubclassOfAModel() {
        let inherited = ["Model": MacroSpec(type: ModelMacro.self, conformances: [])]
        assertMacroExpansion(
            """
            @Model class BusinessTrip: Trip {
                var expenseCode: String
            }
            """,
            expandedSource: #"""
            class BusinessTrip: Trip {
                @_PersistedProperty
                var expenseCode: String

                @Transient private var _$backingData_BusinessTrip: (any OpenSwiftData.BackingData<BusinessTrip>)? = nil

                override public var persistentBackingData: any OpenSwiftData.BackingData<_$RootModel> {
                    get {
                        let inherited = super.persistentBackingData
                        if let backingData = _$backingData_BusinessTrip {
                            _$backingData_BusinessTrip = nil
                            let adopted = OpenSwiftData._$adoptBackingData(backingData, from: inherited)
                            super.persistentBackingData = adopted
                            return adopted
                        }
                        if OpenSwiftData._$backingData(inherited, covers: BusinessTrip.self) {
                            return inherited
                        }
                        let adopted = OpenSwiftData._$adoptBackingData(BusinessTrip.createBackingData(), from: inherited)
                        super.persistentBackingData = adopted
                        return adopted
                    }
                    set {
                        _$backingData_BusinessTrip = nil
                        super.persistentBackingData = newValue
                    }
                }

                override public class var schemaMetadata: [OpenSwiftData.Schema.PropertyMetadata] {
                    super.schemaMetadata + [
                        OpenSwiftData.Schema.PropertyMetadata(name: "expenseCode", keypath: BusinessTrip._$keyPath_expenseCode, defaultValue: nil, metadata: nil)
                    ]
                }

                public required init(backingData: any OpenSwiftData.BackingData<_$RootModel>) {
                    _expenseCode = _SwiftDataNoType()
                    _$backingData_BusinessTrip = nil
                    super.init(backingData: backingData)
                }

                internal nonisolated func access<_M>(keyPath: KeyPath<BusinessTrip, _M>) {
                    if _$observation == nil {
                        guard OpenSwiftData._ModelObservation.isTracking else {
                            return
                        }
                        _$observation = OpenSwiftData._ModelObservation()
                    }
                    _$observation!.registrar.access(self, keyPath: keyPath)
                }

                internal nonisolated func withMutation<_M, _MR>(keyPath: KeyPath<BusinessTrip, _M>, _ mutation: () throws -> _MR) rethrows -> _MR {
                    guard let observation = _$observation else {
                        return try mutation()
                    }
                    return try observation.registrar.withMutation(of: self, keyPath: keyPath, mutation)
                }

                public class func _$keyPaths_BusinessTrip<_S: BusinessTrip>(rootedAt _: _S.Type) -> [AnyKeyPath] {
                    [\_S.expenseCode]
                }

                override public class var _$keyPathsRootedHere: [AnyKeyPath] {
                    super._$keyPathsRootedHere + _$keyPaths_BusinessTrip(rootedAt: Self.self)
                }
            }
            """#,
            macroSpecs: inherited
        )
    }

    func testNotAClass() {
        for (keyword, body) in [("struct", "var x = 0"), ("enum", "case a"), ("actor", "var x = 0"), ("protocol", "var x: Int { get }")] {
            assertMacroExpansion(
                """
                @Model \(keyword) Thing {
                    \(body)
                }
                """,
                expandedSource: """
                \(keyword) Thing {
                    \(body)
                }
                """,
                diagnostics: [DiagnosticSpec(message: "@Model can only be applied to a class", line: 1, column: 1)],
                macroSpecs: allMacros
            )
        }
    }

    func testDescriptionIsRejected() {
        assertMacroExpansion(
            #"""
            @Model final class Note {
                var description: String = ""
            }
            """#,
            expandedSource: #"""
            final class Note {
                @_PersistedProperty
                var description: String = ""

                @Transient private var _$backingData_Note: (any OpenSwiftData.BackingData<Note>)? = nil

                public var persistentBackingData: any OpenSwiftData.BackingData<Note> {
                    get {
                        if let backingData = _$backingData_Note {
                            return backingData
                        }
                        let backingData = Note.createBackingData()
                        _$backingData_Note = backingData
                        return backingData
                    }
                    set {
                        _$backingData_Note = newValue
                    }
                }

                public static var schemaMetadata: [OpenSwiftData.Schema.PropertyMetadata] {
                    [
                        OpenSwiftData.Schema.PropertyMetadata(name: "description", keypath: Note._$keyPath_description, defaultValue: "" as String, metadata: nil)
                    ]
                }

                public required init(backingData: any OpenSwiftData.BackingData<Note>) {
                    _description = _SwiftDataNoType()
                    self.persistentBackingData = backingData
                }

                @Transient nonisolated(unsafe) private var _$observation: OpenSwiftData._ModelObservation? = nil

                internal nonisolated func access<_M>(keyPath: KeyPath<Note, _M>) {
                    if _$observation == nil {
                        guard OpenSwiftData._ModelObservation.isTracking else {
                            return
                        }
                        _$observation = OpenSwiftData._ModelObservation()
                    }
                    _$observation!.registrar.access(self, keyPath: keyPath)
                }

                internal nonisolated func withMutation<_M, _MR>(keyPath: KeyPath<Note, _M>, _ mutation: () throws -> _MR) rethrows -> _MR {
                    guard let observation = _$observation else {
                        return try mutation()
                    }
                    return try observation.registrar.withMutation(of: self, keyPath: keyPath, mutation)
                }

                internal struct _SwiftDataNoType {
                }
            }

            extension Note: OpenSwiftData.PersistentModel, Observation.Observable {
            }
            """#,
            diagnostics: [DiagnosticSpec(
                message: "stored property 'description' conflicts with CustomStringConvertible; SwiftData disallows it, rename the property",
                line: 2, column: 9)],
            macroSpecs: modelOnly
        )
    }

    /// A `let` stays a stored property of the instance: it is listed in the schema and
    /// `init(backingData:)` fills it from the store (#39, point 4).
    func testLetIsPersistedAndFilledFromTheStore() {
        assertMacroExpansion(
            #"""
            @Model final class Note {
                let title: String
                var body: String
                init(title: String, body: String) { self.title = title; self.body = body }
            }
            """#,
            expandedSource: #"""
            final class Note {
                let title: String
                @_PersistedProperty
                var body: String
                init(title: String, body: String) { self.title = title; self.body = body }

            """# + modelMembers("Note", metadata: [
                #"name: "title", keypath: \Note.title, defaultValue: nil, metadata: nil"#,
                #"name: "body", keypath: Note._$keyPath_body, defaultValue: nil, metadata: nil"#,
            ], storage: [
                #"self.title = OpenSwiftData._$constantValue(backingData, forKey: \Note.title)"#, "_body",
            ]) + """

            }

            extension Note: OpenSwiftData.PersistentModel, Observation.Observable {
            }
            """,
            macroSpecs: modelOnly
        )
    }

    /// A `let` with an initial value cannot be filled from the store (Swift lets no
    /// initializer replace it): error, with a fix-it to `var`.
    func testLetWithInitialValueIsRejectedWithFixIt() {
        assertMacroExpansion(
            #"""
            @Model final class Note {
                let title: String = "untitled"
                init() {}
            }
            """#,
            expandedSource: #"""
            final class Note {
                let title: String = "untitled"
                init() {}

            """# + modelMembers("Note", metadata: [], storage: []) + """

            }

            extension Note: OpenSwiftData.PersistentModel, Observation.Observable {
            }
            """,
            diagnostics: [DiagnosticSpec(
                message: "persisted 'let' property 'title' cannot have an initial value: a model fetched from the store would show it instead of the stored value (assign it in the initializer, declare it 'var', or mark it @Transient)",
                line: 2, column: 5,
                fixIts: [FixItSpec(message: "replace 'let' with 'var'")])],
            macroSpecs: modelOnly,
            applyFixIts: ["replace 'let' with 'var'"],
            fixedSource: #"""
            @Model final class Note {
                var title: String = "untitled"
                init() {}
            }
            """#
        )
    }

    func testObserversAreRejected() {
        assertMacroExpansion(
            #"""
            @Model final class Counter {
                var value: Int = 0 {
                    didSet { print(value) }
                }
            }
            """#,
            expandedSource: #"""
            final class Counter {
                var value: Int = 0 {
                    didSet { print(value) }
                }

            """# + modelMembers("Counter", metadata: [], storage: []) + """

            }

            extension Counter: OpenSwiftData.PersistentModel, Observation.Observable {
            }
            """,
            diagnostics: [DiagnosticSpec(
                message: "persisted property 'value' cannot have 'willSet'/'didSet' observers: SwiftData does not call them; observe the model with Observation instead, or mark the property @Transient",
                line: 2, column: 24)],
            macroSpecs: modelOnly
        )
    }

    func testMultipleBindingsAreRejected() {
        assertMacroExpansion(
            #"""
            @Model final class Point {
                var x = 0, y = 0
            }
            """#,
            expandedSource: #"""
            final class Point {
                var x = 0, y = 0

            """# + modelMembers("Point", metadata: [], storage: []) + """

            }

            extension Point: OpenSwiftData.PersistentModel, Observation.Observable {
            }
            """,
            diagnostics: [DiagnosticSpec(message: "@Model properties must be declared one per 'var'", line: 2, column: 5)],
            macroSpecs: modelOnly
        )
    }
}
