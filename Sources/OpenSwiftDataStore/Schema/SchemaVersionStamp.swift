/// The version of the application's schema a document was last written in: a
/// `VersionedSchema`'s `versionIdentifier`, as a migration plan names it.
///
/// Documents keep it in the header's reserved word (format 3.1), so a plan can
/// tell apart versions whose models have the same shape. 32 bits hold it: a
/// present bit, then 11 bits of major, 10 of minor and 10 of patch; a version past
/// 2047.1023.1023 is not recorded, and plans then match the document by its schema.
public struct SchemaVersionStamp: Hashable, Sendable, CustomStringConvertible {
    public var major: Int
    public var minor: Int
    public var patch: Int

    public init(_ major: Int, _ minor: Int, _ patch: Int) {
        self.major = major
        self.minor = minor
        self.patch = patch
    }

    /// The header word for `stamp`: 0 when absent or too large to record.
    static func word(_ stamp: SchemaVersionStamp?) -> UInt32 {
        guard let stamp, (0..<2048).contains(stamp.major), (0..<1024).contains(stamp.minor), (0..<1024).contains(stamp.patch)
        else { return 0 }
        return 1 << 31 | UInt32(stamp.major) << 20 | UInt32(stamp.minor) << 10 | UInt32(stamp.patch)
    }

    /// The stamp a header word holds, nil when its present bit is clear.
    init?(word: UInt32) {
        guard word & (1 << 31) != 0 else { return nil }
        self.init(Int(word >> 20 & 0x7FF), Int(word >> 10 & 0x3FF), Int(word & 0x3FF))
    }

    /// Whether a document can record it.
    public var isRecordable: Bool { Self.word(self) != 0 }

    public var description: String { "\(major).\(minor).\(patch)" }
}
