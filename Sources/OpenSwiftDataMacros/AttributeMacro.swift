import SwiftSyntax
import SwiftSyntaxMacros

/// `@Attribute(...)`: a marker. `@Model` reads its arguments verbatim into the property's
/// `Schema.Attribute` in `schemaMetadata`, so the macro itself generates nothing.
public struct AttributeMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        []
    }
}
