import OpenSwiftDataMacros
import SwiftSyntaxMacrosTestSupport
import XCTest

/// `#Unique` and both forms of `#Index`.
final class UniqueIndexMacroTests: XCTestCase {
    func testUnique() {
        assertMacroExpansion(
            #"""
            class Book {
                #Unique<Book>([\.isbn], [\.title, \.author])
            }
            """#,
            expandedSource: #"""
            class Book {
                public static var _$uniquenessConstraints: [[AnyKeyPath]] {
                    let constraints: [[PartialKeyPath<Book>]] = [[\.isbn], [\.title, \.author]]
                    return constraints
                }
            }
            """#,
            macroSpecs: allMacros
        )
    }

    /// Without `<T>` (the compiler infers it from rooted key paths), the enclosing class is used.
    func testModelTypeFromEnclosingClass() {
        assertMacroExpansion(
            #"""
            class Book {
                #Unique([\Book.isbn])
                #Index([\Book.isbn])
            }
            """#,
            expandedSource: #"""
            class Book {
                public static var _$uniquenessConstraints: [[AnyKeyPath]] {
                    let constraints: [[PartialKeyPath<Book>]] = [[\Book.isbn]]
                    return constraints
                }
                public static var _$indices: [Any] {
                    let indices: [OpenSwiftData.Schema.Index<Book>.Types<Book>] = [.binary([\Book.isbn])]
                    return indices
                }
            }
            """#,
            macroSpecs: allMacros
        )
    }

    func testIndexFromKeyPathLists() {
        assertMacroExpansion(
            #"""
            class Trip {
                #Index<Trip>([\.destination], [\.name, \.isFavorite])
            }
            """#,
            expandedSource: #"""
            class Trip {
                public static var _$indices: [Any] {
                    let indices: [OpenSwiftData.Schema.Index<Trip>.Types<Trip>] = [.binary([\.destination]), .binary([\.name, \.isFavorite])]
                    return indices
                }
            }
            """#,
            macroSpecs: allMacros
        )
    }

    func testIndexTypedForm() {
        assertMacroExpansion(
            #"""
            class Place {
                #Index<Place>(.binary([\.name]), .rtree([\.latitude, \.longitude]))
            }
            """#,
            expandedSource: #"""
            class Place {
                public static var _$indices: [Any] {
                    let indices: [OpenSwiftData.Schema.Index<Place>.Types<Place>] = [.binary([\.name]), .rtree([\.latitude, \.longitude])]
                    return indices
                }
            }
            """#,
            macroSpecs: allMacros
        )
    }

    func testMissingModelType() {
        assertMacroExpansion(
            #"""
            #Unique([\Book.isbn])
            #Index([\Book.isbn])
            """#,
            expandedSource: "",
            diagnostics: [
                DiagnosticSpec(message: "#Unique needs the model type, as in #Unique<Trip>(...), when used outside a model class", line: 1, column: 1),
                DiagnosticSpec(message: "#Index needs the model type, as in #Index<Trip>(...), when used outside a model class", line: 2, column: 1),
            ],
            macroSpecs: allMacros
        )
    }

    func testNoArguments() {
        assertMacroExpansion(
            #"""
            class Book {
                #Unique<Book>()
                #Index<Book>()
            }
            """#,
            expandedSource: #"""
            class Book {
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "#Unique needs at least one key-path list", line: 2, column: 5),
                DiagnosticSpec(message: "#Index needs at least one key-path list", line: 3, column: 5),
            ],
            macroSpecs: allMacros
        )
    }
}
