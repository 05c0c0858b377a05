import CLibpq
import Foundation

/// The columns of a result: names, type OIDs and the index of each name (first match if duplicated).
///
/// Shared by every row of a result, and by every row `forEachRow` delivers for one statement: a streamed
/// report reads hundreds of thousands of single-row results of the same shape, and building the names and
/// their index once instead of per row is most of what reading such a row costs (docs/architecture.md,
/// "Database work per subscription").
final class PostgresColumns: Sendable {
    let names: [String]
    let typeOIDs: [UInt32]
    let index: [String: Int]

    init(names: [String], typeOIDs: [UInt32]) {
        self.names = names
        self.typeOIDs = typeOIDs
        var index: [String: Int] = [:]
        for (i, name) in names.enumerated() where index[name] == nil { index[name] = i }
        self.index = index
    }

    /// Whether `result` has exactly these columns (same count, names and types), so its rows can share them.
    func match(_ result: OpaquePointer) -> Bool {
        guard Int(PQnfields(result)) == names.count else { return false }
        for c in names.indices {
            guard UInt32(PQftype(result, Int32(c))) == typeOIDs[c],
                let name = PQfname(result, Int32(c)),
                strcmp(name, names[c]) == 0
            else { return false }
        }
        return true
    }

    /// The columns of `result`.
    static func of(_ result: OpaquePointer) -> PostgresColumns {
        let count = Int(PQnfields(result))
        var names: [String] = []
        var types: [UInt32] = []
        names.reserveCapacity(count)
        types.reserveCapacity(count)
        for c in 0..<count {
            names.append(PQfname(result, Int32(c)).map { String(cString: $0) } ?? "?column?")
            types.append(UInt32(PQftype(result, Int32(c))))
        }
        return PostgresColumns(names: names, typeOIDs: types)
    }
}
