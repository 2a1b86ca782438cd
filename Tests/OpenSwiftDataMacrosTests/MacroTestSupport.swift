import OpenSwiftDataMacros
import SwiftSyntaxMacroExpansion

/// Every SwiftData macro under the name user code spells it. `@Model` and `@ModelActor` get
/// the conformances the compiler would pass for a type that has none of them yet.
let allMacros: [String: MacroSpec] = [
    "Model": MacroSpec(type: ModelMacro.self, conformances: ["Observable", "PersistentModel"]),
    "_PersistedProperty": MacroSpec(type: PersistedPropertyMacro.self),
    "Attribute": MacroSpec(type: AttributeMacro.self),
    "Relationship": MacroSpec(type: RelationshipMacro.self),
    "Transient": MacroSpec(type: TransientMacro.self),
    "Unique": MacroSpec(type: UniqueMacro.self),
    "Index": MacroSpec(type: IndexMacro.self),
    "ModelActor": MacroSpec(type: ModelActorMacro.self, conformances: ["ModelActor"]),
]

/// Only `@Model`: the memberAttribute role's `@_PersistedProperty` stays visible, unexpanded.
let modelOnly: [String: MacroSpec] = ["Model": allMacros["Model"]!]

/// The members `@Model` adds to a class named `type`, for tests whose subject is elsewhere
/// (the Trip test in `ModelMacroTests` spells them out in full). Starts with the blank line
/// the expansion puts before them. `metadata` holds the
/// `PropertyMetadata(...)` arguments, one per persisted property; `storage` the peer names
/// (or, for a `let`, the whole line `init(backingData:)` fills it with).
func modelMembers(_ type: String, metadata: [String], storage: [String]) -> String {
    let entries = metadata.isEmpty
        ? "[]"
        : "[\n" + metadata.map { "            OpenSwiftData.Schema.PropertyMetadata(\($0))" }.joined(separator: ",\n") + "\n        ]"
    // (A `let`'s line, `self.name = ...`, is given whole.)
    let inits = storage.map { $0.hasPrefix("self.") ? "        \($0)\n" : "        \($0) = _SwiftDataNoType()\n" }.joined()
    return """

        @Transient private var _$backingData_\(type): (any OpenSwiftData.BackingData<\(type)>)? = nil

        public var persistentBackingData: any OpenSwiftData.BackingData<\(type)> {
            get {
                if let backingData = _$backingData_\(type) {
                    return backingData
                }
                let backingData = \(type).createBackingData()
                _$backingData_\(type) = backingData
                return backingData
            }
            set {
                _$backingData_\(type) = newValue
            }
        }

        public static var schemaMetadata: [OpenSwiftData.Schema.PropertyMetadata] {
            \(entries)
        }

        public required init(backingData: any OpenSwiftData.BackingData<\(type)>) {
    \(inits)        self.persistentBackingData = backingData
        }

        @Transient nonisolated(unsafe) private var _$observation: OpenSwiftData._ModelObservation? = nil

        internal nonisolated func access<_M>(keyPath: KeyPath<\(type), _M>) {
            if _$observation == nil {
                guard OpenSwiftData._ModelObservation.isTracking else {
                    return
                }
                _$observation = OpenSwiftData._ModelObservation()
            }
            _$observation!.registrar.access(self, keyPath: keyPath)
        }

        internal nonisolated func withMutation<_M, _MR>(keyPath: KeyPath<\(type), _M>, _ mutation: () throws -> _MR) rethrows -> _MR {
            guard let observation = _$observation else {
                return try mutation()
            }
            return try observation.registrar.withMutation(of: self, keyPath: keyPath, mutation)
        }

        internal struct _SwiftDataNoType {
        }
    """
}
