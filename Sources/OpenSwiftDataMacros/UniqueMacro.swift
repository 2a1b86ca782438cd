import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `#Unique<T>([\.a], [\.b, \.c])`: declares the model's uniqueness constraints as the
/// `_$uniquenessConstraints` requirement of `PersistentModel` (whose default is `[]`), so the
/// schema can read them from the type.
///
/// The requirement is type-erased (`[[AnyKeyPath]]`): a requirement mentioning `Self` inside
/// a generic type cannot be satisfied by a non-final class, and Apple's samples declare
/// `@Model class` without `final`. The body still types the lists as `PartialKeyPath<T>`, so
/// `\.name` resolves against the model and a wrong key path is a compile error.
public struct UniqueMacro: DeclarationMacro {
    public static func expansion(
        of node: some FreestandingMacroExpansionSyntax,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let type = node.modelTypeName(in: context, macro: "Unique") else { return [] }
        let constraints = node.arguments.map { $0.expression.trimmedDescription }
        return [
            """
            public static var _$uniquenessConstraints: [[AnyKeyPath]] {
                let constraints: [[PartialKeyPath<\(raw: type)>]] = [\(raw: constraints.joined(separator: ", "))]
                return constraints
            }
            """,
        ]
    }
}

extension FreestandingMacroExpansionSyntax {
    /// The `T` of `#Unique<T>`/`#Index<T>`, or else the enclosing class; diagnoses when neither
    /// exists or when there is nothing to declare.
    func modelTypeName(in context: some MacroExpansionContext, macro: String) -> String? {
        guard !arguments.isEmpty else {
            context.diagnose(Diagnostic(node: self, message: SwiftDataDiagnostic.noArguments(macro)))
            return nil
        }
        if let argument = genericArgumentClause?.arguments.first {
            return argument.argument.trimmedDescription
        }
        if let name = context.enclosingClassName { return name }
        context.diagnose(Diagnostic(node: self, message: SwiftDataDiagnostic.missingModelType(macro)))
        return nil
    }
}
