/// The identity of a row within one entity's table.
///
/// Permanent row identifiers are positive and never reused within a store.
/// Temporary ones (negative) name rows inserted in a change set that has not been
/// committed yet; the commit maps them to permanent identifiers.
public struct RowID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: Int64

    public init(_ rawValue: Int64) {
        self.rawValue = rawValue
    }

    public var isTemporary: Bool { rawValue < 0 }

    public static func < (lhs: RowID, rhs: RowID) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { isTemporary ? "t\(-rawValue)" : "p\(rawValue)" }
}
