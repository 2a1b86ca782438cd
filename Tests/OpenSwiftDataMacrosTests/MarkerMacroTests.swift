import OpenSwiftDataMacros
import SwiftSyntaxMacrosTestSupport
import XCTest

/// `@Attribute`, `@Relationship` and `@Transient`: markers that generate nothing.
final class MarkerMacroTests: XCTestCase {
    func testMarkersExpandToNothing() {
        assertMacroExpansion(
            #"""
            class Trip {
                @Attribute(.unique, originalName: "n") var name: String
                @Relationship(deleteRule: .cascade, inverse: \Item.trip) var items: [Item] = []
                @Transient var selected = false
                @Transient var note: String?
                @Transient var computed: Int { 1 }
                @Transient static var shared: Int
            }
            """#,
            expandedSource: #"""
            class Trip {
                var name: String
                var items: [Item] = []
                var selected = false
                var note: String?
                var computed: Int { 1 }
                static var shared: Int
            }
            """#,
            macroSpecs: allMacros
        )
    }

    func testTransientNeedsDefaultValue() {
        assertMacroExpansion(
            #"""
            class Trip {
                @Transient var missing: Int
                @Transient let fixed: String?
                @Transient var `default`: Int
            }
            """#,
            expandedSource: #"""
            class Trip {
                var missing: Int
                let fixed: String?
                var `default`: Int
            }
            """#,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Transient property 'missing' needs a default value: SwiftData resets it to that value on every fetch",
                    line: 2, column: 20),
                DiagnosticSpec(
                    message: "@Transient property 'fixed' needs a default value: SwiftData resets it to that value on every fetch",
                    line: 3, column: 20),
                DiagnosticSpec(
                    message: "@Transient property '`default`' needs a default value: SwiftData resets it to that value on every fetch",
                    line: 4, column: 20),
            ],
            macroSpecs: allMacros
        )
    }
}
