import Foundation
import OpenSwiftDataStore

/// What a history predicate says about tokens and authors, read from its
/// expression tree so a fetch visits only the transactions in the token range,
/// in O(log n + those), and skips other authors before making any transaction.
///
/// Only the top-level conjunction is read: terms `token > t`, `token >= t`,
/// `token < t`, `token <= t`, `token == t` (either way round) and
/// `author == "name"`. When every term is one of those the scope is exact and
/// the predicate need not run; otherwise it still runs on each candidate.
struct HistoryPredicateScope {
    /// The first generation wanted (inclusive); 0 when unbounded.
    var lowest: UInt64 = 0
    /// Whether a term bounds the tokens from below (`>`, `>=`, `==`): the fetch
    /// then asks for history from a point, which deleted history can expire.
    var isBoundedBelow = false
    /// The last generation wanted (inclusive).
    var highest: UInt64 = .max
    /// Transactions by this author only (`.some(nil)`: with no author).
    var author: String??
    /// Whether the terms above are the whole predicate.
    var isExact = true

    init(_ predicate: Predicate<DefaultHistoryTransaction>?) {
        guard let predicate else { return }
        narrow(by: predicate.expression)
    }

    mutating func narrow(by expression: Any) {
        if let term = expression as? any HistoryPredicateTerm {
            term.narrow(&self)
        } else {
            isExact = false
        }
    }

    /// Whether the range holds no generation at all.
    var isEmpty: Bool { lowest > highest }

    /// Calls `body` with each transaction of `history` in the token range and by
    /// the author, oldest first, until it returns false. The predicate's other
    /// terms are the caller's to test.
    /// - Complexity: O(log n + transactions in the range)
    func forEachCandidate(in history: HistoryLog, _ body: (StoredTransaction) throws -> Bool) rethrows {
        guard !isEmpty else { return }
        try history.forEach(after: lowest == 0 ? nil : lowest - 1, through: highest) { stored in
            if let author, stored.author != author { return true }
            return try body(stored)
        }
    }

    /// Narrows to the generations `op token` keeps. (Transactions start at
    /// generation 1, so a token at or below 0 bounds nothing from below.)
    mutating func token(_ op: PredicateExpressions.ComparisonOperator, _ token: DefaultHistoryToken) {
        let id = Int64(token.id)
        if op == .greaterThan || op == .greaterThanOrEqual { isBoundedBelow = true }
        switch op {
        case .greaterThan: id == .max ? excludeAll() : (lowest = max(lowest, id < 0 ? 0 : UInt64(id) + 1))
        case .greaterThanOrEqual: lowest = max(lowest, id < 0 ? 0 : UInt64(id))
        case .lessThan: id <= 0 ? excludeAll() : (highest = min(highest, UInt64(id) - 1))
        case .lessThanOrEqual: id < 0 ? excludeAll() : (highest = min(highest, UInt64(id)))
        }
    }

    private mutating func excludeAll() {
        lowest = 1
        highest = 0
    }

    mutating func token(equalTo token: DefaultHistoryToken) {
        self.token(.greaterThanOrEqual, token)
        self.token(.lessThanOrEqual, token)
    }

    mutating func author(equalTo name: String?) {
        // Two different authors: nothing matches.
        if let author, author != name { excludeAll() }
        author = .some(name)
    }
}

/// A predicate node `HistoryPredicateScope` reads.
protocol HistoryPredicateTerm {
    func narrow(_ scope: inout HistoryPredicateScope)
}

private typealias TransactionVariable = PredicateExpressions.Variable<DefaultHistoryTransaction>
private typealias TokenPath = PredicateExpressions.KeyPath<TransactionVariable, DefaultHistoryToken>
private typealias AuthorPath = PredicateExpressions.KeyPath<TransactionVariable, String?>

extension PredicateExpressions.Conjunction: HistoryPredicateTerm {
    func narrow(_ scope: inout HistoryPredicateScope) {
        scope.narrow(by: lhs)
        scope.narrow(by: rhs)
    }
}

extension PredicateExpressions.Comparison: HistoryPredicateTerm {
    func narrow(_ scope: inout HistoryPredicateScope) {
        if let path = lhs as? TokenPath, path.keyPath == \DefaultHistoryTransaction.token,
           let value = rhs as? PredicateExpressions.Value<DefaultHistoryToken> {
            scope.token(op, value.value)
        } else if let path = rhs as? TokenPath, path.keyPath == \DefaultHistoryTransaction.token,
                  let value = lhs as? PredicateExpressions.Value<DefaultHistoryToken> {
            let flipped: PredicateExpressions.ComparisonOperator = switch op {
            case .lessThan: .greaterThan
            case .lessThanOrEqual: .greaterThanOrEqual
            case .greaterThan: .lessThan
            case .greaterThanOrEqual: .lessThanOrEqual
            }
            scope.token(flipped, value.value)
        } else {
            scope.isExact = false
        }
    }
}

extension PredicateExpressions.Equal: HistoryPredicateTerm {
    func narrow(_ scope: inout HistoryPredicateScope) {
        for (path, value) in [(lhs as Any, rhs as Any), (rhs as Any, lhs as Any)] {
            if let path = path as? TokenPath, path.keyPath == \DefaultHistoryTransaction.token,
               let value = value as? PredicateExpressions.Value<DefaultHistoryToken> {
                scope.token(equalTo: value.value)
                return
            }
            if let path = path as? AuthorPath, path.keyPath == \DefaultHistoryTransaction.author {
                if let value = value as? PredicateExpressions.Value<String?> {
                    scope.author(equalTo: value.value)
                    return
                }
                if let value = value as? PredicateExpressions.Value<String> {
                    scope.author(equalTo: value.value)
                    return
                }
            }
        }
        scope.isExact = false
    }
}
