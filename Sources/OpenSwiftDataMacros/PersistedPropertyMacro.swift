import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@_PersistedProperty`: added by `@Model` to each persisted stored property. It makes the
/// property computed over the model's backing data, and adds an empty `_name` peer whose only
/// job is to let the `init` accessor declare `initializes: _name`. That way the compiler still
/// checks that every initializer of the class assigns every non-defaulted property, exactly
/// as it would for a stored property.
///
/// - With an initial value (`var isFavorite = false`), the compiler passes that value to the
///   `init` accessor in every initializer, so defaults reach the backing data. The type of an
///   untyped property (`var count = 0`) is inferred from that value, as for `@Observable`.
/// - A `T?` or `T!` without an initial value needs nothing special: the compiler calls its
///   `init` accessor with `nil` in every initializer that does not assign it, as it
///   default-initializes a stored Optional, so `nil` reaches the backing data. (`Optional<T>`
///   spelled out must be assigned, exactly as without `@Model`.)
/// - Non-generic classes get a `_$keyPath_name` static holding the property's key path, which
///   the accessors and `schemaMetadata` use, so reading a property builds no key path.
/// - `willSet`/`didSet` are rejected: the property is computed after expansion and SwiftData does
///   not run observers; keeping them would make the compiler reject the generated accessors.
public struct PersistedPropertyMacro {}

extension PersistedPropertyMacro: AccessorMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let property = PersistedProperty(declaration, in: context) else {
            context.diagnose(Diagnostic(node: node, message: SwiftDataDiagnostic.persistedPropertyOutsideModel))
            return []
        }
        if property.decl.hasObservers {
            context.diagnose(Diagnostic(
                node: property.decl.bindings.first!.accessorBlock!, message: SwiftDataDiagnostic.propertyObservers(property.name)))
            return []
        }
        let storage = "_\(property.name)"
        let keyPath = property.keyPathExpression
        // A literal initial value is the one `schemaMetadata` lists, which a new
        // backing data already holds: its `init` accessor, which runs at the start of
        // every designated initializer (`init(backingData:)` included), writes nothing,
        // so a fetched model makes no backing data only to replace it.
        // An optional without one starts as nil in the same way; its accessor still
        // writes any other value it is given.
        let initAccessor: AccessorDeclSyntax = property.hasLiteralInitialValue
            ? """
            @storageRestrictions(initializes: \(raw: storage))
            init(initialValue) {
                \(raw: storage) = _SwiftDataNoType()
            }
            """
            : property.isOptionalWithoutInitialValue
            ? """
            @storageRestrictions(accesses: _$backingData, initializes: \(raw: storage))
            init(initialValue) {
                if initialValue != nil, _$backingData == nil {
                    _$backingData = \(raw: property.type).createBackingData()
                }
                if _$backingData != nil {
                    _$backingData!.setValue(forKey: \(raw: keyPath), to: initialValue)
                }
                \(raw: storage) = _SwiftDataNoType()
            }
            """
            : """
            @storageRestrictions(accesses: _$backingData, initializes: \(raw: storage))
            init(initialValue) {
                if _$backingData == nil {
                    _$backingData = \(raw: property.type).createBackingData()
                }
                _$backingData!.setValue(forKey: \(raw: keyPath), to: initialValue)
                \(raw: storage) = _SwiftDataNoType()
            }
            """
        return [
            initAccessor,
            """
            get {
                access(keyPath: \(raw: keyPath))
                return self.getValue(forKey: \(raw: keyPath))
            }
            """,
            """
            set {
                withMutation(keyPath: \(raw: keyPath)) {
                    self.setValue(forKey: \(raw: keyPath), to: newValue)
                }
            }
            """,
        ]
    }
}

extension PersistedPropertyMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        // Diagnostics are reported once, by the accessor role.
        guard let property = PersistedProperty(declaration, in: context), !property.decl.hasObservers else {
            return []
        }
        var peers: [DeclSyntax] = ["@Transient private var _\(raw: property.name): _SwiftDataNoType"]
        if !property.isInGenericClass {
            // One key path object per property, made once: a key path literal is built
            // anew each time it is evaluated, which dominated reading a property.
            peers.append("private static let \(raw: property.keyPathConstant) = \\\(raw: property.type).\(raw: property.keyPath)")
        }
        return peers
    }
}

/// The facts about one persisted property that both roles need.
private struct PersistedProperty {
    let decl: VariableDeclSyntax
    /// The name without backticks, used for the `_name` peer.
    let name: String
    /// The name as written, used in key paths.
    let keyPath: String
    /// The enclosing model class.
    let type: String
    /// Whether that class is generic (it cannot have static stored properties).
    let isInGenericClass: Bool

    /// Whether the initial value is a literal (`false`, `0`, `-1.5`, `"text"`, `nil`,
    /// `[]`, `[:]`): the same value for every instance, so the value `schemaMetadata`
    /// records is the one each instance starts with. `Date.now` or `UUID()` are not.
    var hasLiteralInitialValue: Bool {
        guard let value = decl.bindings.first?.initializer?.value else { return false }
        return Self.isLiteral(value)
    }

    /// `T?` or `T!` with no initial value: it starts as nil, as a stored optional does.
    var isOptionalWithoutInitialValue: Bool {
        guard let binding = decl.bindings.first, binding.initializer == nil, let type = binding.typeAnnotation?.type else {
            return false
        }
        return type.isOptional
    }

    private static func isLiteral(_ expr: ExprSyntax) -> Bool {
        if expr.is(BooleanLiteralExprSyntax.self) || expr.is(IntegerLiteralExprSyntax.self)
            || expr.is(FloatLiteralExprSyntax.self) || expr.is(NilLiteralExprSyntax.self) {
            return true
        }
        if let string = expr.as(StringLiteralExprSyntax.self) {
            return string.segments.allSatisfy { $0.is(StringSegmentSyntax.self) }
        }
        if let array = expr.as(ArrayExprSyntax.self) { return array.elements.isEmpty }
        if let dictionary = expr.as(DictionaryExprSyntax.self) {
            if case .colon = dictionary.content { return true }
            return false
        }
        if let prefix = expr.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "-" {
            return prefix.expression.is(IntegerLiteralExprSyntax.self) || prefix.expression.is(FloatLiteralExprSyntax.self)
        }
        return false
    }

    /// The name of the static key path constant, `_$keyPath_name`.
    var keyPathConstant: String { "_$keyPath_\(name)" }

    /// How the accessors name the property's key path: the constant, or a literal in
    /// generic classes.
    var keyPathExpression: String {
        isInGenericClass ? "\\\(type).\(keyPath)" : "\(type).\(keyPathConstant)"
    }

    init?(_ declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext) {
        guard let decl = declaration.as(VariableDeclSyntax.self),
              !decl.isLet, !decl.isStatic, !decl.isComputed,
              let name = decl.propertyName, let keyPath = decl.keyPathComponent,
              let type = context.enclosingClassName
        else { return nil }
        self.decl = decl
        self.name = name
        self.keyPath = keyPath
        self.type = type
        self.isInGenericClass = context.enclosingClassIsGeneric
    }
}
