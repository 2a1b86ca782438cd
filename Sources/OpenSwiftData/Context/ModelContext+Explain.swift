import Foundation
import OpenSwiftDataStore

/// How a fetch was carried out: the access path, whether the predicate ran on
/// stored rows, and how many rows it looked at. *Additive* (not in SwiftData).
public struct FetchExplanation: CustomStringConvertible, Sendable {
    /// How candidate rows were found.
    public enum AccessPath: Hashable, Sendable {
        /// Every row of the entity was tested.
        case scan
        /// A unique constraint's index gave the one candidate; the key's attributes.
        case uniqueIndex([String])
        /// A B-tree index over these attributes gave the candidates.
        case index([String], IndexLookup)
        /// The predicate named the models by identifier (`persistentModelID`); how many.
        case identifiers(Int)
        /// An R-tree index over these attributes gave the models inside the
        /// predicate's window on them (`#Index(.rtree(...))`).
        case spatialIndex([String])
    }

    /// How a B-tree index was read.
    public enum IndexLookup: Hashable, Sendable {
        /// Keys equal to constants (a whole key or a prefix of a compound one).
        case equality
        /// A range of keys (after any equal prefix).
        case range
        /// One lookup per value of a constant list (`values.contains($0.x)`).
        case inList(Int)
        /// The whole index, read for its order.
        case ordered
    }

    /// How the predicate was applied.
    public enum Filtering: Hashable, Sendable {
        /// No predicate.
        case none
        /// Compiled and run on stored values, without making model objects.
        case native
        /// Answered by the index: the predicate is a unique key's equalities, exactly
        /// an ordered index's range (equalities on a prefix, bounds on the next part),
        /// or only identifiers, so the rows found are not tested again.
        case exactKey
        /// Evaluated on model objects with `Predicate.evaluate`; the reason why.
        case fallback(String)
    }

    /// The fetched entity.
    public let entityName: String
    /// How candidate rows were found.
    public let accessPath: AccessPath
    /// How the predicate was applied.
    public let filtering: Filtering
    /// Whether the index order gave `sortBy` (so a limited fetch stopped early).
    public let sortedByIndex: Bool
    /// Rows the access path can produce, estimated before running.
    public let estimatedRows: Int
    /// Stored rows and unsaved models actually tested.
    public let rowsExamined: Int
    /// Models the fetch returns.
    public let resultCount: Int

    /// The engine's report of the same run: the text `osd query --explain` prints.
    let report: QueryReport

    /// For example `Trip: index (startDate) range, in sort order, filter answered by
    /// the index; estimated 50 rows, examined 50, returned 50`: the engine's report
    /// (as `osd query --explain` prints it), then the counts.
    public var description: String {
        "\(report); estimated \(estimatedRows) rows, examined \(rowsExamined), returned \(resultCount)"
    }
}

extension ModelContext {
    /// Runs `descriptor` as `fetch(_:)` would, without making model objects for
    /// its results, and tells how. *Additive*.
    public func explain<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> FetchExplanation {
        let query = try FetchQuery(descriptor, context: self)
        var examined = 0
        let results = query.window(try query.candidates(examined: &examined))
        let access: FetchExplanation.AccessPath
        let estimate: Int
        var sortedByIndex = false
        let chosen = query.chosenAccess
        switch chosen {
        case .scan:
            access = .scan
            estimate = query.version.tables[query.entity].count
        case let .unique(constraint, _, _):
            access = .uniqueIndex(query.layout.uniqueness[constraint].map { query.layout.attributes[$0].name })
            estimate = 1
        case let .rows(ids, _):
            access = .identifiers(ids.count)
            estimate = ids.count
        case let .spatial(plan):
            access = .spatialIndex(plan.slots.map { query.layout.attributes[$0].name })
            estimate = query.stored.estimate(plan)
        case let .index(plan):
            access = .index(plan.slots.map { query.layout.attributes[$0].name }, FetchExplanation.IndexLookup(plan.lookup))
            sortedByIndex = plan.providesOrder && !plan.orderIsPartial
            estimate = query.stored.estimate(plan)
        }
        let filtering: FetchExplanation.Filtering = switch query.filter {
        case .all: .none
        case .native: query.stored.isExact ? .exactKey : .native
        case let .fallback(reason): .fallback(reason)
        }
        let reported: QueryReport.Filtering = switch filtering {
        case .none: .none
        case .native: .onRows
        case .exactKey: .byIndex
        case let .fallback(reason): .onModels(reason)
        }
        let report = QueryReport(
            entity: query.layout.name, access: chosen.summary(of: query.version.schema.entities[query.entity]),
            inSortOrder: sortedByIndex, filtering: reported)
        return FetchExplanation(
            entityName: query.layout.name, accessPath: access, filtering: filtering, sortedByIndex: sortedByIndex,
            estimatedRows: estimate, rowsExamined: examined, resultCount: results.count, report: report)
    }
}

extension FetchExplanation.IndexLookup {
    init(_ lookup: IndexLookup) {
        self = switch lookup {
        case .equality: .equality
        case .range: .range
        case let .inList(count): .inList(count)
        case .ordered: .ordered
        }
    }
}
