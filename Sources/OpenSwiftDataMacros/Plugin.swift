import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plugin that serves SwiftData's macros (`@Model`, `@Attribute`, `#Unique`, …).
@main
struct OpenSwiftDataMacrosPlugin: CompilerPlugin {
    let providingMacros: [Macro.Type] = [
        ModelMacro.self,
        PersistedPropertyMacro.self,
        AttributeMacro.self,
        RelationshipMacro.self,
        TransientMacro.self,
        UniqueMacro.self,
        IndexMacro.self,
        ModelActorMacro.self,
    ]
}
