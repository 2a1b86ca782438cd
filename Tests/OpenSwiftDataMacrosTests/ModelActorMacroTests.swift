import OpenSwiftDataMacros
import SwiftSyntaxMacrosTestSupport
import XCTest

/// `@ModelActor`: the executor, container and initializer, and the actor-only diagnostic.
final class ModelActorMacroTests: XCTestCase {
    func testExpansion() {
        assertMacroExpansion(
            #"""
            @ModelActor
            actor DataHandler {
                func work() {}
            }
            """#,
            expandedSource: #"""
            actor DataHandler {
                func work() {}

                nonisolated let modelExecutor: any OpenSwiftData.ModelExecutor

                nonisolated let modelContainer: OpenSwiftData.ModelContainer

                init(modelContainer: OpenSwiftData.ModelContainer) {
                    let modelContext = OpenSwiftData.ModelContext(modelContainer)
                    self.modelExecutor = OpenSwiftData.DefaultSerialModelExecutor(modelContext: modelContext)
                    self.modelContainer = modelContainer
                }
            }

            extension DataHandler: OpenSwiftData.ModelActor {
            }
            """#,
            macroSpecs: allMacros
        )
    }

    /// The generated members carry the actor's access level, so a library's `public`
    /// (or `package`) model actor conforms and can be made outside its module.
    func testAccessLevelsReachTheGeneratedMembers() {
        let cases: [(written: String, members: String)] = [
            ("public actor", "public "), ("package actor", "package "), ("internal actor", ""),
            ("fileprivate actor", "fileprivate "), ("private actor", "fileprivate "), ("public final actor", "public "),
        ]
        for (written, members) in cases {
            assertMacroExpansion(
                """
                @ModelActor
                \(written) Database {
                }
                """,
                expandedSource: """
                \(written) Database {

                    \(members)nonisolated let modelExecutor: any OpenSwiftData.ModelExecutor

                    \(members)nonisolated let modelContainer: OpenSwiftData.ModelContainer

                    \(members)init(modelContainer: OpenSwiftData.ModelContainer) {
                        let modelContext = OpenSwiftData.ModelContext(modelContainer)
                        self.modelExecutor = OpenSwiftData.DefaultSerialModelExecutor(modelContext: modelContext)
                        self.modelContainer = modelContainer
                    }
                }

                extension Database: OpenSwiftData.ModelActor {
                }
                """,
                macroSpecs: allMacros
            )
        }
    }

    func testNotAnActor() {
        for keyword in ["final class", "struct"] {
            assertMacroExpansion(
                """
                @ModelActor
                \(keyword) Handler {
                }
                """,
                expandedSource: """
                \(keyword) Handler {
                }
                """,
                diagnostics: [DiagnosticSpec(message: "@ModelActor can only be applied to an actor", line: 1, column: 1)],
                macroSpecs: allMacros
            )
        }
    }
}
