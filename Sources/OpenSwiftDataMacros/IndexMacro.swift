import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `#Index<T>(...)`: declares the model's indices as the `_$indices` requirement of
/// `PersistentModel` (whose default is `[]`). Both of Apple's overloads expand here: a
/// key-path list `[\.a, \.b]` becomes a binary index `.binary([\.a, \.b])`, and an explicit
/// `.binary(...)`/`.rtree(...)` is copied as written.
///
/// The requirement is type-erased (`[Any]`, each element a `Schema.Index<T>.Types<T>`) for the
/// same reason as `#Unique`'s: non-final model classes cannot satisfy a requirement that nests
/// `Self` in a generic type. The body keeps the typed array so the key paths are checked.
public struct IndexMacro: DeclarationMacro {
    public static func expansion(
        of node: some FreestandingMacroExpansionSyntax,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let type = node.modelTypeName(in: context, macro: "Index") else { return [] }
        let indices = node.arguments.map { argument -> String in
            let expression = argument.expression
            return expression.is(ArrayExprSyntax.self) ? ".binary(\(expression.trimmedDescription))" : expression.trimmedDescription
        }
        return [
            """
            public static var _$indices: [Any] {
                let indices: [OpenSwiftData.Schema.Index<\(raw: type)>.Types<\(raw: type)>] = [\(raw: indices.joined(separator: ", "))]
                return indices
            }
            """,
        ]
    }
}
