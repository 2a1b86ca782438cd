extension Schema {
    /// An index declared with `#Index`: binary (ordered) or R-tree (spatial).
    public final class Index<T: PersistentModel>: Hashable {
        /// The kind of one index and the key paths it covers, in order.
        public enum Types<P: PersistentModel> {
            /// An ordered index over the key paths, for equality, range and sort lookups.
            case binary([PartialKeyPath<P>])
            /// A spatial index over numeric key paths (one per dimension), for
            /// nearest-neighbour fetches.
            case rtree([PartialKeyPath<P>])
        }

        /// The indexes, as declared.
        public let types: [Types<T>]

        /// Creates a description of the indexes `types`.
        public init(_ types: [Types<T>]) {
            self.types = types
        }

        /// Indexes are equal when their kinds and key paths are, in the same order.
        public static func == (lhs: Index<T>, rhs: Index<T>) -> Bool {
            lhs.types.map(\.signature) == rhs.types.map(\.signature)
        }

        /// Hashes the kinds and key paths.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(types.map(\.signature))
        }
    }
}

extension Schema.Index.Types {
    var keyPaths: [PartialKeyPath<P>] {
        switch self {
        case let .binary(paths), let .rtree(paths): paths
        }
    }

    var isRTree: Bool {
        if case .rtree = self { return true }
        return false
    }

    struct Signature: Hashable {
        var keyPaths: [AnyKeyPath]
        var isRTree: Bool
    }

    var signature: Signature { Signature(keyPaths: keyPaths.map { $0 as AnyKeyPath }, isRTree: isRTree) }
}

/// `Schema.Index.Types` with its model type erased, for reading `_$indices`.
protocol _IndexTypes {
    var _keyPaths: [AnyKeyPath] { get }
    var _isRTree: Bool { get }
}

extension Schema.Index.Types: _IndexTypes {
    var _keyPaths: [AnyKeyPath] { keyPaths.map { $0 as AnyKeyPath } }
    var _isRTree: Bool { isRTree }
}
