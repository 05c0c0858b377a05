/// The tie-out's rows as the comparison adds events to them, one row per key and cause (`TieOutRow`; docs/tie-out.md,
/// "Reading the files").
struct TieOutRowSet {
    private(set) var rows: [TieOutRow.Key: TieOutRow] = [:]

    /// Adds one event's (or one part's) units, amounts and difference to the row of `key`.
    mutating func add(
        _ key: TieOutRow.Key,
        ledgerUnits: Int = 0,
        ledgerAmount: Int64 = 0,
        appleUnits: Int = 0,
        appleAmount: Int64 = 0,
        difference: Int64,
        detail: String?
    ) {
        var row = rows[key] ?? TieOutRow(key: key)
        row.ledgerUnits += ledgerUnits
        row.ledgerAmount += ledgerAmount
        row.appleUnits += appleUnits
        row.appleAmount += appleAmount
        if let sum = row.difference { row.difference = sum + difference }
        if let detail {
            row.events += 1
            if row.details.count < TieOutRow.detailLimit { row.details.append(detail) }
        }
        rows[key] = row
    }

    /// The rows in key order.
    var sorted: [TieOutRow] { rows.values.sorted { $0.key < $1.key } }
}
