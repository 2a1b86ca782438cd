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
///   `init` accessor at the start of every designated initializer; assignments in the
///   initializer then go through the setter. A literal of a standard type (see
///   `hasLiteralInitialValue`) is what the empty row holds already, so its accessor writes
///   nothing; any other initial value (`UUID()`, `.now`) is written, per instance. The type
///   of an untyped property (`var count = 0`) is inferred from that value, as for `@Observable`.
/// - A `T?` or `T!` without an initial value is handed `nil` the same way, as a stored
///   Optional is default-initialized; its accessor writes only a non-nil value (the empty
///   row holds nil), so whatever the compiler passes is kept.
///   (`Optional<T>` spelled out must be assigned, exactly as without `@Model`.)
/// - Non-generic classes get a `_$keyPath_name` static holding the property's key path, which
///   the accessors and `schemaMetadata` use, so reading a property builds no key path.
/// - The accessors call `_$getValue`/`_$setValue`, whose overloads for natively stored
///   types are inlined here and convert the value in code specialized for its type.
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
        // Each class of a hierarchy keeps its own: a subclass initializes its
        // properties before `super.init`, when its superclass's storage is not ready.
        let backingStorage = "_$backingData_\(property.type)"
        let keyPath = property.keyPathExpression
        // A literal initial value is the one `schemaMetadata` lists, which a new
        // backing data already holds: its `init` accessor, which runs at the start of
        // every designated initializer (`init(backingData:)` included), writes only
        // another value (what a subclass's initializer assigns before `super.init`
        // comes here too), so a fetched model makes no backing data only to replace it.
        // An optional without one starts as nil in the same way (the empty row holds
        // nil for it); its accessor writes only a non-nil value it is given.
        let condition = property.literalChangeCondition ?? (property.isOptionalWithoutInitialValue ? "initialValue != nil" : nil)
        let initAccessor: AccessorDeclSyntax = if let condition {
            """
            @storageRestrictions(accesses: \(raw: backingStorage), initializes: \(raw: storage))
            init(initialValue) {
                if \(raw: condition) {
                    if \(raw: backingStorage) == nil {
                        \(raw: backingStorage) = \(raw: property.type).createBackingData()
                    }
                    \(raw: backingStorage)!._$setValue(forKey: \(raw: keyPath), to: initialValue)
                }
                \(raw: storage) = _SwiftDataNoType()
            }
            """
        } else {
            """
            @storageRestrictions(accesses: \(raw: backingStorage), initializes: \(raw: storage))
            init(initialValue) {
                if \(raw: backingStorage) == nil {
                    \(raw: backingStorage) = \(raw: property.type).createBackingData()
                }
                \(raw: backingStorage)!._$setValue(forKey: \(raw: keyPath), to: initialValue)
                \(raw: storage) = _SwiftDataNoType()
            }
            """
        }
        return [
            initAccessor,
            """
            get {
                access(keyPath: \(raw: keyPath))
                return self._$getValue(forKey: \(raw: keyPath))
            }
            """,
            """
            set {
                withMutation(keyPath: \(raw: keyPath)) {
                    self._$setValue(forKey: \(raw: keyPath), to: newValue)
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

    /// Whether the initial value is a literal of a standard type (`false`, `0`, `-1.5`,
    /// `"text"` for Bool, the integer and floating-point types, String and Decimal, or
    /// an optional of one; `nil` for `T?`/`T!`; `[]`, `[:]` for any array or
    /// dictionary; or any of these with no type written, which makes the type a
    /// standard one): the same value for every instance, encoded as `schemaMetadata`'s
    /// default is, so each instance starts with the value the empty row holds. A
    /// literal of another type may run its own `init(…Literal:)` (a non-optional type
    /// may even accept `nil`), and `Date.now` or `UUID()` differ per instance: those
    /// are written.
    var hasLiteralInitialValue: Bool {
        guard let binding = decl.bindings.first, let value = binding.initializer?.value, Self.isLiteral(value) else {
            return false
        }
        guard let type = binding.typeAnnotation?.type else { return !value.is(NilLiteralExprSyntax.self) }
        if value.is(ArrayExprSyntax.self) || value.is(DictionaryExprSyntax.self) {
            let bare = type.unwrappedOptional
            return bare.is(ArrayTypeSyntax.self) || bare.is(DictionaryTypeSyntax.self)
        }
        if value.is(NilLiteralExprSyntax.self) { return type.isOptional }
        guard let name = type.unwrappedOptional.as(IdentifierTypeSyntax.self), name.genericArgumentClause == nil else {
            return false
        }
        return Self.standardLiteralTypes.contains(name.name.text)
    }

    /// For a literal initial value (`hasLiteralInitialValue`), the test of whether the
    /// `init` accessor was given another value: `initialValue != 0`, `!= nil`, or
    /// not empty for `[]` and `[:]`.
    var literalChangeCondition: String? {
        guard hasLiteralInitialValue, let binding = decl.bindings.first, let value = binding.initializer?.value else {
            return nil
        }
        if value.is(ArrayExprSyntax.self) || value.is(DictionaryExprSyntax.self) {
            return binding.typeAnnotation?.type.isOptional == true ? "initialValue?.isEmpty == false" : "!initialValue.isEmpty"
        }
        return "initialValue != \(value.trimmedDescription)"
    }

    private static let standardLiteralTypes: Set<String> = [
        "Bool", "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64",
        "Double", "Float", "String", "Decimal",
    ]

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
