import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Model`: turns a class into a `PersistentModel`.
///
/// - memberAttribute: marks every persisted stored property with `@_PersistedProperty`, which
///   reroutes it through the backing data (see `PersistedPropertyMacro`).
/// - member: the backing-data storage, `schemaMetadata` (what the schema is built from),
///   `init(backingData:)` (what a fetch uses), and the Observation plumbing. The backing
///   data is made by the first property initializer that writes (or first use), not as
///   a default value: a default would run in `init(backingData:)` too, making a backing
///   data for every fetched model only to drop it. (Initial values that are not standard
///   literals, such as `UUID()`, still write, and so still make one there.) We generate
///   the Observation plumbing ourselves instead of nesting `@Observable`, so that reads
///   and writes are observed exactly once, around the backing data. The registrar (in a
///   `_ModelObservation` box, see there) is made by the first
///   read inside `withObservationTracking` (the only way an observer can register;
///   `ObservationTrackingProbe`), so a model nobody observes, such as one inserted and
///   saved or one a loop reads, never pays its allocations; a write before any tracked
///   read has nobody to notify and skips it. Models are not `Sendable`, so the check-then-create
///   of the registrar and of the backing data runs on the one actor or thread that uses
///   the model; `nonisolated(unsafe)` only keeps the generated `nonisolated` accessors
///   compiling should a model be global-actor isolated.
/// - extension: the `PersistentModel` and `Observable` conformances the class still lacks.
///   Model objects are deliberately not made `Sendable`.
///
/// Decisions (documented here because they shape the diagnostics):
/// - A `let` stored property stays stored in the instance (an accessor macro cannot be
///   attached to a `let`) and is persisted all the same: `init(backingData:)` assigns it
///   from the store (`_$constantValue`), and inserting the model copies it into its row
///   (`ModelContext.insert`). A `let` with an initial value is an error with a fix-it to
///   `var`: Swift lets no initializer replace it, so a fetched model would show the
///   initial value, not the stored one. A `@Transient let` with a default value is fine.
/// - `willSet`/`didSet` on a persisted property are an error: the property becomes computed,
///   and SwiftData does not run observers (Apple's documentation says they are silently
///   ignored; an error is more honest than dropping user code).
/// - Untyped properties (`var count = 0`, `var animals = [Animal]()`) need nothing special: the
///   compiler infers the type of a property with an `init` accessor from its initial value.
/// - `T?`/`T!` without an initial value start as `nil`, as stored Optionals do (see
///   `PersistedPropertyMacro`).
public struct ModelMacro {}

extension ModelMacro: MemberAttributeMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingAttributesFor member: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        guard declaration.is(ClassDeclSyntax.self),
              let property = member.as(VariableDeclSyntax.self),
              property.isPersistedCandidate,
              !property.isLet,
              !property.hasObservers,
              property.bindings.count == 1,
              !property.hasAttribute(named: "_PersistedProperty")
        else { return [] }
        return ["@_PersistedProperty"]
    }
}

extension ModelMacro: MemberMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let classDecl = declaration.as(ClassDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: SwiftDataDiagnostic.modelNotAClass))
            return []
        }
        let type = classDecl.name.trimmed.text

        // Errors still produce the members, so the generated accessors of the other
        // properties resolve and the user sees only our message.
        var properties: [VariableDeclSyntax] = []
        for member in classDecl.memberBlock.members {
            guard let property = member.decl.as(VariableDeclSyntax.self), property.isPersistedCandidate else {
                continue
            }
            if property.bindings.count != 1 {
                context.diagnose(Diagnostic(node: property, message: SwiftDataDiagnostic.multipleBindings))
                continue
            }
            let name = property.propertyName ?? ""
            if name == "description" {
                context.diagnose(Diagnostic(node: property.bindings.first!.pattern, message: SwiftDataDiagnostic.descriptionProperty))
            }
            if property.isLet, property.bindings.first?.initializer != nil {
                let fixIt = FixIt(
                    message: SwiftDataFixIt(message: "replace 'let' with 'var'"),
                    changes: [.replace(
                        oldNode: Syntax(property.bindingSpecifier),
                        newNode: Syntax(property.bindingSpecifier.with(\.tokenKind, .keyword(.var))))])
                context.diagnose(Diagnostic(
                    node: property.bindingSpecifier, message: SwiftDataDiagnostic.letProperty(name), fixIts: [fixIt]))
                continue
            }
            if property.hasObservers {
                // Reported here and left stored, so that the observers are the only error.
                context.diagnose(Diagnostic(
                    node: property.bindings.first!.accessorBlock!, message: SwiftDataDiagnostic.propertyObservers(name)))
                continue
            }
            properties.append(property)
        }

        let metadata = properties.map { property -> String in
            let name = property.propertyName!
            let binding = property.bindings.first!
            var defaultValue = "nil"
            if let value = binding.initializer?.value {
                if value.is(NilLiteralExprSyntax.self) {
                    defaultValue = "nil"
                } else if let annotation = binding.typeAnnotation?.type {
                    // `as` gives literals such as `[]` or `.cascade` the property's type.
                    defaultValue = "\(value.trimmedDescription) as \(annotation.withoutImplicitUnwrap)"
                } else {
                    defaultValue = value.trimmedDescription
                }
            }
            var schemaProperty = "nil"
            if let attribute = property.attribute(named: "Attribute") {
                schemaProperty = "OpenSwiftData.Schema.Attribute(\(attribute.argumentText))"
            } else if let relationship = property.attribute(named: "Relationship") {
                schemaProperty = "OpenSwiftData.Schema.Relationship(\(relationship.argumentText))"
            }
            // (A `let` has no `_$keyPath_` constant: `@_PersistedProperty` makes those.)
            let keyPath = classDecl.genericParameterClause != nil || property.isLet
                ? "\\\(type).\(property.keyPathComponent!)" : "\(type)._$keyPath_\(name)"
            return "OpenSwiftData.Schema.PropertyMetadata(name: \(name.stringLiteral), keypath: \(keyPath), defaultValue: \(defaultValue), metadata: \(schemaProperty))"
        }
        let metadataBody = metadata.isEmpty
            ? "[]"
            : "[\n" + metadata.map { "        " + $0 }.joined(separator: ",\n") + "\n    ]"
        // A `let` is a stored property of the instance: filled from the store here.
        let storageInits = properties.map {
            $0.isLet
                ? "    self.\($0.keyPathComponent!) = OpenSwiftData._$constantValue(backingData, forKey: \\\(type).\($0.keyPathComponent!))\n"
                : "    _\($0.propertyName!) = _SwiftDataNoType()\n"
        }.joined()

        let storage = "_$backingData_\(type)"
        // The compiler lists `PersistentModel` only for a class that does not conform yet:
        // a class without it (and not naming it itself) inherits it from a `@Model` superclass.
        let namesPersistentModel = classDecl.inheritanceClause?.inheritedTypes
            .contains { $0.type.trimmedDescription.hasSuffix("PersistentModel") } ?? false
        let isSubclass = !namesPersistentModel && !protocols.contains { $0.trimmedDescription.hasSuffix("PersistentModel") }
        if isSubclass {
            return subclassMembers(type: type, storage: storage, metadataBody: metadataBody, storageInits: storageInits)
                + keyPathMembers(type: type, properties: properties, isSubclass: true)
        }
        let isFinal = classDecl.modifiers.contains { $0.name.tokenKind == .keyword(.final) }
        var members: [DeclSyntax] = [
            "@Transient private var \(raw: storage): (any OpenSwiftData.BackingData<\(raw: type)>)? = nil",
            """
            public var persistentBackingData: any OpenSwiftData.BackingData<\(raw: type)> {
                get {
                    if let backingData = \(raw: storage) { return backingData }
                    let backingData = \(raw: type).createBackingData()
                    \(raw: storage) = backingData
                    return backingData
                }
                set {
                    \(raw: storage) = newValue
                }
            }
            """,
            """
            public \(raw: isFinal ? "static" : "class") var schemaMetadata: [OpenSwiftData.Schema.PropertyMetadata] {
                \(raw: metadataBody)
            }
            """,
            """
            public required init(backingData: any OpenSwiftData.BackingData<\(raw: type)>) {
            \(raw: storageInits)    self.persistentBackingData = backingData
            }
            """,
            // Not private in a class that can be subclassed: a `@Model` subclass's
            // accessors use its registrar.
            "@Transient nonisolated(unsafe) \(raw: isFinal ? "private " : "")var _$observation: OpenSwiftData._ModelObservation? = nil",
        ]
        if !isFinal {
            // What a `@Model` subclass names its backing data's model type by.
            let arguments = classDecl.genericParameterClause.map {
                "<" + $0.parameters.map(\.name.text).joined(separator: ", ") + ">"
            } ?? ""
            members.append("public typealias _$RootModel = \(raw: type)\(raw: arguments)")
            members += keyPathMembers(type: type, properties: properties, isSubclass: false)
        }
        return members + observationMembers(type: type) + ["internal struct _SwiftDataNoType {}"]
    }

    /// The key paths of `type`'s own persisted properties rooted at any subclass, and
    /// `_$keyPathsRootedHere`, every persisted property's rooted at the class it is
    /// called on (dynamic `Self`), in `schemaMetadata`'s order: a predicate or sort of a
    /// subclass names an inherited property as `\Sub.name`, which is not equal to the
    /// `\Base.name` the schema lists.
    private static func keyPathMembers(type: String, properties: [VariableDeclSyntax], isSubclass: Bool) -> [DeclSyntax] {
        let paths = properties.map { "\\_S.\($0.keyPathComponent!)" }.joined(separator: ", ")
        let own = "_$keyPaths_\(type)(rootedAt: Self.self)"
        return [
            """
            public class func _$keyPaths_\(raw: type)<_S: \(raw: type)>(rootedAt _: _S.Type) -> [AnyKeyPath] {
                [\(raw: paths)]
            }
            """,
            """
            \(raw: isSubclass ? "override " : "")public class var _$keyPathsRootedHere: [AnyKeyPath] {
                \(raw: isSubclass ? "super._$keyPathsRootedHere + " + own : own)
            }
            """,
        ]
    }

    /// `access` and `withMutation` over the `_$observation` registrar, for key paths of `type`.
    private static func observationMembers(type: String) -> [DeclSyntax] {
        [
            """
            internal nonisolated func access<_M>(keyPath: KeyPath<\(raw: type), _M>) {
                if _$observation == nil {
                    guard OpenSwiftData._ModelObservation.isTracking else { return }
                    _$observation = OpenSwiftData._ModelObservation()
                }
                _$observation!.registrar.access(self, keyPath: keyPath)
            }
            """,
            """
            internal nonisolated func withMutation<_M, _MR>(keyPath: KeyPath<\(raw: type), _M>, _ mutation: () throws -> _MR) rethrows -> _MR {
                guard let observation = _$observation else { return try mutation() }
                return try observation.registrar.withMutation(of: self, keyPath: keyPath, mutation)
            }
            """,
        ]
    }

    /// The members of a subclass of a `@Model` class (SwiftData's model inheritance).
    ///
    /// Its own properties are written, before `super.init`, into a backing data of its
    /// own (its superclass's storage is not initialized yet); the superclass's
    /// initializer writes its properties into the superclass's. On first use the
    /// override of `persistentBackingData` moves the superclass's values into the
    /// subclass's backing data (`_$adoptBackingData`), which from then on is the one
    /// the root class stores. The schema lists the superclass's properties first.
    private static func subclassMembers(
        type: String, storage: String, metadataBody: String, storageInits: String
    ) -> [DeclSyntax] {
        let own = metadataBody == "[]" ? "" : " + \(metadataBody)"
        return [
            "@Transient private var \(raw: storage): (any OpenSwiftData.BackingData<\(raw: type)>)? = nil",
            """
            override public var persistentBackingData: any OpenSwiftData.BackingData<_$RootModel> {
                get {
                    let inherited = super.persistentBackingData
                    if let backingData = \(raw: storage) {
                        \(raw: storage) = nil
                        let adopted = OpenSwiftData._$adoptBackingData(backingData, from: inherited)
                        super.persistentBackingData = adopted
                        return adopted
                    }
                    if OpenSwiftData._$backingData(inherited, covers: \(raw: type).self) { return inherited }
                    let adopted = OpenSwiftData._$adoptBackingData(\(raw: type).createBackingData(), from: inherited)
                    super.persistentBackingData = adopted
                    return adopted
                }
                set {
                    \(raw: storage) = nil
                    super.persistentBackingData = newValue
                }
            }
            """,
            """
            override public class var schemaMetadata: [OpenSwiftData.Schema.PropertyMetadata] {
                super.schemaMetadata\(raw: own)
            }
            """,
            """
            public required init(backingData: any OpenSwiftData.BackingData<_$RootModel>) {
            \(raw: storageInits)    \(raw: storage) = nil
                super.init(backingData: backingData)
            }
            """,
        ] + observationMembers(type: type)
    }
}

extension ModelMacro: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard declaration.is(ClassDeclSyntax.self) else { return [] }
        // The compiler passes only the protocols the class does not conform to yet.
        let names = protocols.map(\.trimmedDescription)
        var conformances: [String] = []
        if names.contains(where: { $0.hasSuffix("PersistentModel") }) {
            conformances.append("OpenSwiftData.PersistentModel")
        }
        if names.contains(where: { $0 == "Observable" || $0.hasSuffix(".Observable") }) {
            conformances.append("Observation.Observable")
        }
        guard !conformances.isEmpty else { return [] }
        let decl: DeclSyntax = "extension \(type.trimmed): \(raw: conformances.joined(separator: ", ")) {}"
        return [decl.cast(ExtensionDeclSyntax.self)]
    }
}

// MARK: - Syntax helpers shared by the model macros

extension VariableDeclSyntax {
    var isStatic: Bool {
        modifiers.contains { $0.name.tokenKind == .keyword(.static) || $0.name.tokenKind == .keyword(.class) }
    }

    var isLet: Bool { bindingSpecifier.tokenKind == .keyword(.let) }

    var isLazy: Bool { modifiers.contains { $0.name.tokenKind == .keyword(.lazy) } }

    /// True when some binding has a getter (a computed property); observers alone keep it stored.
    var isComputed: Bool {
        bindings.contains { binding in
            switch binding.accessorBlock?.accessors {
            case .getter: return true
            case .accessors(let accessors):
                return accessors.contains { !$0.isObserver }
            case nil: return false
            }
        }
    }

    var hasObservers: Bool {
        bindings.contains { binding in
            if case .accessors(let accessors) = binding.accessorBlock?.accessors {
                return accessors.contains { $0.isObserver }
            }
            return false
        }
    }

    /// A stored instance property that `@Model` persists unless it is `@Transient` or already handled.
    var isPersistedCandidate: Bool {
        !isStatic && !isLazy && !isComputed && !hasAttribute(named: "Transient")
            && bindings.allSatisfy { $0.pattern.is(IdentifierPatternSyntax.self) }
    }

    /// The property name without backticks (what the schema stores).
    var propertyName: String? {
        guard bindings.count == 1, let pattern = bindings.first?.pattern.as(IdentifierPatternSyntax.self) else {
            return nil
        }
        return pattern.identifier.identifier?.name ?? pattern.identifier.trimmed.text
    }

    /// The property name as written in code (keeps backticks such as `` `default` ``).
    var keyPathComponent: String? {
        bindings.first?.pattern.as(IdentifierPatternSyntax.self)?.identifier.trimmed.text
    }

    /// Attributes match by their last component, so `@Attribute` and `@SwiftData.Attribute` both count.
    func attribute(named name: String) -> AttributeSyntax? {
        for element in attributes {
            if case .attribute(let attribute) = element,
               attribute.attributeName.trimmedDescription.split(separator: ".").last.map(String.init) == name {
                return attribute
            }
        }
        return nil
    }

    func hasAttribute(named name: String) -> Bool { attribute(named: name) != nil }
}

extension AccessorDeclSyntax {
    var isObserver: Bool {
        accessorSpecifier.tokenKind == .keyword(.willSet) || accessorSpecifier.tokenKind == .keyword(.didSet)
    }
}

extension AttributeSyntax {
    /// The argument list exactly as written (`""` for a bare attribute).
    var argumentText: String {
        if case .argumentList(let arguments) = self.arguments { return arguments.trimmedDescription }
        return ""
    }
}

extension TypeSyntax {
    /// `T!` is not allowed after `as`; `T?` means the same there.
    var withoutImplicitUnwrap: String {
        if let iuo = self.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
            return "\(iuo.wrappedType.trimmedDescription)?"
        }
        return trimmedDescription
    }

    /// `T?` and `T!`: like Swift, only the sugared spellings start out `nil` without an
    /// initializer (`var x: Optional<T>` must be assigned, with or without `@Model`).
    var isOptional: Bool {
        self.is(OptionalTypeSyntax.self) || self.is(ImplicitlyUnwrappedOptionalTypeSyntax.self)
    }

    /// `T` for `T?` and `T!`; the type itself otherwise.
    var unwrappedOptional: TypeSyntax {
        if let optional = self.as(OptionalTypeSyntax.self) { return optional.wrappedType }
        if let iuo = self.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return iuo.wrappedType }
        return self
    }
}

extension String {
    /// A Swift string literal for the text (property names are identifiers, so escaping is trivial).
    var stringLiteral: String { "\"" + self + "\"" }
}

extension MacroExpansionContext {
    /// The name of the innermost enclosing class, used to spell rooted key paths.
    /// Whether the innermost enclosing class has generic parameters.
    var enclosingClassIsGeneric: Bool {
        for node in lexicalContext {
            if let classDecl = node.as(ClassDeclSyntax.self) { return classDecl.genericParameterClause != nil }
        }
        return false
    }

    var enclosingClassName: String? {
        for node in lexicalContext {
            if let classDecl = node.as(ClassDeclSyntax.self) { return classDecl.name.trimmed.text }
            if node.is(StructDeclSyntax.self) || node.is(EnumDeclSyntax.self) || node.is(ActorDeclSyntax.self)
                || node.is(ProtocolDeclSyntax.self) || node.is(ExtensionDeclSyntax.self) {
                return nil
            }
        }
        return nil
    }
}
