import OpenSwiftDataMacros
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosTestSupport
import XCTest

/// `@_PersistedProperty`, the accessors and peer storage behind each persisted property.
final class PersistedPropertyMacroTests: XCTestCase {
    func testAccessorsAndPeerStorage() {
        assertMacroExpansion(
            #"""
            final class Trip {
                @_PersistedProperty var name: String
                @_PersistedProperty var `default`: Int = 1
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

                @Transient private var _name: _SwiftDataNoType

                private static let _$keyPath_name = \Trip.name
                var `default`: Int {
                    @storageRestrictions(accesses: _$backingData_Trip, initializes: _default)
                    init(initialValue) {
                        if initialValue != 1 {
                            if _$backingData_Trip == nil {
                                _$backingData_Trip = Trip.createBackingData()
                            }
                            _$backingData_Trip!._$setValue(forKey: Trip._$keyPath_default, to: initialValue)
                        }
                        _default = _SwiftDataNoType()
                    }
                    get {
                        access(keyPath: Trip._$keyPath_default)
                        return self._$getValue(forKey: Trip._$keyPath_default)
                    }
                    set {
                        withMutation(keyPath: Trip._$keyPath_default) {
                            self._$setValue(forKey: Trip._$keyPath_default, to: newValue)
                        }
                    }
                }

                @Transient private var _default: _SwiftDataNoType

                private static let _$keyPath_default = \Trip.`default`
            }
            """#,
            macroSpecs: ["_PersistedProperty": MacroSpec(type: PersistedPropertyMacro.self)]
        )
    }

    /// A literal of a type that is not a standard one may run its own
    /// `init(…Literal:)`, so its `init` accessor still writes it.
    func testLiteralOfAUserTypeIsWritten() {
        assertMacroExpansion(
            #"""
            final class Trip {
                @_PersistedProperty var kind: Kind = "road"
            }
            """#,
            expandedSource: #"""
            final class Trip {
                var kind: Kind {
                    @storageRestrictions(accesses: _$backingData_Trip, initializes: _kind)
                    init(initialValue) {
                        if _$backingData_Trip == nil {
                            _$backingData_Trip = Trip.createBackingData()
                        }
                        _$backingData_Trip!._$setValue(forKey: Trip._$keyPath_kind, to: initialValue)
                        _kind = _SwiftDataNoType()
                    }
                    get {
                        access(keyPath: Trip._$keyPath_kind)
                        return self._$getValue(forKey: Trip._$keyPath_kind)
                    }
                    set {
                        withMutation(keyPath: Trip._$keyPath_kind) {
                            self._$setValue(forKey: Trip._$keyPath_kind, to: newValue)
                        }
                    }
                }

                @Transient private var _kind: _SwiftDataNoType

                private static let _$keyPath_kind = \Trip.kind
            }
            """#,
            macroSpecs: ["_PersistedProperty": MacroSpec(type: PersistedPropertyMacro.self)]
        )
    }

    /// The peer's `@Transient` is exempt from the "needs a default value" check.
    func testPeerStoragePassesTransientCheck() {
        assertMacroExpansion(
            #"""
            final class Trip {
                @_PersistedProperty var name: String
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
            }
            """#,
            macroSpecs: [
                "_PersistedProperty": MacroSpec(type: PersistedPropertyMacro.self),
                "Transient": MacroSpec(type: TransientMacro.self),
            ]
        )
    }

    func testOutsideAModelClass() {
        assertMacroExpansion(
            #"""
            struct NotAModel {
                @_PersistedProperty var name: String
            }
            """#,
            expandedSource: #"""
            struct NotAModel {
                var name: String
            }
            """#,
            diagnostics: [DiagnosticSpec(
                message: "@_PersistedProperty is generated by @Model and can only be used on a stored property of a @Model class",
                line: 2, column: 5)],
            macroSpecs: ["_PersistedProperty": MacroSpec(type: PersistedPropertyMacro.self)]
        )
    }

    /// `@Model` never attaches the macro to such a property; written by hand, it is still refused.
    func testObserversWhenAppliedByHand() {
        assertMacroExpansion(
            #"""
            final class Trip {
                @_PersistedProperty var count: Int = 0 {
                    willSet { }
                }
            }
            """#,
            expandedSource: #"""
            final class Trip {
                var count: Int = 0 {
                    willSet { }
                }
            }
            """#,
            diagnostics: [DiagnosticSpec(
                message: "persisted property 'count' cannot have 'willSet'/'didSet' observers: SwiftData does not call them; observe the model with Observation instead, or mark the property @Transient",
                line: 2, column: 44)],
            macroSpecs: ["_PersistedProperty": MacroSpec(type: PersistedPropertyMacro.self)]
        )
    }
}
