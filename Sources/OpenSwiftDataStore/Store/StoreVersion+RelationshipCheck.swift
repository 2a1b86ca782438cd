/// Whether the two sides of every relationship agree, for `osd import` and
/// `osd verify`: rows written by a tool or a hand-edited export must hold the graph
/// a context would have saved, or a delete rule in the app acts on the wrong rows
/// (a cascade deleting a child another owner lists, say).
extension StoreVersion {
    /// What is wrong with the relationship graph, one line each naming the row and
    /// the relationship; empty when both sides of every relationship agree. At most
    /// `limit` lines.
    ///
    /// Checked: a to-many lists no row twice; a reference to a row that exists is
    /// answered by that row's inverse (a to-one naming the referrer, a to-many
    /// listing it). A reference to a row that does not exist is not a problem: a
    /// `noAction` delete rule leaves those, and fetches skip them.
    /// - Complexity: O(references), a hash lookup each for to-many inverses
    public func relationshipProblems(limit: Int = 100) -> [String] {
        var problems: [String] = []
        for (e, entity) in schema.entities.enumerated() {
            for (j, relationship) in entity.relationships.enumerated() {
                let slot = entity.slot(ofRelationship: j)
                let destination = schema.entityIndex(named: relationship.destination)
                let inverse = destination.flatMap { d in relationship.inverse.flatMap { schema.entities[d].slot(named: $0) } }
                // Each to-many inverse as sets, made once per relationship when needed.
                var inverseSets: [RowID: Set<RowID>] = [:]
                tables[e].forEach(slot: slot) { id, value in
                    guard problems.count < limit else { return }
                    let targets = value.referencedRows
                    if targets.count > 1, Set(targets).count != targets.count {
                        problems.append("\(entity.name) #\(id.rawValue): \(relationship.name) lists a row more than once")
                    }
                    guard let destination, let inverse else { return }
                    for target in targets {
                        guard let back = tables[destination].value(target, slot: inverse) else { continue }
                        let answers: Bool
                        switch back {
                        case let .reference(owner): answers = owner == id
                        case let .references(owners):
                            if owners.count < 8 {
                                answers = owners.contains(id)
                            } else {
                                if inverseSets[target] == nil { inverseSets[target] = Set(owners) }
                                answers = inverseSets[target]!.contains(id)
                            }
                        default: answers = false
                        }
                        if !answers {
                            let other = schema.entities[destination]
                            problems.append(
                                "\(entity.name) #\(id.rawValue): \(relationship.name) names \(other.name) #\(target.rawValue), whose \(relationship.inverse ?? "") does not name it back")
                            if problems.count >= limit { return }
                        }
                    }
                }
            }
        }
        return problems
    }
}
