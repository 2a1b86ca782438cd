import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@Transient`: a marker that keeps `@Model` from persisting the property. It generates
/// nothing, but checks that the property has a default value, since a fetched object is built
/// by `init(backingData:)`, which can only give transient properties their defaults.
///
/// Optionals count as having one (`nil`), as for any stored property. The `_name` peers that
/// `@_PersistedProperty` generates (type `_SwiftDataNoType`) are exempt: they are initialized
/// by the `init` accessor and by `init(backingData:)`.
public struct TransientMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let property = declaration.as(VariableDeclSyntax.self), !property.isStatic, !property.isComputed else {
            return []
        }
        for binding in property.bindings where binding.initializer == nil {
            let type = binding.typeAnnotation?.type
            if type?.isOptional == true && !property.isLet { continue }
            if type?.trimmedDescription == "_SwiftDataNoType" { continue }
            let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.trimmed.text ?? binding.pattern.trimmedDescription
            context.diagnose(Diagnostic(node: binding.pattern, message: SwiftDataDiagnostic.transientWithoutDefault(name)))
        }
        return []
    }
}
