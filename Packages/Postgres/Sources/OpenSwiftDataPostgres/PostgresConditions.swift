import OpenSwiftDataStore
import PostgresNIO
import Synchronization

/// The SQL conditions made of predicate templates, kept per template, so a fetch
/// whose predicate has a shape met before (a look-up or a range query in a loop, with
/// other values each time) only binds its values.
///
/// A predicate compiles to a template, its captured values as parameters, and the
/// compiler hands the same shape object for every predicate of one shape
/// (`StoreQueryCompiler.compileTemplate`). The condition's text depends on the template and
/// on a little of each value: its kind, whether a number is NaN, a Boolean's value, an
/// array's emptiness and element kinds (`signature(of:)`), so those are the key
/// with the shape's identity, which the kept entry holds the shape for, so it is never
/// reused. Making a
/// fetch's statement took about 35 µs under `perf` when every fetch made its condition,
/// 12 µs since (#43); a unique look-up cost the store about 40 µs more than
/// hand-written postgres-nio.
final class PostgresConditions: Sendable {
    /// The most conditions kept; past it they are all forgotten.
    static let limit = 1_000

    private struct Key: Hashable {
        let shape: ObjectIdentifier
        let entity: Int
        let signature: String
    }

    /// What a template's condition is, for values of one signature.
    private final class Made: @unchecked Sendable {
        /// Held so its identity, the key's, stays its own. Never read.
        let shape: AnyObject
        /// nil: SQL cannot state it (the context filters).
        let sql: String?
        let sources: [PostgresPredicate.BindSource]
        let bindKinds: String

        init(shape: AnyObject, sql: String?, sources: [PostgresPredicate.BindSource], bindKinds: String) {
            self.shape = shape
            self.sql = sql
            self.sources = sources
            self.bindKinds = bindKinds
        }
    }

    private let made = Mutex<[Key: Made]>([:])

    /// The condition `template` states with `parameters`, its bindings and their
    /// kinds; nil when SQL cannot state it.
    func condition(
        _ template: QueryExpression, parameters: [Value], shape: AnyObject?, entity: EntityDescription, entityIndex: Int
    ) throws -> (sql: String, binds: PostgresBindings, bindKinds: String)? {
        let key = shape.map { Key(shape: ObjectIdentifier($0), entity: entityIndex, signature: Self.signature(of: parameters)) }
        if let key, let found = made.withLock({ $0[key] }) {
            guard let sql = found.sql else { return nil }
            if let binds = try Self.bind(found.sources, parameters) { return (sql, binds, found.bindKinds) }
        }
        var predicate = PostgresPredicate(entity: entity, entityIndex: entityIndex, parameters: parameters)
        let sql = try predicate.condition(template)
        if let key, let shape {
            let entry = Made(shape: shape, sql: sql, sources: predicate.sources, bindKinds: predicate.bindKinds)
            made.withLock { made in
                if made.count >= Self.limit { made.removeAll() }
                made[key] = entry
            }
        }
        return sql.map { ($0, predicate.binds, predicate.bindKinds) }
    }

    /// `sources` bound to `parameters`; nil when a list no longer binds as one.
    private static func bind(_ sources: [PostgresPredicate.BindSource], _ parameters: [Value]) throws -> PostgresBindings? {
        var binds = PostgresBindings(capacity: sources.count)
        for source in sources {
            switch source {
            case let .parameter(i):
                try PostgresValues.append(parameters[i], to: &binds)
            case let .list(i):
                guard case let .array(values) = parameters[i], PostgresValues.appendList(values, to: &binds) else { return nil }
            case let .constant(value):
                try PostgresValues.append(value, to: &binds)
            case let .constantList(values):
                guard PostgresValues.appendList(values, to: &binds) else { return nil }
            }
        }
        return binds
    }

    /// What of each value a condition's text depends on: its kind, and whether a
    /// number or a date is NaN, a Boolean's value, an array's emptiness and the kind of array
    /// parameter it binds as.
    static func signature(of values: [Value]) -> String {
        var signature = ""
        signature.reserveCapacity(values.count)
        for value in values {
            switch value {
            case .null: signature.append("0")
            case let .bool(v): signature.append(v ? "T" : "F")
            case .int: signature.append("i")
            case .uint: signature.append("u")
            case let .double(v): signature.append(v.isNaN ? "N" : "d")
            case .string: signature.append("s")
            case let .date(v): signature.append(v.timeIntervalSinceReferenceDate.isNaN ? "N" : "t")
            case .data: signature.append("x")
            case .uuid: signature.append("g")
            case .url: signature.append("l")
            case .decimal: signature.append("n")
            case .reference: signature.append("r")
            case .references: signature.append("R")
            case .dictionary: signature.append("D")
            case .codable: signature.append("C")
            case let .array(elements):
                signature.append("[")
                signature.append(elements.isEmpty ? "e" : listKind(elements))
                signature.append("]")
            }
        }
        return signature
    }

    /// The kind an array binds as one array parameter (`PostgresValues.appendList`),
    /// or "-" when it does not.
    private static func listKind(_ elements: [Value]) -> Character {
        var kind: Character?
        for element in elements {
            let this: Character
            switch element {
            case .int, .reference: this = "i"
            case .double, .date: this = "d"
            case .string: this = "s"
            case .uuid: this = "u"
            default: return "-"
            }
            if kind == nil { kind = this } else if kind != this { return "-" }
        }
        return kind ?? "-"
    }
}
