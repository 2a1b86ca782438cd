import OpenSwiftDataTool
import Testing

@Suite struct ToolTests {
    @Test func parsesWithNoArguments() throws {
        _ = try Tool.parseAsRoot([])
    }
}
