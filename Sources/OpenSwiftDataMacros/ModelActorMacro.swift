import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@ModelActor`: gives an actor its own `ModelContext`, run on a serial model executor, so
/// that models can be used off the main actor. The `ModelActor` protocol's extension supplies
/// `unownedExecutor` (from `modelExecutor`) and `modelContext`.
public struct ModelActorMacro {}

extension ModelActorMacro: MemberMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard declaration.is(ActorDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: SwiftDataDiagnostic.modelActorNotAnActor))
            return []
        }
        return [
            "nonisolated let modelExecutor: any OpenSwiftData.ModelExecutor",
            "nonisolated let modelContainer: OpenSwiftData.ModelContainer",
            """
            init(modelContainer: OpenSwiftData.ModelContainer) {
                let modelContext = OpenSwiftData.ModelContext(modelContainer)
                self.modelExecutor = OpenSwiftData.DefaultSerialModelExecutor(modelContext: modelContext)
                self.modelContainer = modelContainer
            }
            """,
        ]
    }
}

extension ModelActorMacro: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard declaration.is(ActorDeclSyntax.self), !protocols.isEmpty else { return [] }
        let decl: DeclSyntax = "extension \(type.trimmed): OpenSwiftData.ModelActor {}"
        return [decl.cast(ExtensionDeclSyntax.self)]
    }
}
