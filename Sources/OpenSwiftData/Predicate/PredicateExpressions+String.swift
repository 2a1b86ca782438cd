import Foundation

// Foundation on Linux lacks the predicate expressions behind
// `localizedStandardContains` and `caseInsensitiveCompare`, so `#Predicate`
// expansions that use them would not compile. These fill the gap: the stock
// macro expands to `PredicateExpressions.build_…` calls that resolve here.

extension PredicateExpressions {
    /// `base.localizedStandardContains(other)`: case- and diacritic-insensitive
    /// containment, as Foundation's `localizedStandardContains` does.
    public struct StringLocalizedStandardContains<Root: PredicateExpression, Other: PredicateExpression>: PredicateExpression
    where Root.Output: StringProtocol, Other.Output: StringProtocol {
        /// The expression answers whether `root` contains `other`.
        public typealias Output = Bool
        /// The expression giving the string searched.
        public let root: Root
        /// The expression giving the string searched for.
        public let other: Other

        /// Creates the expression `root.localizedStandardContains(other)`.
        public init(root: Root, other: Other) {
            self.root = root
            self.other = other
        }

        /// Whether `other` occurs in `root`, ignoring case and diacritics (without a
        /// locale).
        public func evaluate(_ bindings: PredicateBindings) throws -> Bool {
            let base = try root.evaluate(bindings)
            let needle = try other.evaluate(bindings)
            return base.range(of: needle, options: [.caseInsensitive, .diacriticInsensitive]) != nil
        }
    }

    /// Builds `root.localizedStandardContains(other)` for the `#Predicate` macro.
    public static func build_localizedStandardContains<Root, Other>(_ root: Root, _ other: Other)
        -> StringLocalizedStandardContains<Root, Other> {
        StringLocalizedStandardContains(root: root, other: other)
    }

    /// `base.caseInsensitiveCompare(other)`, giving a `ComparisonResult`.
    public struct StringCaseInsensitiveCompare<Root: PredicateExpression, Other: PredicateExpression>: PredicateExpression
    where Root.Output: StringProtocol, Other.Output: StringProtocol {
        /// The expression answers how `root` orders against `other`.
        public typealias Output = ComparisonResult
        /// The expression giving the left-hand string.
        public let root: Root
        /// The expression giving the right-hand string.
        public let other: Other

        /// Creates the expression `root.caseInsensitiveCompare(other)`.
        public init(root: Root, other: Other) {
            self.root = root
            self.other = other
        }

        /// How `root` orders against `other` when case is ignored.
        public func evaluate(_ bindings: PredicateBindings) throws -> ComparisonResult {
            let base = try root.evaluate(bindings)
            let other = try other.evaluate(bindings)
            return base.caseInsensitiveCompare(other)
        }
    }

    /// Builds `root.caseInsensitiveCompare(other)` for the `#Predicate` macro.
    public static func build_caseInsensitiveCompare<Root, Other>(_ root: Root, _ other: Other)
        -> StringCaseInsensitiveCompare<Root, Other> {
        StringCaseInsensitiveCompare(root: root, other: other)
    }
}

extension PredicateExpressions.StringLocalizedStandardContains: StandardPredicateExpression
where Root: StandardPredicateExpression, Other: StandardPredicateExpression {}

extension PredicateExpressions.StringCaseInsensitiveCompare: StandardPredicateExpression
where Root: StandardPredicateExpression, Other: StandardPredicateExpression {}

extension PredicateExpressions.StringLocalizedStandardContains: Codable where Root: Codable, Other: Codable {}
extension PredicateExpressions.StringCaseInsensitiveCompare: Codable where Root: Codable, Other: Codable {}
extension PredicateExpressions.StringLocalizedStandardContains: Sendable where Root: Sendable, Other: Sendable {}
extension PredicateExpressions.StringCaseInsensitiveCompare: Sendable where Root: Sendable, Other: Sendable {}

extension PredicateExpressions.StringLocalizedStandardContains: CompilablePredicateExpression where Root: CompilablePredicateExpression, Other: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(root)
        print.visit(other)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        .value(.localizedStandardContains(try compiler.compile(root).expression, try compiler.compile(other).expression))
    }
}

extension PredicateExpressions.StringCaseInsensitiveCompare: CompilablePredicateExpression where Root: CompilablePredicateExpression, Other: CompilablePredicateExpression {
    func fingerprint(into print: inout PredicateFingerprint) {
        print.visit(root)
        print.visit(other)
    }

    func compile(with compiler: inout PredicateCompiler) throws -> PredicateCompiler.Node {
        .value(.caseInsensitiveCompare(try compiler.compile(root).expression, try compiler.compile(other).expression))
    }
}
