// The SwiftData compatibility module: code written for Apple's SwiftData says
// `import SwiftData` and gets OpenSwiftData, Foundation and Observation, as the
// real module re-exports them.
@_exported import Foundation
@_exported import Observation
@_exported import OpenSwiftData
