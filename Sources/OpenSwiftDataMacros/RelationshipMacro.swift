import SwiftSyntax
import SwiftSyntaxMacros

/// `@Relationship(...)`: a marker. `@Model` reads its arguments verbatim into the property's
/// `Schema.Relationship` in `schemaMetadata`, so the macro itself generates nothing.
public struct RelationshipMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        []
    }
}
