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
                    @storageRestrictions(accesses: _$backingData, initializes: _name)
                    init(initialValue) {
                        _$backingData.setValue(forKey: \Trip.name, to: initialValue)
                        _name = _SwiftDataNoType()
                    }
                    get {
                        access(keyPath: \.name)
                        return self.getValue(forKey: \.name)
                    }
                    set {
                        withMutation(keyPath: \.name) {
                            self.setValue(forKey: \.name, to: newValue)
                        }
                    }
                }

                private var _name: _SwiftDataNoType
                var destination: String {
                    @storageRestrictions(accesses: _$backingData, initializes: _destination)
                    init(initialValue) {
                        _$backingData.setValue(forKey: \Trip.destination, to: initialValue)
                        _destination = _SwiftDataNoType()
                    }
                    get {
                        access(keyPath: \.destination)
                        return self.getValue(forKey: \.destination)
                    }
                    set {
                        withMutation(keyPath: \.destination) {
                            self.setValue(forKey: \.destination, to: newValue)
                        }
                    }
                }

                private var _destination: _SwiftDataNoType
                var isFavorite: Bool {
                    @storageRestrictions(accesses: _$backingData, initializes: _isFavorite)
                    init(initialValue) {
                        _$backingData.setValue(forKey: \Trip.isFavorite, to: initialValue)
                        _isFavorite = _SwiftDataNoType()
                    }
                    get {
                        access(keyPath: \.isFavorite)
                        return self.getValue(forKey: \.isFavorite)
                    }
                    set {
                        withMutation(keyPath: \.isFavorite) {
                            self.setValue(forKey: \.isFavorite, to: newValue)
                        }
                    }
                }

                private var _isFavorite: _SwiftDataNoType
                var notes: String? {
                    @storageRestrictions(accesses: _$backingData, initializes: _notes)
                    init(initialValue) {
                        _$backingData.setValue(forKey: \Trip.notes, to: initialValue)
                        _notes = _SwiftDataNoType()
                    }
                    get {
                        access(keyPath: \.notes)
                        return self.getValue(forKey: \.notes)
                    }
                    set {
                        withMutation(keyPath: \.notes) {
                            self.setValue(forKey: \.notes, to: newValue)
                        }
                    }
                }

                private var _notes: _SwiftDataNoType
                var bucketList: [BucketListItem] {
                    @storageRestrictions(accesses: _$backingData, initializes: _bucketList)
                    init(initialValue) {
                        _$backingData.setValue(forKey: \Trip.bucketList, to: initialValue)
                        _bucketList = _SwiftDataNoType()
                    }
                    get {
                        access(keyPath: \.bucketList)
                        return self.getValue(forKey: \.bucketList)
                    }
                    set {
                        withMutation(keyPath: \.bucketList) {
                            self.setValue(forKey: \.bucketList, to: newValue)
                        }
                    }
                }

                private var _bucketList: _SwiftDataNoType
                var living: LivingAccommodation? {
                    @storageRestrictions(accesses: _$backingData, initializes: _living)
                    init(initialValue) {
                        _$backingData.setValue(forKey: \Trip.living, to: initialValue)
                        _living = _SwiftDataNoType()
                    }
                    get {
                        access(keyPath: \.living)
                        return self.getValue(forKey: \.living)
                    }
                    set {
                        withMutation(keyPath: \.living) {
                            self.setValue(forKey: \.living, to: newValue)
                        }
                    }
                }

                private var _living: _SwiftDataNoType
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

                private var _$backingData: any OpenSwiftData.BackingData<Trip> = Trip.createBackingData()

                public var persistentBackingData: any OpenSwiftData.BackingData<Trip> {
                    get {
                        _$backingData
                    }
                    set {
                        _$backingData = newValue
                    }
                }

                public static var schemaMetadata: [OpenSwiftData.Schema.PropertyMetadata] {
                    [
                        OpenSwiftData.Schema.PropertyMetadata(name: "name", keypath: \Trip.name, defaultValue: nil, metadata: OpenSwiftData.Schema.Attribute(.unique)),
                        OpenSwiftData.Schema.PropertyMetadata(name: "destination", keypath: \Trip.destination, defaultValue: nil, metadata: nil),
                        OpenSwiftData.Schema.PropertyMetadata(name: "isFavorite", keypath: \Trip.isFavorite, defaultValue: false as Bool, metadata: nil),
                        OpenSwiftData.Schema.PropertyMetadata(name: "notes", keypath: \Trip.notes, defaultValue: nil, metadata: nil),
                        OpenSwiftData.Schema.PropertyMetadata(name: "bucketList", keypath: \Trip.bucketList, defaultValue: [] as [BucketListItem], metadata: OpenSwiftData.Schema.Relationship(deleteRule: .cascade, inverse: \BucketListItem.trip)),
                        OpenSwiftData.Schema.PropertyMetadata(name: "living", keypath: \Trip.living, defaultValue: nil, metadata: nil)
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

                private let _$observationRegistrar = Observation.ObservationRegistrar()

                internal nonisolated func access<_M>(keyPath: KeyPath<Trip, _M>) {
                    _$observationRegistrar.access(self, keyPath: keyPath)
                }

                internal nonisolated func withMutation<_M, _MR>(keyPath: KeyPath<Trip, _M>, _ mutation: () throws -> _MR) rethrows -> _MR {
                    try _$observationRegistrar.withMutation(of: self, keyPath: keyPath, mutation)
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

            """# + modelMembers("Category", metadata: [
                #"name: "plain", keypath: \Category.plain, defaultValue: nil, metadata: OpenSwiftData.Schema.Attribute()"#,
                #"name: "images", keypath: \Category.images, defaultValue: [RemoteImage](), metadata: OpenSwiftData.Schema.Relationship()"#,
                #"name: "checkIn", keypath: \Category.checkIn, defaultValue: nil, metadata: nil"#,
                #"name: "note", keypath: \Category.note, defaultValue: nil, metadata: nil"#,
                #"name: "default", keypath: \Category.`default`, defaultValue: 0, metadata: nil"#,
                #"name: "alreadyDone", keypath: \Category.alreadyDone, defaultValue: nil, metadata: nil"#,
            ], storage: ["_plain", "_images", "_checkIn", "_note", "_default", "_alreadyDone"]) + """

            }

            extension Category: OpenSwiftData.PersistentModel, Observation.Observable {
            }
            """,
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

            """# + modelMembers("Note", metadata: [
                #"name: "description", keypath: \Note.description, defaultValue: "" as String, metadata: nil"#,
            ], storage: ["_description"]) + """

            }

            extension Note: OpenSwiftData.PersistentModel, Observation.Observable {
            }
            """,
            diagnostics: [DiagnosticSpec(
                message: "stored property 'description' conflicts with CustomStringConvertible; SwiftData disallows it, rename the property",
                line: 2, column: 9)],
            macroSpecs: modelOnly
        )
    }

    /// A `let` cannot carry accessors, so it cannot be persisted: error, with a fix-it to `var`.
    func testLetIsRejectedWithFixIt() {
        assertMacroExpansion(
            #"""
            @Model final class Note {
                let title: String
                init(title: String) { self.title = title }
            }
            """#,
            expandedSource: #"""
            final class Note {
                let title: String
                init(title: String) { self.title = title }

            """# + modelMembers("Note", metadata: [], storage: []) + """

            }

            extension Note: OpenSwiftData.PersistentModel, Observation.Observable {
            }
            """,
            diagnostics: [DiagnosticSpec(
                message: "persisted property 'title' must be declared with 'var': a 'let' cannot be backed by the model's storage (use 'private(set) var' to keep it read-only, or mark it @Transient)",
                line: 2, column: 5,
                fixIts: [FixItSpec(message: "replace 'let' with 'var'")])],
            macroSpecs: modelOnly,
            applyFixIts: ["replace 'let' with 'var'"],
            fixedSource: #"""
            @Model final class Note {
                var title: String
                init(title: String) { self.title = title }
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
